package broker

import (
	"errors"

	"outpost/appliance/cot"
)

// Identify gives s the identity of a client that is known without a
// position report: a federate's contact entry (docs/federation.md
// "Contacts"). It binds uid and callsign as an SA would (the same checks,
// the connected-client registry lists it) and publishes nothing. A session
// that already reported a position as uid keeps its SA type.
func (s *Session) Identify(uid, callsign string) error {
	if uid == "" || callsign == "" {
		return errors.New("broker: identify: uid and callsign are required")
	}
	typ := "a-f-G-U-C"
	if cur := s.ident.Load(); cur != nil && cur.UID == uid && cur.SAType != "" {
		typ = cur.SAType
	}
	ev := &cot.Event{UID: uid, Type: typ}
	ev.Detail.Contact = &cot.Contact{Callsign: callsign}
	return s.b.identify(s, &Envelope{Event: ev, sa: true})
}
