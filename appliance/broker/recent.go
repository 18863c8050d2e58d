package broker

import "time"

// Closed is one session that ended, as the recently-closed listing shows
// it: who it was and why it ended.
type Closed struct {
	ID        uint64
	UID       string
	Callsign  string
	User      string
	Listener  string
	Address   string // IP address only
	Reason    Reason
	Connected time.Time
	Closed    time.Time
	Groups    uint64 // the groups its events went to: who could see it
}

// recentSize is how many closed sessions the broker remembers.
const recentSize = 256

// recentRing keeps the last recentSize closes; guarded by Broker.mu.
type recentRing struct {
	items [recentSize]Closed
	next  int
	n     int
}

func (r *recentRing) add(c Closed) {
	r.items[r.next] = c
	r.next = (r.next + 1) % recentSize
	r.n = min(r.n+1, recentSize)
}

// RecentlyClosed returns the sessions closed last (at most 256), newest
// first, those that never identified themselves included.
func (b *Broker) RecentlyClosed() []Closed {
	b.mu.Lock()
	defer b.mu.Unlock()
	r := &b.recent
	out := make([]Closed, 0, r.n)
	for i := 1; i <= r.n; i++ {
		out = append(out, r.items[(r.next-i+recentSize)%recentSize])
	}
	return out
}
