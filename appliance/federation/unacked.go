package federation

import (
	"sync"
	"time"

	"outpost/appliance/federation/fedproto"
)

// What an outbound link sent that the federate is not yet known to hold
// (docs/federation.md "Disruption tolerance"). gRPC streams carry no
// acknowledgement per event, and a link that goes silent (a radio out of
// range, a cable pulled) lets its writer go on filling the connection for
// as long as TCP takes to give up. A HealthCheck answered on the same
// connection is the acknowledgement there is: its request went out after
// every event written before it, on the same TCP stream, so an answer
// means the federate's side received those. When the link fails, what was
// sent since the last such answer is queued again; the receiver's memory
// of recent events (recent.go) drops what it already had.

// maxUnacked bounds the events a link keeps unacknowledged: above it the
// oldest are forgotten (a failure may then lose them); at the default
// 30 s health checks it covers about 270 events a second.
const maxUnacked = 8192

// unacked is a link's events sent since the last acknowledged health
// check, oldest first.
type unacked struct {
	mu      sync.Mutex
	evs     []sentEvent
	ackedAt time.Time // when the last answered health check was sent
}

// sentEvent is an event a link sent, and when.
type sentEvent struct {
	fe *fedproto.FederatedEvent
	at time.Time
}

// add keeps fe, sent at at.
func (u *unacked) add(fe *fedproto.FederatedEvent, at time.Time) {
	u.mu.Lock()
	defer u.mu.Unlock()
	if len(u.evs) >= maxUnacked {
		n := copy(u.evs, u.evs[len(u.evs)-maxUnacked+1:])
		clear(u.evs[n:])
		u.evs = u.evs[:n]
	}
	u.evs = append(u.evs, sentEvent{fe, at})
}

// ack says a health check sent at sentAt was answered: every event sent
// before sentAt is held by the federate.
func (u *unacked) ack(sentAt time.Time) {
	u.mu.Lock()
	defer u.mu.Unlock()
	if sentAt.After(u.ackedAt) {
		u.ackedAt = sentAt
	}
	i := 0
	for i < len(u.evs) && u.evs[i].at.Before(u.ackedAt) {
		i++
	}
	n := copy(u.evs, u.evs[i:])
	clear(u.evs[n:])
	u.evs = u.evs[:n]
}

// pending returns what was sent and not acknowledged, oldest first (once
// the writer stopped).
func (u *unacked) pending() []*fedproto.FederatedEvent {
	u.mu.Lock()
	defer u.mu.Unlock()
	out := make([]*fedproto.FederatedEvent, 0, len(u.evs))
	for _, se := range u.evs {
		out = append(out, se.fe)
	}
	return out
}
