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

// maxUnackedAge bounds how far back a failed link queues again, counted
// from the last event it sent: a federation v1 link has no health check,
// so nothing is ever acknowledged there, and a receiver's memory of recent
// events (one to two minutes) would not drop copies older than that.
const maxUnackedAge = 90 * time.Second

// unacked is a link's events sent since the last acknowledged health
// check, oldest first, in a ring of at most maxUnacked (add is O(1): it
// runs once per event sent).
type unacked struct {
	mu      sync.Mutex
	evs     []sentEvent // the ring; grows to maxUnacked
	head, n int         // the oldest kept, and how many are kept
	ackedAt time.Time   // when the last answered health check was sent
}

// sentEvent is an event a link sent, and when.
type sentEvent struct {
	fe *fedproto.FederatedEvent
	at time.Time
}

// at is the i-th kept event, oldest first.
func (u *unacked) at(i int) *sentEvent { return &u.evs[(u.head+i)%len(u.evs)] }

// add keeps fe, sent at at.
func (u *unacked) add(fe *fedproto.FederatedEvent, at time.Time) {
	u.mu.Lock()
	defer u.mu.Unlock()
	switch {
	case u.n < len(u.evs):
		*u.at(u.n) = sentEvent{fe, at}
		u.n++
	case len(u.evs) < maxUnacked: // full below the bound: grow, oldest first again
		grown := make([]sentEvent, u.n+1, min(max(2*len(u.evs), 64), maxUnacked))
		for i := range u.n {
			grown[i] = *u.at(i)
		}
		grown[u.n] = sentEvent{fe, at}
		u.evs, u.head, u.n = grown[:cap(grown)], 0, u.n+1
	default: // at the bound: the oldest goes
		*u.at(0) = sentEvent{fe, at}
		u.head = (u.head + 1) % len(u.evs)
	}
}

// ack says a health check sent at sentAt was answered: every event sent
// before sentAt is held by the federate.
func (u *unacked) ack(sentAt time.Time) {
	u.mu.Lock()
	defer u.mu.Unlock()
	if sentAt.After(u.ackedAt) {
		u.ackedAt = sentAt
	}
	for u.n > 0 && u.at(0).at.Before(u.ackedAt) {
		*u.at(0) = sentEvent{}
		u.head = (u.head + 1) % len(u.evs)
		u.n--
	}
}

// pending returns what was sent and not acknowledged, oldest first, back
// to maxUnackedAge before the last event sent (once the writer stopped).
func (u *unacked) pending() []*fedproto.FederatedEvent {
	u.mu.Lock()
	defer u.mu.Unlock()
	if u.n == 0 {
		return nil
	}
	from := u.at(u.n - 1).at.Add(-maxUnackedAge)
	out := make([]*fedproto.FederatedEvent, 0, u.n)
	for i := range u.n {
		if se := u.at(i); !se.at.Before(from) {
			out = append(out, se.fe)
		}
	}
	return out
}
