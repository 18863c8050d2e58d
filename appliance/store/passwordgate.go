package store

// The password-check gate. PBKDF2 is slow on purpose, which makes password
// checks the cheapest way to burn the appliance's CPU: guesses spread over
// many addresses escape any per-address limiter, and valid credentials
// hammered from many threads cost as much as wrong ones. So every check,
// successful or not, passes one gate for the whole process: at most
// PasswordCheckConcurrency run at once and at most PasswordChecksPerSecond
// start per second (bursts of two seconds' worth). A check that finds no
// capacity within a short wait fails with ErrBusy, which the HTTP edge
// answers with 429 and Retry-After; the relay keeps its CPU.

import (
	"context"
	"fmt"
	"sync"
	"time"

	"outpost/appliance/rate"
)

// Defaults of the password gate.
const (
	DefaultPasswordChecksPerSecond = 10
	passwordGateWait               = 2 * time.Second // longest wait for a slot
)

type passwordGate struct {
	slots chan struct{}

	mu     sync.Mutex // mu guards starts
	starts rate.Bucket
}

func newPasswordGate(perSecond float64, concurrency int) *passwordGate {
	if concurrency < 1 {
		concurrency = 1
	}
	return &passwordGate{slots: make(chan struct{}, concurrency), starts: rate.New(perSecond, 2*time.Second)}
}

// enter waits (briefly) for the right to run one password check; the
// caller calls the returned release when done.
func (g *passwordGate) enter(ctx context.Context) (release func(), err error) {
	g.mu.Lock()
	ok := g.starts.Allow(time.Now(), 1)
	g.mu.Unlock()
	if !ok {
		return nil, fmt.Errorf("%w: more than %g password checks per second", ErrBusy, g.starts.Rate)
	}
	t := time.NewTimer(passwordGateWait)
	defer t.Stop()
	select {
	case g.slots <- struct{}{}:
		return func() { <-g.slots }, nil
	case <-t.C:
		return nil, fmt.Errorf("%w: every password-check slot is busy", ErrBusy)
	case <-ctx.Done():
		return nil, ctx.Err()
	}
}
