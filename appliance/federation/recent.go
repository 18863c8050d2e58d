package federation

import (
	"encoding/binary"
	"hash/maphash"
	"math"
	"sync"
	"time"

	"outpost/appliance/cot"
	"outpost/appliance/federation/fedproto"
)

// origin is what a received event carried: the servers it passed through
// and its hops, kept to send it on (docs/federation.md "Loops and hops").
type origin struct {
	provenance []*fedproto.FederateProvenance
	maxHops    int64
	hops       int64
}

// recent remembers the events received from federates for a while, by a
// key of what identifies one event (eventKey): a second copy (the same
// event over another path of a loop) is dropped, and an event sent on to
// another federate takes its provenance and hops from here. Two
// generations of at most max keys each bound the memory whatever a
// federate sends.
type recent struct {
	ttl time.Duration
	max int

	mu        sync.Mutex
	cur, prev map[uint64]*origin
	since     time.Time
}

func newRecent(ttl time.Duration, max int) *recent {
	return &recent{ttl: ttl, max: max, cur: map[uint64]*origin{}, prev: map[uint64]*origin{}}
}

func (r *recent) rotate(now time.Time) {
	age := now.Sub(r.since)
	if age < r.ttl && len(r.cur) < r.max {
		return
	}
	if age >= 2*r.ttl {
		r.prev = map[uint64]*origin{}
	} else {
		r.prev = r.cur
	}
	r.cur, r.since = map[uint64]*origin{}, now
}

// add remembers o under k and reports whether k was new.
func (r *recent) add(k uint64, o *origin, now time.Time) bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.rotate(now)
	if _, ok := r.cur[k]; ok {
		return false
	}
	if _, ok := r.prev[k]; ok {
		return false
	}
	r.cur[k] = o
	return true
}

// get returns what k was received with (nil: not received from a federate
// lately, so a local event).
func (r *recent) get(k uint64, now time.Time) *origin {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.rotate(now)
	if o, ok := r.cur[k]; ok {
		return o
	}
	return r.prev[k]
}

var keySeed = maphash.MakeSeed()

// eventKey identifies one event across servers: its uid, type, times and
// point survive the conversions of every hop, where its detail's bytes may
// not (another server re-encodes it).
func eventKey(ev *cot.Event) uint64 {
	var h maphash.Hash
	h.SetSeed(keySeed)
	h.WriteString(ev.UID)
	h.WriteByte(0)
	h.WriteString(ev.Type)
	h.WriteByte(0)
	var b [8 * 5]byte
	binary.LittleEndian.PutUint64(b[0:], uint64(ev.Time.UnixMilli()))
	binary.LittleEndian.PutUint64(b[8:], uint64(ev.Stale.UnixMilli()))
	binary.LittleEndian.PutUint64(b[16:], math.Float64bits(ev.Point.Lat))
	binary.LittleEndian.PutUint64(b[24:], math.Float64bits(ev.Point.Lon))
	binary.LittleEndian.PutUint64(b[32:], uint64(ev.Start.UnixMilli()))
	h.Write(b[:])
	return h.Sum64()
}

// remote is where a remote contact's position reports came from: a
// contact's replayed position (Broker.Join's replay to another link, maybe
// long after the memory of recent events let it go) still goes out with
// its provenance, so it never comes back as if it were local.
type remote struct {
	l *link
	o *origin
}

// rememberRemote records the origin of uid's latest position report,
// received on l.
func (f *Federation) rememberRemote(uid string, l *link, o *origin) {
	f.remoteMu.Lock()
	f.remote[uid] = remote{l, o}
	f.remoteMu.Unlock()
}

// forgetRemote drops uid's origin when l's contact for it is gone.
func (f *Federation) forgetRemote(uid string, l *link) {
	f.remoteMu.Lock()
	if r, ok := f.remote[uid]; ok && r.l == l {
		delete(f.remote, uid)
	}
	f.remoteMu.Unlock()
}

// remoteOrigin is the origin of uid's latest position report when uid is
// a remote contact (nil otherwise).
func (f *Federation) remoteOrigin(uid string) *origin {
	f.remoteMu.Lock()
	defer f.remoteMu.Unlock()
	return f.remote[uid].o
}
