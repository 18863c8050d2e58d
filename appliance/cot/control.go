package cot

import (
	"bytes"
	"strings"
	"time"

	"github.com/google/uuid"
)

// Control and keepalive event types (protocol.md §4, §5).
const (
	TypePing      = "t-x-c-t"
	TypePong      = "t-x-c-t-r"
	TypeDelete    = "t-x-d-d"
	TypeTakOffer  = "t-x-takp-v"
	TypeTakQuery  = "t-x-takp-q"
	TypeTakAnswer = "t-x-takp-r"
)

// IsControl reports whether events of type typ are consumed by the server
// and never relayed (protocol.md §5): t-x-c-t, t-x-c-t-r, t-x-takp-*, t-x-c-f,
// t-x-c-m, t-x-c-i-e, t-x-c-i-d and t-b*.
func IsControl(typ string) bool {
	switch typ {
	case TypePing, TypePong, "t-x-c-f", "t-x-c-m", "t-x-c-i-e", "t-x-c-i-d":
		return true
	}
	return strings.HasPrefix(typ, "t-x-takp-") || strings.HasPrefix(typ, "t-b")
}

// IsPing reports whether typ is a client ping, t-x-c-t exactly (protocol.md §5).
func IsPing(typ string) bool { return typ == TypePing }

// IsSA reports whether e is a client's report of its own position
// (protocol.md §1 "Position reports and client identity"): an a-* event
// with a <contact> that has a non-empty callsign, that either carries what
// only a client's own report carries (<contact endpoint>, <takv>,
// <__group>) or does not carry the marks of an object a user placed (a
// parent link, relation p-p, or <archive/>). ATAK's markers have a
// callsign too; they must not take over the identity of their sender.
func (e *Event) IsSA() bool {
	d := &e.Detail
	if !strings.HasPrefix(e.Type, "a-") || d.Contact == nil || d.Contact.Callsign == "" {
		return false
	}
	if d.Contact.Endpoint != "" || d.Takv != nil || d.Group != nil {
		return true
	}
	return !e.placed()
}

// placed reports whether e carries the marks of an object a user placed on
// the map: a link to its parent (relation p-p, the producer) or <archive/>.
func (e *Event) placed() bool {
	for _, l := range e.Detail.Links {
		if l.Relation == "p-p" {
			return true
		}
	}
	return bytes.Contains(e.Detail.XML, []byte("<archive"))
}

// serverEvent is the skeleton of the events the server builds: version,
// times (millisecond precision, UTC), stale after ttl, a zero point with the
// given ce/le.
func serverEvent(uid, typ, how string, now time.Time, ttl time.Duration, unknown float64) *Event {
	now = now.UTC().Truncate(time.Millisecond)
	return &Event{
		Version: "2.0",
		UID:     uid,
		Type:    typ,
		How:     how,
		Time:    now,
		Start:   now,
		Stale:   now.Add(ttl),
		Point:   Point{Ce: unknown, Le: unknown},
	}
}

// NewPong returns the answer to a ping (protocol.md §5): type t-x-c-t-r, uid
// takPong, how h-g-i-g-o, stale now+20s, point 0 0 0 with unknown ce/le.
func NewPong(now time.Time) *Event {
	return serverEvent("takPong", TypePong, "h-g-i-g-o", now, 20*time.Second, Unknown)
}

// NewDeparture returns the event announcing that the client uid, whose last
// SA had type typ, has disconnected (protocol.md §5): t-x-d-d with a random uid,
// how h-g-i-g-o, stale now+20s and <link uid type relation="p-p"/>.
func NewDeparture(uid, typ string, now time.Time) *Event {
	e := serverEvent(uuid.NewString(), TypeDelete, "h-g-i-g-o", now, 20*time.Second, Unknown)
	x := appendAttr(make([]byte, 0, 64+len(uid)+len(typ)), `<link uid="`, uid)
	x = appendAttr(x, ` type="`, typ)
	e.Detail.XML = append(x, ` relation="p-p"/>`...)
	e.Detail.Links = []Link{{UID: uid, Type: typ, Relation: "p-p"}}
	return e
}

// WithoutMarti returns a copy of e without the <marti> routing element
// (protocol.md §6: removed before forwarding), or e itself when it has none. The
// copy shares everything else with e.
func (e *Event) WithoutMarti() *Event {
	if e.Detail.Marti == nil && !bytes.Contains(e.Detail.XML, []byte("<marti")) {
		return e
	}
	c := *e
	c.Detail.Marti = nil
	c.Detail.XML = removeChildren(e.Detail.XML, "marti")
	return &c
}

// removeChildren returns detail content without its children called name.
// Content that does not parse is returned unchanged (Detail.XML is
// well-formed by construction).
func removeChildren(content []byte, name string) []byte {
	t := newTokenizer(content)
	defer t.release()
	out := make([]byte, 0, len(content))
	last := 0
	for {
		if err := t.next(); err != nil {
			return content
		}
		switch t.kind {
		case tokEOF:
			if len(t.stack) > 0 {
				return content
			}
			out = append(out, content[last:]...)
			return trimBlank(out)
		case tokStart:
			if t.depth != 0 || !t.is(t.name, name) {
				continue
			}
			start := t.start
			if !t.selfClose {
				for {
					if err := t.next(); err != nil || t.kind == tokEOF {
						return content
					}
					if t.kind == tokEnd && t.depth == 0 {
						break
					}
				}
			}
			out = append(out, content[last:start]...)
			last = t.pos
		}
	}
}

// WithoutDetail returns e without the children of <detail> called name (e
// itself when there are none): federation sends <track> in fields of its
// own (docs/federation.md "Events").
func (e *Event) WithoutDetail(name string) *Event {
	if !bytes.Contains(e.Detail.XML, []byte("<"+name)) {
		return e
	}
	c := *e
	c.Detail.XML = removeChildren(e.Detail.XML, name)
	return &c
}
