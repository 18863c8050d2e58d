package access

import (
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"strings"
	"testing"
	"time"

	"outpost/appliance/httpapi"
	"outpost/appliance/store"
)

// fakeClock is the guard's clock in these tests: time moves only when the
// test says so.
type fakeClock struct{ t time.Time }

func (c *fakeClock) Now() time.Time          { return c.t }
func (c *fakeClock) Advance(d time.Duration) { c.t = c.t.Add(d) }

func newTestGuard(opts GuardOptions) (*Guard, *fakeClock) {
	c := &fakeClock{t: time.Date(2030, 1, 2, 3, 4, 5, 0, time.UTC)}
	opts.Now = c.Now
	return NewGuard(opts), c
}

func ip(n int) netip.Addr { return netip.AddrFrom4([4]byte{10, 0, byte(n >> 8), byte(n)}) }

var errWrong = fmt.Errorf("store: verify password: %w", store.ErrBadCredentials)

// try runs one password check from src against target that fails or not,
// and returns the guard's refusal (nil when it was admitted) and whether
// the failure blocked the source.
func try(g *Guard, src netip.Addr, target string, fails bool) (blocked bool, err error) {
	return g.Check(src, target, func() error {
		if fails {
			return errWrong
		}
		return nil
	})
}

// refusal asserts err is a refusal of the guard and returns it.
func refusal(t *testing.T, err error, reason string) *Refusal {
	t.Helper()
	var r *Refusal
	if !errors.As(err, &r) {
		t.Fatalf("err = %v, want a *Refusal", err)
	}
	if !errors.Is(err, ErrBusy) {
		t.Errorf("refusal %v is not ErrBusy", err)
	}
	if r.RetryAfter() < time.Second {
		t.Errorf("refusal %v: RetryAfter %v, want at least 1 s", err, r.RetryAfter())
	}
	if !strings.Contains(err.Error(), reason) {
		t.Errorf("refusal %q does not say %q", err, reason)
	}
	return r
}

func TestGuardSourceBudget(t *testing.T) {
	g, clock := newTestGuard(GuardOptions{})
	a, b := ip(1), ip(2)
	// Burst: 2 s of 3 checks per second.
	for i := range 6 {
		if _, err := g.Begin(a, fmt.Sprintf("user:u%d", i)); err != nil {
			t.Fatalf("check %d of a burst of 6: %v", i+1, err)
		}
	}
	_, err := g.Begin(a, "user:u6")
	if r := refusal(t, err, "slow down"); r.Wait != time.Second {
		t.Errorf("RetryAfter %v, want 1 s", r.Wait)
	}
	if _, err := g.Begin(b, "user:u0"); err != nil {
		t.Errorf("another address was refused: %v", err)
	}
	// It refills at 3 per second.
	clock.Advance(time.Second)
	for i := range 3 {
		if _, err := g.Begin(a, "user:u0"); err != nil {
			t.Fatalf("check %d after 1 s: %v", i+1, err)
		}
	}
	if _, err := g.Begin(a, "user:u0"); err == nil {
		t.Fatal("a fourth check within the second after refilling was admitted")
	}
}

func TestGuardRightPasswordIsRefunded(t *testing.T) {
	g, _ := newTestGuard(GuardOptions{})
	a := ip(1)
	// A client that knows its password is never slowed down by this budget.
	for i := range 50 {
		if _, err := try(g, a, "user:alice", false); err != nil {
			t.Fatalf("right password %d: %v", i+1, err)
		}
	}
	// Failures are not given back: the burst of 6 is there, and no more.
	for i := range 6 {
		if _, err := try(g, a, fmt.Sprintf("user:u%d", i), true); !errors.Is(err, store.ErrBadCredentials) {
			t.Fatalf("wrong password %d: %v, want the check's own error", i+1, err)
		}
	}
	_, err := try(g, a, "user:u6", true)
	refusal(t, err, "slow down")
	// An error other than a wrong password is no failure: it is refunded
	// too.
	g2, _ := newTestGuard(GuardOptions{})
	other := errors.New("disk on fire")
	for i := range 20 {
		if _, err := g2.Check(a, "user:alice", func() error { return other }); !errors.Is(err, other) {
			t.Fatalf("check %d: %v, want the check's own error", i+1, err)
		}
	}
	if _, blocked := g2.Blocked(a); blocked {
		t.Error("errors that are no wrong password blocked the source")
	}
}

func TestGuardSourceFailuresBlock(t *testing.T) {
	g, clock := newTestGuard(GuardOptions{})
	t0 := clock.Now()
	a, b := ip(1), ip(2)
	// Ten failures, one a second (within the per-source budget), against
	// ten users (no target is guarded).
	for i := range 10 {
		if i > 0 {
			clock.Advance(time.Second)
		}
		blocked, err := try(g, a, fmt.Sprintf("user:u%d", i), true)
		if !errors.Is(err, store.ErrBadCredentials) {
			t.Fatalf("failure %d was not checked: %v", i+1, err)
		}
		if blocked != (i == 9) {
			t.Errorf("failure %d: blocked = %v, want %v", i+1, blocked, i == 9)
		}
	}
	// Blocked for the rest of the window, right password or not.
	_, err := g.Begin(a, "user:fresh")
	if r := refusal(t, err, "too many failed password checks from this address"); r.Wait != 51*time.Second {
		t.Errorf("RetryAfter %v, want 51 s (a minute after the first failure)", r.Wait)
	}
	if wait, blocked := g.Blocked(a); !blocked || wait != 51*time.Second {
		t.Errorf("Blocked = %v, %v; want 51 s, true", wait, blocked)
	}
	if _, err := try(g, b, "user:fresh", false); err != nil {
		t.Errorf("another address was refused: %v", err)
	}
	// Just before the first failure is a minute old: still blocked, and the
	// wait is never under a second.
	clock.t = t0.Add(time.Minute - time.Millisecond)
	if wait, blocked := g.Blocked(a); !blocked || wait != time.Second {
		t.Errorf("Blocked a millisecond before the end = %v, %v; want 1 s, true", wait, blocked)
	}
	_, err = g.Begin(a, "user:fresh")
	refusal(t, err, "from this address")
	// A minute after the first failure, nine remain: admitted again.
	clock.t = t0.Add(time.Minute)
	if _, blocked := g.Blocked(a); blocked {
		t.Error("still blocked a minute after the first failure")
	}
	if _, err := try(g, a, "user:fresh", false); err != nil {
		t.Errorf("refused after the window: %v", err)
	}
	// One more failure blocks it again at once.
	if blocked, _ := try(g, a, "user:u10", true); !blocked {
		t.Error("the tenth failure within the window did not block")
	}
}

func TestGuardTarget(t *testing.T) {
	g, clock := newTestGuard(GuardOptions{})
	alice := "user:alice"
	guessers := []netip.Addr{ip(1), ip(2), ip(3), ip(4)}
	for _, s := range guessers {
		if _, err := try(g, s, alice, true); !errors.Is(err, store.ErrBadCredentials) {
			t.Fatalf("a first guess from %v: %v", s, err)
		}
	}
	// Four failures: not guarded yet, a source that failed is still heard.
	if _, err := try(g, guessers[0], alice, true); !errors.Is(err, store.ErrBadCredentials) {
		t.Fatalf("the fifth guess: %v", err)
	}
	// Five: sources that failed lately are refused for this target...
	for _, s := range guessers {
		_, err := try(g, s, alice, false)
		if r := refusal(t, err, "against this target"); r.Wait != time.Minute {
			t.Errorf("RetryAfter %v, want a minute", r.Wait)
		}
	}
	// ... as is a source that failed against another target ...
	elsewhere := ip(9)
	if _, err := try(g, elsewhere, "user:bob", true); !errors.Is(err, store.ErrBadCredentials) {
		t.Fatal(err)
	}
	_, err := try(g, elsewhere, alice, false)
	refusal(t, err, "against this target")
	// ... and one whose only failure was a bad token.
	token := ip(10)
	g.Fail(token)
	_, err = try(g, token, alice, false)
	refusal(t, err, "against this target")
	// The rightful user, who has not failed, still logs in, again and again.
	rightful := ip(100)
	for i := range 10 {
		if _, err := try(g, rightful, alice, false); err != nil {
			t.Fatalf("the rightful user, login %d: %v", i+1, err)
		}
	}
	// The guessers may still try other targets.
	if _, err := try(g, guessers[1], "mission:ops", false); err != nil {
		t.Errorf("a guesser against another target: %v", err)
	}
	// A minute later the target's failures are gone: a source that failed
	// a moment ago (elsewhere) is heard again.
	clock.Advance(time.Minute)
	if _, err := try(g, elsewhere, "user:bob", true); !errors.Is(err, store.ErrBadCredentials) {
		t.Fatal(err)
	}
	if _, err := try(g, elsewhere, alice, false); err != nil {
		t.Errorf("a target a minute after its failures: %v", err)
	}
}

func TestGuardDirtyShare(t *testing.T) {
	for _, tc := range []struct {
		name     string
		total    float64
		admitted int // at one instant, of 30 sources with a recent failure
		refilled int // one second later
	}{
		{"default total 10/s: half, for 2 s", 0, 10, 5},
		{"total 4/s", 4, 4, 2},
		{"unlimited", -1, 30, 30},
	} {
		t.Run(tc.name, func(t *testing.T) {
			g, clock := newTestGuard(GuardOptions{Total: tc.total})
			var dirty []netip.Addr
			for i := range 30 {
				s := ip(i + 1)
				g.Fail(s)
				dirty = append(dirty, s)
			}
			count := func() (n int) {
				for _, s := range dirty {
					_, err := try(g, s, "user:alice", false)
					if err == nil {
						n++
						continue
					}
					if r := refusal(t, err, "addresses that failed lately"); r.Wait != time.Second {
						t.Errorf("RetryAfter %v, want 1 s", r.Wait)
					}
				}
				return n
			}
			if n := count(); n != tc.admitted {
				t.Errorf("%d sources with recent failures admitted at once, want %d", n, tc.admitted)
			}
			// Sources without failures are not held by that share.
			for i := range 20 {
				if _, err := try(g, ip(1000+i), "user:alice", false); err != nil {
					t.Fatalf("clean source %d: %v", i+1, err)
				}
			}
			clock.Advance(time.Second)
			if n := count(); n != tc.refilled {
				t.Errorf("%d admitted a second later, want %d", n, tc.refilled)
			}
		})
	}
}

func TestGuardRefusalIs429WithRetryAfter(t *testing.T) {
	g, clock := newTestGuard(GuardOptions{})
	a := ip(1)
	for range 10 {
		g.Fail(a)
	}
	clock.Advance(20 * time.Second)
	_, err := g.Begin(a, "user:alice")
	refusal(t, err, "from this address")
	rec := httptest.NewRecorder()
	httpapi.Fail(rec, httptest.NewRequest("POST", "/api/login", nil), err, "login failed")
	if rec.Code != http.StatusTooManyRequests || rec.Header().Get("Retry-After") != "40" {
		t.Errorf("answered %d, Retry-After %q; want 429, 40", rec.Code, rec.Header().Get("Retry-After"))
	}
}

func TestGuardTokenFailures(t *testing.T) {
	g, clock := newTestGuard(GuardOptions{})
	a := ip(1)
	if _, blocked := g.Blocked(a); blocked {
		t.Fatal("an address never seen is blocked")
	}
	if s, _ := g.Tracked(); s != 0 {
		t.Errorf("Blocked of an unknown address made it tracked (%d)", s)
	}
	for i := range 10 {
		if i > 0 {
			clock.Advance(time.Second)
		}
		if blocked := g.Fail(a); blocked != (i == 9) {
			t.Errorf("token failure %d: blocked = %v, want %v", i+1, blocked, i == 9)
		}
		if _, blocked := g.Blocked(a); blocked != (i == 9) {
			t.Errorf("after token failure %d: Blocked = %v", i+1, blocked)
		}
	}
	// Blocked for password checks too.
	_, err := g.Begin(a, "user:alice")
	refusal(t, err, "from this address")
	if wait, _ := g.Blocked(a); wait != 51*time.Second {
		t.Errorf("wait %v, want 51 s", wait)
	}
	clock.Advance(51 * time.Second)
	if _, blocked := g.Blocked(a); blocked {
		t.Error("still blocked a minute after the first failure")
	}
	// Token and password failures count together.
	g2, _ := newTestGuard(GuardOptions{SourceFailures: 3})
	g2.Fail(a)
	if blocked, _ := try(g2, a, "user:x", true); blocked {
		t.Error("blocked after two failures of three")
	}
	if !g2.Fail(a) {
		t.Error("a token failure after a password failure did not make three")
	}
}

func TestGuardOptions(t *testing.T) {
	g, clock := newTestGuard(GuardOptions{PerSource: 1, SourceFailures: 2, TargetFailures: 1, FailureWindow: 10 * time.Second})
	a, b, c := ip(1), ip(2), ip(3)
	if _, err := try(g, a, "user:x", true); !errors.Is(err, store.ErrBadCredentials) {
		t.Fatal(err)
	}
	// Target guarded after one failure; PerSource 1 holds 2.
	_, err := try(g, b, "user:y", true)
	if !errors.Is(err, store.ErrBadCredentials) {
		t.Fatal(err)
	}
	_, err = try(g, b, "user:x", false)
	refusal(t, err, "against this target")
	if _, err := try(g, c, "user:x", false); err != nil {
		t.Errorf("a clean source: %v", err)
	}
	// Two failures block the source for the window of 10 s.
	if blocked, _ := try(g, a, "user:z", true); !blocked {
		t.Error("two failures did not block with SourceFailures 2")
	}
	if wait, blocked := g.Blocked(a); !blocked || wait != 10*time.Second {
		t.Errorf("Blocked = %v, %v; want 10 s", wait, blocked)
	}
	clock.Advance(10 * time.Second)
	if _, blocked := g.Blocked(a); blocked {
		t.Error("blocked after the window of 10 s")
	}
}

func TestGuardMemoryBounded(t *testing.T) {
	g, clock := newTestGuard(GuardOptions{MaxTracked: 8})
	for i := range 200 {
		if _, err := try(g, ip(i), fmt.Sprintf("user:u%d", i), i%2 == 0); err != nil && !errors.Is(err, store.ErrBadCredentials) {
			t.Fatalf("check %d: %v", i, err)
		}
		if i%10 == 0 {
			clock.Advance(time.Second)
		}
		if s, tg := g.Tracked(); s > 8 || tg > 8 {
			t.Fatalf("after %d addresses: %d addresses and %d targets tracked, want at most 8", i+1, s, tg)
		}
	}

	// The idle are forgotten first: a blocked address outlives a table
	// full of addresses that only ever gave right passwords.
	g, _ = newTestGuard(GuardOptions{MaxTracked: 4})
	bad := ip(1)
	for range 10 {
		g.Fail(bad)
	}
	for i := range 3 {
		if _, err := try(g, ip(10+i), "user:alice", false); err != nil {
			t.Fatal(err)
		}
	}
	if s, _ := g.Tracked(); s != 4 {
		t.Fatalf("%d addresses tracked, want 4", s)
	}
	if _, err := try(g, ip(20), "user:alice", false); err != nil {
		t.Fatal(err)
	}
	if s, _ := g.Tracked(); s != 2 {
		t.Errorf("%d addresses tracked after forgetting the idle, want 2 (the blocked one and the new one)", s)
	}
	if _, blocked := g.Blocked(bad); !blocked {
		t.Error("the blocked address was forgotten before idle ones")
	}
}
