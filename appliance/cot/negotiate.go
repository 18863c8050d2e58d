package cot

import (
	"sync"
	"time"
)

// supportedVersion is the only TAK protocol version besides XML (protocol.md §3).
const supportedVersion = 1

// Negotiator is the server side of TAK protocol negotiation on one
// streaming connection (protocol.md §4). Its methods are safe for concurrent use
// (the reader and writer of a connection may both call it).
type Negotiator struct {
	uid string

	mu       sync.Mutex // mu guards offered and switched
	offered  bool
	switched bool
}

// NewNegotiator returns a negotiator whose control events all use serverUID.
func NewNegotiator(serverUID string) *Negotiator {
	return &Negotiator{uid: serverUID}
}

// controlEvent builds a negotiation event (protocol.md §4): the server uid, how
// m-g, point 0 0 0 with ce/le 999999, stale now+60s.
func (n *Negotiator) controlEvent(typ string, now time.Time, detail string, ctl TakControl) *Event {
	e := serverEvent(n.uid, typ, "m-g", now, 60*time.Second, 999999)
	e.Detail.XML = []byte(detail)
	e.Detail.TakControl = &ctl
	return e
}

// Offer returns the t-x-takp-v event offering protocol version 1, to be
// sent once after connect and the SA replay (protocol.md §4 step 2); nil on every
// later call.
func (n *Negotiator) Offer(now time.Time) *Event {
	n.mu.Lock()
	defer n.mu.Unlock()
	if n.offered {
		return nil
	}
	n.offered = true
	return n.controlEvent(TypeTakOffer, now,
		`<TakControl><TakProtocolSupport version="1"/></TakControl>`,
		TakControl{SupportVersion: supportedVersion})
}

// Handle processes a t-x-takp-q request from the client (protocol.md §4 steps 3
// and 4). It returns the t-x-takp-r reply, with status true when version 1
// was requested and the connection had not switched yet (false otherwise),
// and whether the connection switches to protocol v1: the writer right
// after the reply, the reader right after the request. ok is false, and
// nothing changes, when ev is not a takp request.
func (n *Negotiator) Handle(ev *Event, now time.Time) (reply *Event, switchTo bool, ok bool) {
	if ev == nil || ev.Type != TypeTakQuery {
		return nil, false, false
	}
	requested := 0
	if ev.Detail.TakControl != nil {
		requested = ev.Detail.TakControl.RequestVersion
	}
	n.mu.Lock()
	status := requested == supportedVersion && !n.switched
	if status {
		n.switched = true
	}
	n.mu.Unlock()
	detail := `<TakControl><TakResponse status="false"/></TakControl>`
	if status {
		detail = `<TakControl><TakResponse status="true"/></TakControl>`
	}
	return n.controlEvent(TypeTakAnswer, now, detail, TakControl{Response: &status}), status, true
}
