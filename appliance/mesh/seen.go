package mesh

import (
	"hash/maphash"
	"sync"
	"time"
)

// seenSet remembers hashes of datagrams for a while: those the bridge sent
// (to recognise them when the mesh hands them back) and those just
// received (to drop the copy that arrives on a second interface or group).
// It holds two generations of at most max hashes each: a hash is
// remembered between ttl and twice ttl, and memory stays bounded whatever
// a flood sends.
type seenSet struct {
	ttl time.Duration
	max int

	mu        sync.Mutex
	cur, prev map[uint64]struct{}
	since     time.Time // when cur began
}

func newSeenSet(ttl time.Duration, max int) *seenSet {
	return &seenSet{ttl: ttl, max: max, cur: map[uint64]struct{}{}, prev: map[uint64]struct{}{}}
}

// hashSeed is the seed of every datagram hash: one process-wide seed, so
// the hashes of what was sent and of what was received compare.
var hashSeed = maphash.MakeSeed()

func datagramHash(b []byte) uint64 { return maphash.Bytes(hashSeed, b) }

// rotate starts a new generation when the current one is old or full. mu held.
func (s *seenSet) rotate(now time.Time) {
	age := now.Sub(s.since)
	if age < s.ttl && len(s.cur) < s.max {
		return
	}
	if age >= 2*s.ttl {
		s.prev = map[uint64]struct{}{} // both generations are out of date
	} else {
		s.prev = s.cur
	}
	s.cur, s.since = map[uint64]struct{}{}, now
}

// has reports whether h was added within the last ttl (at least).
func (s *seenSet) has(h uint64, now time.Time) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.rotate(now)
	_, a := s.cur[h]
	_, b := s.prev[h]
	return a || b
}

// add remembers h and reports whether it was new.
func (s *seenSet) add(h uint64, now time.Time) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.rotate(now)
	if _, ok := s.cur[h]; ok {
		return false
	}
	if _, ok := s.prev[h]; ok {
		return false
	}
	s.cur[h] = struct{}{}
	return true
}
