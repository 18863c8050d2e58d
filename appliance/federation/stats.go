package federation

import (
	"sort"
	"sync/atomic"

	"outpost/appliance/cotsession"
)

// fedStats are one federate's counters, kept across its links (plain
// atomics, read when metrics are scraped).
type fedStats struct {
	links, connected                                      atomic.Int64
	in, published, out, ignored                           atomic.Uint64
	dropQueue, dropLoop, dropHops, dropDup, dropMalformed atomic.Uint64
	dropSize, dropContacts, hopLimited, reconnects        atomic.Uint64
	lastContact                                           atomic.Int64 // unix seconds
}

// FederateStats is a snapshot of one federate's counters.
type FederateStats struct {
	Name      string `json:"name"`
	Connected bool   `json:"connected"` // a link is up now
	Links     int64  `json:"links"`     // links made since start
	EventsIn  uint64 `json:"eventsIn"`  // events received
	Published uint64 `json:"published"` // of them, published to local clients
	EventsOut uint64 `json:"eventsOut"` // events sent
	// Events dropped, by reason: the queue to the federate was full
	// (outbound); received: this server was already in their provenance (a
	// loop), their hops were spent, a copy received lately, not a valid
	// event, larger than clients can receive, too many remote contacts.
	DroppedQueue     uint64 `json:"droppedQueue"`
	DroppedLoop      uint64 `json:"droppedLoop"`
	DroppedHops      uint64 `json:"droppedHops"`
	DroppedDuplicate uint64 `json:"droppedDuplicate"`
	DroppedMalformed uint64 `json:"droppedMalformed"`
	DroppedSize      uint64 `json:"droppedSize"`
	DroppedContacts  uint64 `json:"droppedContacts"`
	HopLimited       uint64 `json:"hopLimited"`  // events not sent on: their next hop would pass their limit
	Ignored          uint64 `json:"ignored"`     // messages without an event (contact entries alone)
	Reconnects       uint64 `json:"reconnects"`  // outbound connections made again after a failure
	LastContact      int64  `json:"lastContact"` // unix seconds of the last message received; 0 never
}

func (f *Federation) statsOf(name string) *fedStats {
	f.mu.Lock()
	defer f.mu.Unlock()
	s := f.stats[name]
	if s == nil {
		s = &fedStats{}
		f.stats[name] = s
	}
	return s
}

// Stats returns the counters of every federate known since start, by name.
func (f *Federation) Stats() []FederateStats {
	f.mu.Lock()
	defer f.mu.Unlock()
	out := make([]FederateStats, 0, len(f.stats))
	for name, s := range f.stats {
		out = append(out, FederateStats{Name: name, Connected: s.connected.Load() > 0, Links: s.links.Load(),
			EventsIn: s.in.Load(), Published: s.published.Load(), EventsOut: s.out.Load(),
			DroppedQueue: s.dropQueue.Load(), DroppedLoop: s.dropLoop.Load(), DroppedHops: s.dropHops.Load(),
			DroppedDuplicate: s.dropDup.Load(), DroppedMalformed: s.dropMalformed.Load(), DroppedSize: s.dropSize.Load(),
			DroppedContacts: s.dropContacts.Load(), HopLimited: s.hopLimited.Load(), Ignored: s.ignored.Load(),
			Reconnects: s.reconnects.Load(), LastContact: s.lastContact.Load()})
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out
}

// SessionStats are the counters of the links' CoT sessions (cotsession):
// events the relay refused (too large, a uid bound to a local
// certificate), malformed ones, pacing.
func (f *Federation) SessionStats() cotsession.Stats { return f.drv.Stats() }
