package marti

import (
	"sync"
	"time"
)

// failureLimiter slows password guessing on the enrollment port (protocol.md §8):
// an address with max failed logins within window is refused (429) for
// block. Attempts in progress count against the limit, so parallel requests
// cannot run more than max guesses before the first results are in. A
// successful login does not clear the count: one valid account must not
// reset the budget for guessing others. Memory is bounded by maxTracked
// addresses; idle entries are dropped first.
type failureLimiter struct {
	max        int
	window     time.Duration
	block      time.Duration
	maxTracked int
	now        func() time.Time

	mu    sync.Mutex // guards addrs
	addrs map[string]*addrFailures
}

type addrFailures struct {
	fails        []time.Time // failed logins inside the window, oldest first
	pending      int         // checks in progress
	blockedUntil time.Time
}

func newFailureLimiter(max int, window, block time.Duration, maxTracked int, now func() time.Time) *failureLimiter {
	return &failureLimiter{max: max, window: window, block: block, maxTracked: maxTracked, now: now, addrs: map[string]*addrFailures{}}
}

// blocked reports whether addr is refused now and for how long.
func (l *failureLimiter) blocked(addr string) (time.Duration, bool) {
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

// begin reserves a login attempt for addr. When it is refused, wait says when
// to try again. Every successful begin must be followed by one end.
func (l *failureLimiter) begin(addr string) (wait time.Duration, ok bool) {
	l.mu.Lock()
	defer l.mu.Unlock()
	now := l.now()
	st := l.addrs[addr]
	if st == nil {
		l.makeRoom(now)
		st = &addrFailures{}
		l.addrs[addr] = st
	}
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

// end records the outcome of an attempt begun with begin.
func (l *failureLimiter) end(addr string, failed bool) {
	l.mu.Lock()
	defer l.mu.Unlock()
	st := l.addrs[addr]
	if st == nil {
		return
	}
	now := l.now()
	if st.pending > 0 {
		st.pending--
	}
	if failed {
		st.prune(now, l.window)
		st.fails = append(st.fails, now)
		if len(st.fails) >= l.max {
			st.blockedUntil = now.Add(l.block)
			st.fails = st.fails[:0]
		}
	}
	if st.idle(now, l.window) {
		delete(l.addrs, addr)
	}
}

// makeRoom keeps the map under maxTracked before an address is added:
// idle entries go first, then entries that are not blocked and have nothing
// in flight (their few failures are forgotten, which only helps an attacker
// who already controls thousands of addresses).
func (l *failureLimiter) makeRoom(now time.Time) {
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
