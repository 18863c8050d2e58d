package broker

import (
	"sync"
	"time"

	"outpost/appliance/cot"
)

// Envelope is one event on its way to one or more sessions. The event is
// shared and read-only; its encodings are produced at most once per wire
// format, by whichever writer needs them first, and shared by every
// recipient (architecture.md "encode once per wire format, lazily").
type Envelope struct {
	Event *cot.Event

	// SwitchFormat tells the session's writer to speak TAK protocol v1 from
	// the byte after this envelope on (protocol.md §4: the t-x-takp-r reply). Only
	// set on envelopes sent to a single session.
	SwitchFormat bool

	// Directed: the sender addressed the event to chosen recipients
	// (<marti><dest>, protocol.md §6), so it must not be widened to others
	// (observers that replay events read it). Set by Publish.
	Directed bool

	// Missions names the missions the sender addressed the event to
	// (<marti><dest mission>), for observers that record it into them.
	// Set by Publish.
	Missions []string

	seq    uint64    // publish sequence (0: not published through Publish)
	groups uint64    // the groups it is for (its sender's IN groups); set before it is queued, never after
	at     time.Time // when a session's position report was received, or the event retained (LiveEvents); set likewise
	size   int       // queue accounting estimate, bytes
	sa     bool      // a position report: may be coalesced per uid (newest wins)
	class  Class     // for the counters

	xmlOnce sync.Once
	xml     []byte

	protoOnce sync.Once
	frame     []byte
	protoErr  error
}

// NewEnvelope wraps an event for delivery.
func NewEnvelope(ev *cot.Event) *Envelope {
	sa := ev.IsSA()
	return &Envelope{Event: ev, size: estimateSize(ev), sa: sa, class: classOf(ev.Type, sa)}
}

// estimateSize approximates the encoded size without encoding: header,
// point and wrapper are about 300 bytes, the detail is carried verbatim.
func estimateSize(ev *cot.Event) int {
	return 300 + len(ev.UID) + len(ev.Type) + len(ev.Detail.XML)
}

// XML returns the event as an XML stream message (declaration, newline,
// event; protocol.md §2). Safe for concurrent use; encoded once.
func (e *Envelope) XML() []byte {
	e.xmlOnce.Do(func() { e.xml = e.Event.AppendXML(make([]byte, 0, e.size+128)) })
	return e.xml
}

// ProtoFrame returns the event as one TAK protocol v1 stream frame
// (protocol.md §3). Safe for concurrent use; encoded once.
func (e *Envelope) ProtoFrame() ([]byte, error) {
	e.protoOnce.Do(func() {
		msg, err := e.Event.MarshalProto()
		if err != nil {
			e.protoErr = err
			return
		}
		e.frame = cot.AppendStreamFrame(make([]byte, 0, len(msg)+6), msg)
	})
	return e.frame, e.protoErr
}

// Groups is the mask of the groups the envelope was sent to: a session
// reads it when its OUT groups meet them (access.md "Groups").
func (e *Envelope) Groups() uint64 { return e.groups }

// Size is the queue accounting estimate of the envelope, in bytes.
func (e *Envelope) Size() int { return e.size }
