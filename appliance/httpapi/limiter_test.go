package httpapi

import (
	"net/http/httptest"
	"sync"
	"testing"
	"time"
)

type testClock struct {
	mu sync.Mutex
	t  time.Time
}

func (c *testClock) Now() time.Time { c.mu.Lock(); defer c.mu.Unlock(); return c.t }
func (c *testClock) Add(d time.Duration) {
	c.mu.Lock()
	c.t = c.t.Add(d)
	c.mu.Unlock()
}

// TestFailureLimiterWindow: failures older than the window are forgotten, a
// success does not reset the count, and the table stays bounded.
func TestFailureLimiterWindow(t *testing.T) {
	clock := &testClock{t: time.Unix(1_000_000, 0)}
	l := NewFailureLimiter(3, time.Minute, time.Minute, 4, clock.Now)
	attempt := func(addr string, failed bool) bool {
		t.Helper()
		if _, ok := l.Begin(addr); !ok {
			t.Fatalf("%s refused too early", addr)
		}
		return l.End(addr, failed)
	}
	attempt("a", true)
	attempt("a", true)
	attempt("a", false) // a success keeps the two failures
	clock.Add(59 * time.Second)
	if !attempt("a", true) { // three in the window
		t.Fatal("the third failure did not report the block it started")
	}
	if wait, blocked := l.Blocked("a"); !blocked || wait != time.Minute {
		t.Fatalf("three failures within a minute: blocked=%v wait=%v", blocked, wait)
	}
	if _, ok := l.Begin("a"); ok {
		t.Fatal("Begin allowed a blocked address")
	}
	clock.Add(time.Minute)
	if _, blocked := l.Blocked("a"); blocked {
		t.Fatal("still blocked after the block time")
	}
	attempt("b", true)
	clock.Add(61 * time.Second)
	attempt("b", true)
	attempt("b", true) // the first failure left the window: two, not three
	if _, blocked := l.Blocked("b"); blocked {
		t.Fatal("a failure outside the window counted")
	}
	for _, addr := range []string{"c", "d", "e", "f", "g", "h"} {
		attempt(addr, true)
	}
	if n := l.Tracked(); n > 4 {
		t.Fatalf("limiter tracks %d addresses, bound is 4", n)
	}
}

// TestFailureLimiterPending: attempts in flight count against the limit.
func TestFailureLimiterPending(t *testing.T) {
	l := NewFailureLimiter(2, time.Minute, time.Minute, 10, nil)
	if _, ok := l.Begin("x"); !ok {
		t.Fatal("first attempt refused")
	}
	if _, ok := l.Begin("x"); !ok {
		t.Fatal("second attempt refused")
	}
	if wait, ok := l.Begin("x"); ok || wait < time.Second {
		t.Fatalf("third parallel attempt: ok=%v wait=%v", ok, wait)
	}
	l.End("x", false)
	l.End("x", false)
	if l.Tracked() != 0 {
		t.Fatalf("successful attempts left %d entries", l.Tracked())
	}
}

// TestFailureLimiterFail: fast checks block after max failures and never
// refuse for parallelism.
func TestFailureLimiterFail(t *testing.T) {
	clock := &testClock{t: time.Unix(2_000_000, 0)}
	l := NewFailureLimiter(3, time.Minute, 2*time.Minute, 10, clock.Now)
	for i := range 2 {
		if l.Fail("z") {
			t.Fatalf("failure %d started a block", i+1)
		}
	}
	if !l.Fail("z") {
		t.Fatal("third failure did not start a block")
	}
	if l.Fail("z") {
		t.Fatal("a failure while blocked started another block")
	}
	if wait, blocked := l.Blocked("z"); !blocked || wait != 2*time.Minute {
		t.Fatalf("blocked=%v wait=%v", blocked, wait)
	}
	clock.Add(2 * time.Minute)
	if _, blocked := l.Blocked("z"); blocked {
		t.Fatal("blocked after the block ended")
	}
}

func TestWriteTooManyRequests(t *testing.T) {
	rec := httptest.NewRecorder()
	WriteTooManyRequests(rec, 1500*time.Millisecond, "slow down")
	if rec.Code != 429 || rec.Header().Get("Retry-After") != "2" || rec.Body.String() != `{"message":"slow down"}`+"\n" {
		t.Fatalf("%d %q %q", rec.Code, rec.Header().Get("Retry-After"), rec.Body)
	}
	if RetryAfter(0) != 1 || RetryAfter(time.Minute) != 60 {
		t.Fatal("RetryAfter")
	}
}
