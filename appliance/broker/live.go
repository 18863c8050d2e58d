package broker

import (
	"time"

	"outpost/appliance/cot"
)

// Live is one event of the broker's live state: the latest position report
// of an open session, or a retained event. The client API answers from it
// before the store's history writer has written the event.
type Live struct {
	Event  *cot.Event // read-only
	XML    []byte     // its XML message (declaration, newline, event); read-only
	Groups uint64     // the groups it was sent to: readers of those see it
	At     time.Time  // when it was received (a report) or retained
}

// LiveEvents returns the latest position report of every open session that
// sent one and every retained event, or only those of uid when uid is not
// "". A uid may come more than once (a client reconnecting, a retained
// event and a report of the same uid); the caller picks the newest it may
// see. The list is as long as the sessions and retained events are many.
func (b *Broker) LiveEvents(uid string) []Live {
	var out []Live
	add := func(env *Envelope) {
		if uid == "" || env.Event.UID == uid {
			out = append(out, Live{Event: env.Event, XML: env.XML(), Groups: env.groups, At: env.at})
		}
	}
	b.list.Load().each(func(s *Session) {
		if env := s.lastSA.Load(); env != nil {
			add(env)
		}
	})
	for _, env := range b.retain.envelopes() {
		add(env)
	}
	return out
}
