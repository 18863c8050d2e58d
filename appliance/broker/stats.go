package broker

import "sync/atomic"

// counters are the broker's exported counters; all fields are safe for
// concurrent use.
type counters struct {
	joined      atomic.Uint64
	published   atomic.Uint64
	delivered   atomic.Uint64
	directed    atomic.Uint64
	coalesced   atomic.Uint64
	oversize    atomic.Uint64
	impostor    atomic.Uint64
	repeated    atomic.Uint64
	departures  atomic.Uint64
	queuedBytes atomic.Int64 // bytes queued to sessions now (estimate)
	closed      [numReasons]atomic.Uint64
	in, out     [numClasses]atomic.Uint64 // events published, envelopes delivered, by class
}

// Stats is a snapshot of the broker's counters.
type Stats struct {
	Sessions    int               // open now
	Joined      uint64            // sessions ever joined
	Published   uint64            // events routed (control types excluded)
	Delivered   uint64            // envelopes queued to sessions
	Directed    uint64            // events routed by <marti><dest>
	Coalesced   uint64            // queued SAs replaced by a newer SA of the same uid
	Oversize    uint64            // events refused at publish: larger than MaxEventBytes encoded
	Impostor    uint64            // position reports refused: uid bound to another identity
	Repeated    uint64            // retained events re-broadcast
	Departures  uint64            // t-x-d-d sent for clients that left
	QueuedBytes int64             // bytes held for sessions now: the broadcast log and what was sent to one (estimate)
	Closed      map[Reason]uint64 // closed sessions by reason
	In, Out     map[Class]uint64  // events published and envelopes delivered, by class
}

// Stats returns the counters.
func (b *Broker) Stats() Stats {
	st := Stats{
		Sessions:    b.list.Load().len(),
		Joined:      b.stats.joined.Load(),
		Published:   b.stats.published.Load(),
		Delivered:   b.stats.delivered.Load(),
		Directed:    b.stats.directed.Load(),
		Coalesced:   b.stats.coalesced.Load(),
		Oversize:    b.stats.oversize.Load(),
		Impostor:    b.stats.impostor.Load(),
		Repeated:    b.stats.repeated.Load(),
		Departures:  b.stats.departures.Load(),
		QueuedBytes: b.stats.queuedBytes.Load() + b.logBytes(),
		Closed:      map[Reason]uint64{},
		In:          map[Class]uint64{},
		Out:         map[Class]uint64{},
	}
	for c := range numClasses {
		st.In[c], st.Out[c] = b.stats.in[c].Load(), b.stats.out[c].Load()
	}
	for r := ReasonNone + 1; r < numReasons; r++ {
		if n := b.stats.closed[r].Load(); n > 0 {
			st.Closed[r] = n
		}
	}
	return st
}

// logBytes is what the broadcast log holds now.
func (b *Broker) logBytes() int64 {
	_, bytes := b.events.held()
	return int64(bytes)
}
