package stream

import (
	"time"

	"outpost/appliance/rate"
)

// throttle paces what one connection may send (Config.MaxEventsPerSecond
// and MaxBytesPerSecond): a client over its rate is not cut off and nothing
// it sent is dropped; its reader simply stops reading until the client is
// back within its rate, so TCP pushes back on the client alone and the
// relay never spends more on one connection than its share.
type throttle struct {
	events, bytes rate.Bucket
	slowed        uint64 // times this connection was paced
}

// throttleBurst is how many seconds of its rates a connection may send at
// once (an ATAK client sends its markers in a burst on connect).
const throttleBurst = 2 * time.Second

func newThrottle(eventsPerSecond, bytesPerSecond int) throttle {
	return throttle{events: rate.New(float64(eventsPerSecond), throttleBurst),
		bytes: rate.New(float64(bytesPerSecond), throttleBurst)}
}

// pace charges one message of size bytes and waits, if the connection is
// over its rate, until it is back within it or done is closed. It reports
// whether it had to wait.
func (t *throttle) pace(now time.Time, size int, done <-chan struct{}) bool {
	wait := max(t.events.Debit(now, 1), t.bytes.Debit(now, float64(size)))
	if wait <= 0 {
		return false
	}
	t.slowed++
	timer := time.NewTimer(wait)
	defer timer.Stop()
	select {
	case <-timer.C:
	case <-done:
	}
	return true
}
