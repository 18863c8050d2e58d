package federation

import (
	"slices"
	"sort"
	"sync/atomic"

	"outpost/appliance/cotsession"
	"outpost/appliance/logx"
)

// fedStats are one federate's counters, kept across its links (plain
// atomics, read when metrics are scraped).
type fedStats struct {
	links, connected                                      atomic.Int64
	in, published, out, ignored                           atomic.Uint64
	dropQueue, dropLoop, dropHops, dropDup, dropMalformed atomic.Uint64
	dropSize, dropContacts, hopLimited, reconnects        atomic.Uint64
	dropGroup                                             atomic.Uint64
	spooled, replayed, dropSpool                          atomic.Uint64
	// ROL (rol_send.go, rol_receive.go) and contact entries (contacts.go).
	rolIn, rolOut, rolApplied, rolIgnored, rolFailed  atomic.Uint64
	rolDropMalformed, rolDropSize, rolDropLoop        atomic.Uint64
	rolDropGroup                                      atomic.Uint64 // its federate groups map to no local group
	rolDropDup, rolDropQueue, filesStored, filesKnown atomic.Uint64
	contactsIn, contactsOut                           atomic.Uint64
	lastContact                                       atomic.Int64 // unix seconds
	downAt                                            atomic.Int64 // unix ms: when its last link ended (0: none yet)
	lastErr                                           atomic.Pointer[string]
}

// maxLastError bounds a federate's last error (gRPC's wrapping of a
// handshake's failure alone takes about 120 bytes).
const maxLastError = 400

// setError records why the federate's last link ended or failed.
func (s *fedStats) setError(err error) {
	msg := logx.ClipN(err.Error(), maxLastError)
	s.lastErr.Store(&msg)
}

// FederateStats is a snapshot of one federate's counters.
type FederateStats struct {
	Name string `json:"name"`
	// Source: "config" (the configuration's federates), "managed" (the
	// management API's and command line's), "inbound" (a federate that
	// connected, known by its certificate).
	Source  string `json:"source"`
	Address string `json:"address"` // where it is connected to; "" inbound only
	Enabled bool   `json:"enabled"`
	// State: "connected", "disconnected", "disabled" (managed, off), "no
	// CA" (managed, nothing trusted yet).
	State     string `json:"state"`
	LastError string `json:"lastError"` // why its last link ended or failed; "" none
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
	// DroppedGroup: received events whose federate groups map to no local
	// group (docs/federation.md "Groups").
	DroppedGroup uint64 `json:"droppedGroup"`
	HopLimited   uint64 `json:"hopLimited"` // events not sent on: their next hop would pass their limit
	Ignored      uint64 `json:"ignored"`    // messages without an event (contact entries alone)
	Reconnects   uint64 `json:"reconnects"` // outbound connections made again after a failure
	// The persistent outbound queue (an outbound federate's link down):
	// events queued, sent from it when the link returned, dropped from it
	// (older or more than its bounds, or not stored).
	Queued        uint64 `json:"queued"`
	QueueSent     uint64 `json:"queueSent"`
	DroppedQueued uint64 `json:"droppedQueued"`
	LastContact   int64  `json:"lastContact"` // unix seconds of the last message received; 0 never
	// Missions over ROL (docs/federation.md "Missions over ROL"): messages
	// received, sent, statements applied, valid ones not applied here
	// (another resource or change, a mission that is not public), failed
	// (the store refused them); dropped: malformed, too large, looping or
	// hop-exhausted, a copy received lately, the queue to the federate
	// full. Files stored from a federate, and those already kept (stored
	// once).
	ROLIn               uint64 `json:"rolIn"`
	ROLOut              uint64 `json:"rolOut"`
	ROLApplied          uint64 `json:"rolApplied"`
	ROLIgnored          uint64 `json:"rolIgnored"`
	ROLFailed           uint64 `json:"rolFailed"`
	ROLDroppedMalformed uint64 `json:"rolDroppedMalformed"`
	ROLDroppedSize      uint64 `json:"rolDroppedSize"`
	ROLDroppedLoop      uint64 `json:"rolDroppedLoop"`
	ROLDroppedDuplicate uint64 `json:"rolDroppedDuplicate"`
	ROLDroppedQueue     uint64 `json:"rolDroppedQueue"`
	ROLDroppedGroup     uint64 `json:"rolDroppedGroup"`
	FilesStored         uint64 `json:"filesStored"`
	FilesKnown          uint64 `json:"filesKnown"`
	// Contact entries (ContactListEntry) received and sent.
	ContactsIn  uint64 `json:"contactsIn"`
	ContactsOut uint64 `json:"contactsOut"`
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
	man := f.managedState()
	f.mu.Lock()
	defer f.mu.Unlock()
	out := make([]FederateStats, 0, len(f.stats))
	for name, s := range f.stats {
		st := FederateStats{Name: name, Source: "inbound", Enabled: true, State: "disconnected"}
		if i := slices.IndexFunc(f.cfg.Federates, func(o Outbound) bool { return o.Name == name }); i >= 0 {
			st.Source, st.Address = "config", f.cfg.Federates[i].Address
		} else if m, ok := man[name]; ok {
			st.Source, st.Address, st.Enabled = "managed", m.Address, m.Enabled
			switch {
			case !m.Enabled:
				st.State = "disabled"
			case m.pool == nil:
				st.State = "no CA"
			}
		}
		if e := s.lastErr.Load(); e != nil {
			st.LastError = *e
		}
		connected := s.connected.Load() > 0
		if connected {
			st.State = "connected"
		}
		out = append(out, FederateStats{Name: name, Source: st.Source, Address: st.Address, Enabled: st.Enabled,
			State: st.State, LastError: st.LastError, Connected: connected, Links: s.links.Load(),
			EventsIn: s.in.Load(), Published: s.published.Load(), EventsOut: s.out.Load(),
			DroppedQueue: s.dropQueue.Load(), DroppedLoop: s.dropLoop.Load(), DroppedHops: s.dropHops.Load(),
			DroppedDuplicate: s.dropDup.Load(), DroppedMalformed: s.dropMalformed.Load(), DroppedSize: s.dropSize.Load(),
			DroppedContacts: s.dropContacts.Load(), DroppedGroup: s.dropGroup.Load(), HopLimited: s.hopLimited.Load(), Ignored: s.ignored.Load(),
			Reconnects: s.reconnects.Load(), LastContact: s.lastContact.Load(),
			Queued: s.spooled.Load(), QueueSent: s.replayed.Load(), DroppedQueued: s.dropSpool.Load(),
			ROLIn: s.rolIn.Load(), ROLOut: s.rolOut.Load(), ROLApplied: s.rolApplied.Load(), ROLIgnored: s.rolIgnored.Load(),
			ROLFailed: s.rolFailed.Load(), ROLDroppedMalformed: s.rolDropMalformed.Load(), ROLDroppedSize: s.rolDropSize.Load(),
			ROLDroppedLoop: s.rolDropLoop.Load(), ROLDroppedDuplicate: s.rolDropDup.Load(), ROLDroppedQueue: s.rolDropQueue.Load(),
			ROLDroppedGroup: s.rolDropGroup.Load(),
			FilesStored:     s.filesStored.Load(), FilesKnown: s.filesKnown.Load(), ContactsIn: s.contactsIn.Load(), ContactsOut: s.contactsOut.Load()})
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out
}

// SessionStats are the counters of the links' CoT sessions (cotsession):
// events the relay refused (too large, a uid bound to a local
// certificate), malformed ones, pacing.
func (f *Federation) SessionStats() cotsession.Stats { return f.drv.Stats() }
