package broker

import (
	"sync"
	"sync/atomic"
)

// counters are the broker's exported counters; all fields are safe for
// concurrent use.
type counters struct {
	joined    atomic.Uint64
	published atomic.Uint64
	delivered atomic.Uint64
	directed  atomic.Uint64
	coalesced atomic.Uint64

	mu     sync.Mutex // mu guards closed
	closed map[string]uint64
}

func (c *counters) countClose(reason string) {
	c.mu.Lock()
	if c.closed == nil {
		c.closed = map[string]uint64{}
	}
	c.closed[reason]++
	c.mu.Unlock()
}

// Stats is a snapshot of the broker's counters.
type Stats struct {
	Sessions  int               // open now
	Joined    uint64            // sessions ever joined
	Published uint64            // events routed (control types excluded)
	Delivered uint64            // envelopes queued to sessions
	Directed  uint64            // events routed by <marti><dest>
	Coalesced uint64            // queued SAs replaced by a newer SA of the same uid
	Closed    map[string]uint64 // closed sessions by reason
}

// Stats returns the counters.
func (b *Broker) Stats() Stats {
	st := Stats{
		Sessions:  len(*b.list.Load()),
		Joined:    b.stats.joined.Load(),
		Published: b.stats.published.Load(),
		Delivered: b.stats.delivered.Load(),
		Directed:  b.stats.directed.Load(),
		Coalesced: b.stats.coalesced.Load(),
		Closed:    map[string]uint64{},
	}
	b.stats.mu.Lock()
	for k, v := range b.stats.closed {
		st.Closed[k] = v
	}
	b.stats.mu.Unlock()
	return st
}
