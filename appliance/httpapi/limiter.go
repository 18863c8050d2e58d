package httpapi

import (
	"net/http"
	"strconv"
	"sync"
	"time"
)

// FailureLimiter slows credential guessing per client address: an address
// with Max failed attempts within Window is refused for Block. It is the one
// limiter of every HTTP interface that checks credentials (enrollment's Basic
// auth, the management API's bearer tokens and logins).
//
// Two ways to use it:
//   - slow checks (a PBKDF2 password): Begin reserves an attempt, End records
//     its outcome. Attempts in progress count against the limit, so parallel
//     requests cannot run more than Max guesses before the first results are
//     in.
//   - fast checks (a token lookup): Blocked before the check, Fail after a
//     failed one. Nothing is reserved, so parallel valid requests of one
//     client are never refused for being many.
//
// A successful attempt does not clear the count: one valid credential must
// not reset the budget for guessing others. Memory is bounded by MaxTracked
// addresses; idle entries are dropped first. Safe for concurrent use.
type FailureLimiter struct {
	max        int
	window     time.Duration
	block      time.Duration
	maxTracked int
	now        func() time.Time

	mu    sync.Mutex // guards addrs
	addrs map[string]*addrFailures
}

type addrFailures struct {
	fails        []time.Time // failed attempts inside the window, oldest first
	pending      int         // slow checks in progress
	blockedUntil time.Time
}

// NewFailureLimiter returns a limiter refusing an address for block after max
// failures within window, remembering at most maxTracked addresses. now is
// its clock (nil: time.Now).
func NewFailureLimiter(max int, window, block time.Duration, maxTracked int, now func() time.Time) *FailureLimiter {
	if now == nil {
		now = time.Now
	}
	if max < 1 {
		max = 1
	}
	if maxTracked < 1 {
		maxTracked = 1
	}
	return &FailureLimiter{max: max, window: window, block: block, maxTracked: maxTracked, now: now, addrs: map[string]*addrFailures{}}
}

// Blocked reports whether addr is refused now and for how long.
func (l *FailureLimiter) Blocked(addr string) (time.Duration, bool) {
	l.mu.Lock()
	defer l.mu.Unlock()
	st := l.addrs[addr]
	if st == nil {
		return 0, false
	}
	now := l.now()
	if now.Before(st.blockedUntil) {
		return st.blockedUntil.Sub(now), true
	}
	return 0, false
}

// Begin reserves a slow attempt for addr. When it is refused, wait says when
// to try again. Every successful Begin must be followed by one End.
func (l *FailureLimiter) Begin(addr string) (wait time.Duration, ok bool) {
	l.mu.Lock()
	defer l.mu.Unlock()
	now := l.now()
	st := l.entry(addr, now)
	if now.Before(st.blockedUntil) {
		return st.blockedUntil.Sub(now), false
	}
	st.prune(now, l.window)
	if len(st.fails)+st.pending >= l.max {
		// Only reachable with attempts in flight: wait for them.
		wait = time.Second
		if len(st.fails) > 0 {
			wait = max(st.fails[0].Add(l.window).Sub(now), time.Second)
		}
		return wait, false
	}
	st.pending++
	return 0, true
}

// End records the outcome of an attempt begun with Begin. It reports whether
// this failure started a block (for the log).
func (l *FailureLimiter) End(addr string, failed bool) (blockedNow bool) {
	l.mu.Lock()
	defer l.mu.Unlock()
	st := l.addrs[addr]
	if st == nil {
		return false
	}
	now := l.now()
	if st.pending > 0 {
		st.pending--
	}
	if failed {
		blockedNow = l.recordLocked(st, now)
	}
	if st.idle(now, l.window) {
		delete(l.addrs, addr)
	}
	return blockedNow
}

// Fail records a failed fast check (see the type's documentation). It
// reports whether this failure started a block.
func (l *FailureLimiter) Fail(addr string) (blockedNow bool) {
	l.mu.Lock()
	defer l.mu.Unlock()
	now := l.now()
	return l.recordLocked(l.entry(addr, now), now)
}

// Tracked is the number of addresses remembered now.
func (l *FailureLimiter) Tracked() int {
	l.mu.Lock()
	defer l.mu.Unlock()
	return len(l.addrs)
}

// Block is how long an address is refused once it reached the limit.
func (l *FailureLimiter) Block() time.Duration { return l.block }

func (l *FailureLimiter) entry(addr string, now time.Time) *addrFailures {
	st := l.addrs[addr]
	if st == nil {
		l.makeRoom(now)
		st = &addrFailures{}
		l.addrs[addr] = st
	}
	return st
}

func (l *FailureLimiter) recordLocked(st *addrFailures, now time.Time) bool {
	if now.Before(st.blockedUntil) {
		return false // already blocked: nothing more to count
	}
	st.prune(now, l.window)
	st.fails = append(st.fails, now)
	if len(st.fails) >= l.max {
		st.blockedUntil = now.Add(l.block)
		st.fails = st.fails[:0]
		return true
	}
	return false
}

// makeRoom keeps the map under maxTracked before an address is added:
// idle entries go first, then entries that are not blocked and have nothing
// in flight (their few failures are forgotten, which only helps an attacker
// who already controls thousands of addresses).
func (l *FailureLimiter) makeRoom(now time.Time) {
	if len(l.addrs) < l.maxTracked {
		return
	}
	for a, st := range l.addrs {
		if st.idle(now, l.window) {
			delete(l.addrs, a)
		}
	}
	for a, st := range l.addrs {
		if len(l.addrs) < l.maxTracked {
			return
		}
		if st.pending == 0 && !now.Before(st.blockedUntil) {
			delete(l.addrs, a)
		}
	}
}

func (st *addrFailures) prune(now time.Time, window time.Duration) {
	i := 0
	for i < len(st.fails) && now.Sub(st.fails[i]) >= window {
		i++
	}
	if i > 0 {
		st.fails = append(st.fails[:0], st.fails[i:]...)
	}
}

func (st *addrFailures) idle(now time.Time, window time.Duration) bool {
	st.prune(now, window)
	return st.pending == 0 && len(st.fails) == 0 && !now.Before(st.blockedUntil)
}

// RetryAfter is wait in whole seconds, rounded up, at least 1: the value of a
// Retry-After header.
func RetryAfter(wait time.Duration) int {
	return max(int((wait+time.Second-1)/time.Second), 1)
}

// WriteTooManyRequests answers 429 with Retry-After and {"message": msg}.
func WriteTooManyRequests(w http.ResponseWriter, wait time.Duration, msg string) {
	w.Header().Set("Retry-After", strconv.Itoa(RetryAfter(wait)))
	WriteMessage(w, http.StatusTooManyRequests, msg)
}
