package access

import (
	"errors"
	"fmt"
	"net/netip"
	"sync"
	"time"

	"outpost/appliance/fault"
	"outpost/appliance/rate"
	"outpost/appliance/store"
)

// ErrBusy is the kind of every refusal of the password guard; the refusal
// carries when to try again (RetryAfter).
var ErrBusy error = fault.New(fault.Busy, "access: too many password checks")

// GuardOptions are the budgets of password checks (access.md "Password
// guesses cost the guesser"). Zero values take the defaults shown.
type GuardOptions struct {
	PerSource      float64       // 3: failed checks per second from one address (bursts of 2 s; a right password is refunded)
	SourceFailures int           // 10: failures from one address within FailureWindow before it is refused for the rest of it
	TargetFailures int           // 5: failures against one target within FailureWindow before it is guarded
	FailureWindow  time.Duration // 1 min: how long a failure counts, for its source and its target
	// Total is the checks per second of the whole server (the store's
	// password gate, passwordChecksPerSecond; 10): sources with a recent
	// failure may use half of it. <0: unlimited.
	Total      float64
	MaxTracked int // 4096: addresses and targets remembered (the idle are forgotten first)
	Now        func() time.Time
}

func (o *GuardOptions) fill() {
	if o.PerSource <= 0 {
		o.PerSource = 3
	}
	if o.TargetFailures <= 0 {
		o.TargetFailures = 5
	}
	if o.SourceFailures <= 0 {
		o.SourceFailures = 10
	}
	if o.FailureWindow <= 0 {
		o.FailureWindow = time.Minute
	}
	if o.Total == 0 {
		o.Total = 10
	}
	if o.MaxTracked <= 0 {
		o.MaxTracked = 4096
	}
	if o.Now == nil {
		o.Now = time.Now
	}
}

// Guard budgets password checks per source address, per target (a user or
// a mission) and in total, so that a guesser runs out of budget before the
// rightful user does. Safe for concurrent use.
type Guard struct {
	opts GuardOptions

	mu      sync.Mutex // mu guards sources, targets and dirty
	sources map[netip.Addr]*sourceState
	targets map[string]*targetState
	dirty   rate.Bucket // the share of the total that sources with recent failures may use
}

type sourceState struct {
	checks   rate.Bucket
	failures []time.Time // within the window, oldest first
}

// failedLately reports whether the source failed within the window.
func (s *sourceState) failedLately() bool { return len(s.failures) > 0 }

type targetState struct {
	failures []time.Time // within the window, oldest first
}

// NewGuard returns a guard with the budgets of opts.
func NewGuard(opts GuardOptions) *Guard {
	opts.fill()
	g := &Guard{opts: opts, sources: map[netip.Addr]*sourceState{}, targets: map[string]*targetState{}}
	if opts.Total > 0 {
		g.dirty = rate.New(opts.Total/2, 2*time.Second)
	}
	return g
}

// Refusal is a check the guard refused: try again after Wait.
type Refusal struct {
	Wait   time.Duration
	reason string
}

func (r *Refusal) Error() string             { return fmt.Sprintf("%v: %s", ErrBusy, r.reason) }
func (r *Refusal) Unwrap() error             { return ErrBusy }
func (r *Refusal) RetryAfter() time.Duration { return r.Wait }

// Begin admits one password check from source about target ("user:NAME",
// "mission:NAME"). When it is admitted the caller runs the check and calls
// done with whether it failed (done reports whether that failure used up
// the source's failures: it is refused from now on, for the log);
// otherwise err is a *Refusal.
func (g *Guard) Begin(source netip.Addr, target string) (done func(failed bool) (blocked bool), err error) {
	now := g.opts.Now()
	g.mu.Lock()
	defer g.mu.Unlock()
	s := g.source(source, now)
	t := g.target(target, now)
	recent := s.failedLately()
	if len(s.failures) >= g.opts.SourceFailures {
		wait := s.failures[0].Add(g.opts.FailureWindow).Sub(now)
		return nil, &Refusal{Wait: max(wait, time.Second), reason: "too many failed password checks from this address; try again later"}
	}
	if recent && len(t.failures) >= g.opts.TargetFailures {
		// The target is being guessed at: only sources that have not
		// failed lately are heard (the rightful user has not).
		wait := t.failures[0].Add(g.opts.FailureWindow).Sub(now)
		return nil, &Refusal{Wait: max(wait, time.Second), reason: "too many failed password checks against this target; try again later"}
	}
	if !s.checks.Has(now, 1) {
		return nil, &Refusal{Wait: time.Second, reason: "too many password checks from this address; slow down"}
	}
	if recent && !g.dirty.Allow(now, 1) {
		return nil, &Refusal{Wait: time.Second, reason: "too many password checks from addresses that failed lately; try again shortly"}
	}
	s.checks.Allow(now, 1)
	return func(failed bool) bool {
		g.mu.Lock()
		defer g.mu.Unlock()
		at := g.opts.Now()
		ss := g.source(source, at)
		if !failed {
			// A right password costs its source nothing: the per-source
			// budget paces guessing, not a client that knows its password
			// (the total budget still holds).
			ss.checks.Refund(1)
			return false
		}
		tt := g.target(target, at)
		tt.failures = keepLast(append(tt.failures, at), 4*g.opts.TargetFailures)
		return g.failLocked(ss, at)
	}, nil
}

// Check runs check, one password check from source about target, within
// the budgets: a *Refusal when it may not run, otherwise check's error. A
// check failed when its error is store.ErrBadCredentials. blocked reports
// that this failure used up the source's failures (for the log).
func (g *Guard) Check(source netip.Addr, target string, check func() error) (blocked bool, err error) {
	done, err := g.Begin(source, target)
	if err != nil {
		return false, err
	}
	err = check()
	return done(errors.Is(err, store.ErrBadCredentials)), err
}

// Blocked reports whether source has failed too often within the window
// (password checks or Fail) and how long until it may try again: a caller
// with a cheap credential (a bearer token) refuses such a source without
// checking anything.
func (g *Guard) Blocked(source netip.Addr) (time.Duration, bool) {
	now := g.opts.Now()
	g.mu.Lock()
	defer g.mu.Unlock()
	s, ok := g.sources[source]
	if !ok {
		return 0, false
	}
	s.failures = g.within(s.failures, now)
	if len(s.failures) < g.opts.SourceFailures {
		return 0, false
	}
	return max(s.failures[0].Add(g.opts.FailureWindow).Sub(now), time.Second), true
}

// Fail counts a failure of a credential that needed no password check (an
// unknown bearer token) against source. It reports whether this failure
// blocked the source (for the log).
func (g *Guard) Fail(source netip.Addr) bool {
	now := g.opts.Now()
	g.mu.Lock()
	defer g.mu.Unlock()
	return g.failLocked(g.source(source, now), now)
}

// failLocked counts one failure of s and reports whether it used up the
// source's failures. g.mu held.
func (g *Guard) failLocked(s *sourceState, now time.Time) bool {
	s.failures = keepLast(append(s.failures, now), g.opts.SourceFailures)
	return len(s.failures) == g.opts.SourceFailures
}

// keepLast keeps at most the n newest times.
func keepLast(ts []time.Time, n int) []time.Time {
	if len(ts) > n {
		return append(ts[:0], ts[len(ts)-n:]...)
	}
	return ts
}

// within drops the times older than the window.
func (g *Guard) within(ts []time.Time, now time.Time) []time.Time {
	i := 0
	for i < len(ts) && now.Sub(ts[i]) >= g.opts.FailureWindow {
		i++
	}
	return ts[i:]
}

// source returns source's state with its failures pruned to the window,
// forgetting idle sources when the table is full. g.mu held.
func (g *Guard) source(a netip.Addr, now time.Time) *sourceState {
	s, ok := g.sources[a]
	if !ok {
		if len(g.sources) >= g.opts.MaxTracked {
			for k, s := range g.sources {
				if s.checks.Idle(now) && len(g.within(s.failures, now)) == 0 {
					delete(g.sources, k)
				}
			}
			if len(g.sources) >= g.opts.MaxTracked {
				clear(g.sources)
			}
		}
		s = &sourceState{checks: rate.New(g.opts.PerSource, 2*time.Second)}
		g.sources[a] = s
	}
	s.failures = g.within(s.failures, now)
	return s
}

// target returns target's state with its failures pruned to the window.
// g.mu held.
func (g *Guard) target(name string, now time.Time) *targetState {
	t, ok := g.targets[name]
	if !ok {
		if len(g.targets) >= g.opts.MaxTracked {
			for k, t := range g.targets {
				if len(t.failures) == 0 || now.Sub(t.failures[len(t.failures)-1]) >= g.opts.FailureWindow {
					delete(g.targets, k)
				}
			}
			if len(g.targets) >= g.opts.MaxTracked {
				clear(g.targets)
			}
		}
		t = &targetState{}
		g.targets[name] = t
	}
	t.failures = g.within(t.failures, now)
	return t
}

// Tracked reports how many addresses and targets the guard remembers.
func (g *Guard) Tracked() (sources, targets int) {
	g.mu.Lock()
	defer g.mu.Unlock()
	return len(g.sources), len(g.targets)
}
