package netx

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"os"
	"sync"
	"sync/atomic"
	"time"

	"outpost/appliance/logx"
)

// Config configures one listening port.
type Config struct {
	Name string // listener name for logs and counters, e.g. "cot-tls"
	Addr string // host:port to bind; port 0 picks a free one

	// Conns are the connection limits this listener's connections count
	// against (for example one Limits shared by every HTTP listener with a
	// per-source cap, and one for this listener alone with its total cap).
	// A connection must fit in all of them.
	Conns []*Limits

	// TLS, when set, makes the port TLS: Accept returns *tls.Conn values
	// whose handshake completed within HandshakeTimeout (default 1 s).
	TLS              *tls.Config
	HandshakeTimeout time.Duration
	// Handshakes caps handshakes in flight per source and in total (shared
	// by the TLS listeners). Nil: no cap beyond the connection limits.
	Handshakes *Limits
	// Classify names the cause of a failed handshake for the counters, or
	// returns "" to use the generic classification.
	Classify func(error) string

	Logger *slog.Logger
}

// Listener is a bound port. Accept hands out connections that passed the
// limits (and, on TLS, their handshake); it returns only a connection or
// net.ErrClosed, never a transient error: back-off lives here, once.
type Listener struct {
	cfg  Config
	raw  net.Listener
	log  *slog.Logger
	warn *logx.Limiter

	ready chan net.Conn
	done  chan struct{}
	wg    sync.WaitGroup // accept loop and handshake goroutines
	once  sync.Once

	mu      sync.Mutex // mu guards pending
	pending map[net.Conn]struct{}

	stats counters
}

// Listen binds the address and starts the accept loop.
func Listen(cfg Config) (*Listener, error) {
	if cfg.HandshakeTimeout <= 0 {
		cfg.HandshakeTimeout = time.Second
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.New(slog.DiscardHandler)
	}
	raw, err := net.Listen("tcp", cfg.Addr)
	if err != nil {
		return nil, fmt.Errorf("%s: listen on %s: %w", cfg.Name, cfg.Addr, err)
	}
	l := &Listener{
		cfg:     cfg,
		raw:     raw,
		log:     cfg.Logger,
		warn:    logx.NewLimiter(cfg.Logger, 10, 10*time.Second),
		ready:   make(chan net.Conn),
		done:    make(chan struct{}),
		pending: map[net.Conn]struct{}{},
	}
	l.wg.Add(1)
	go l.acceptLoop()
	return l, nil
}

// Accept returns the next ready connection, or net.ErrClosed after Close.
func (l *Listener) Accept() (net.Conn, error) {
	select {
	case c := <-l.ready:
		return c, nil
	case <-l.done:
		return nil, net.ErrClosed
	}
}

// Addr is the bound address.
func (l *Listener) Addr() net.Addr { return l.raw.Addr() }

// Close stops accepting, closes every connection still in its handshake and
// waits for the listener's goroutines. Connections already returned by
// Accept are the caller's. Idempotent.
func (l *Listener) Close() error {
	var err error
	l.once.Do(func() {
		close(l.done)
		err = l.raw.Close()
		l.mu.Lock()
		for c := range l.pending {
			c.Close()
		}
		l.pending = nil
		l.mu.Unlock()
		l.wg.Wait()
	})
	return err
}

// acceptLoop is the one accept loop of the port.
func (l *Listener) acceptLoop() {
	defer l.wg.Done()
	var backoff time.Duration
	for {
		c, err := l.raw.Accept()
		if err != nil {
			if l.closed() || errors.Is(err, net.ErrClosed) {
				return
			}
			// Out of file descriptors and the like: back off, never spin,
			// and stop waiting the moment the listener closes.
			backoff = min(max(2*backoff, 5*time.Millisecond), time.Second)
			l.stats.acceptErrors.Add(1)
			l.warn.Warn("accept failed; retrying", "listener", l.cfg.Name, "err", err, "retry_in", backoff)
			select {
			case <-time.After(backoff):
			case <-l.done:
				return
			}
			continue
		}
		backoff = 0
		sc, cause := l.admit(c, l.cfg.Conns)
		if cause != "" {
			l.refuse(c, cause, "connection refused: too many connections")
			continue
		}
		if l.cfg.TLS == nil {
			l.stats.accepted.Add(1)
			l.hand(sc)
			continue
		}
		if cause := l.cfg.Handshakes.acquire(sc.src); cause != "" {
			l.refuse(sc, "handshakes_"+cause, "connection refused: too many TLS handshakes in progress")
			continue
		}
		hs, src := l.cfg.Handshakes, sc.src
		// The handshake slot goes back when the handshake ends or, if the
		// listener closes first, when the connection is closed.
		sc.onEnd = sync.OnceFunc(func() { hs.release(src) })
		if !l.track(sc) {
			sc.Close()
			return
		}
		l.wg.Add(1)
		go l.handshake(sc)
	}
}

// admit takes a slot in every limit or none.
func (l *Listener) admit(c net.Conn, limits []*Limits) (*slotConn, string) {
	src := sourceOf(c)
	for i, lim := range limits {
		if cause := lim.acquire(src); cause != "" {
			for _, taken := range limits[:i] {
				taken.release(src)
			}
			return nil, cause
		}
	}
	return &slotConn{Conn: c, src: src, held: limits}, ""
}

// refuse counts a connection that did not fit, closes and logs it. It
// counts first: whoever sees the close (a client, a test) then sees the
// count too.
func (l *Listener) refuse(c net.Conn, cause, msg string) {
	remote := c.RemoteAddr().String()
	l.stats.refuse(cause)
	c.Close()
	l.warn.Warn(msg, "listener", l.cfg.Name, "remote", remote, "cause", cause)
}

// hand passes a ready connection to Accept (or closes it when the listener
// closes first).
func (l *Listener) hand(c net.Conn) {
	select {
	case l.ready <- c:
	case <-l.done:
		c.Close()
	}
}

func (l *Listener) closed() bool {
	select {
	case <-l.done:
		return true
	default:
		return false
	}
}

// track registers a connection in its handshake; false once closed.
func (l *Listener) track(c net.Conn) bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.pending == nil {
		return false
	}
	l.pending[c] = struct{}{}
	return true
}

func (l *Listener) untrack(c net.Conn) {
	l.mu.Lock()
	if l.pending != nil {
		delete(l.pending, c)
	}
	l.mu.Unlock()
}

// handshake runs one TLS handshake under the timeout; its handshake slot is
// given back when it ends, whatever the outcome.
func (l *Listener) handshake(sc *slotConn) {
	defer l.wg.Done()
	remote := sc.RemoteAddr().String()
	tc := tls.Server(sc, l.cfg.TLS)
	sc.SetDeadline(time.Now().Add(l.cfg.HandshakeTimeout))
	ctx, cancel := context.WithTimeout(context.Background(), l.cfg.HandshakeTimeout)
	err := tc.HandshakeContext(ctx)
	cancel()
	l.untrack(sc)
	// The handshake is over: its slot goes back now, the connection's
	// slots when the connection closes.
	sc.onEnd()
	if err == nil {
		err = sc.SetDeadline(time.Time{})
	}
	if err != nil {
		cause := l.classify(err)
		l.stats.handshakeFailed(cause)
		l.log.Debug("TLS handshake failed", "listener", l.cfg.Name, "remote", remote, "cause", cause, "err", logx.Clip(err.Error()))
		sc.Close()
		return
	}
	l.stats.accepted.Add(1)
	l.hand(tc)
}

// classify names the cause of a failed handshake.
func (l *Listener) classify(err error) string {
	if l.cfg.Classify != nil {
		if c := l.cfg.Classify(err); c != "" {
			return c
		}
	}
	var (
		ne  net.Error
		rhe tls.RecordHeaderError
		cve *tls.CertificateVerificationError
		ae  tls.AlertError
	)
	switch {
	case errors.Is(err, context.DeadlineExceeded), errors.Is(err, os.ErrDeadlineExceeded), errors.As(err, &ne) && ne.Timeout():
		return "timeout"
	case errors.As(err, &rhe):
		return "not_tls"
	case errors.As(err, &cve):
		return "certificate"
	case errors.As(err, &ae):
		return "client_alert"
	default:
		return "other"
	}
}

// Stats is a snapshot of the listener's counters.
type Stats struct {
	Accepted          uint64            // connections handed to Accept
	Refused           map[string]uint64 // refused at the limits, by cause
	AcceptErrors      uint64            // failed accepts (retried)
	HandshakeFailures map[string]uint64 // TLS handshakes that failed, by cause
	Handshaking       int               // handshakes in flight now
}

// Stats returns the counters.
func (l *Listener) Stats() Stats {
	l.mu.Lock()
	n := len(l.pending)
	l.mu.Unlock()
	st := l.stats.snapshot()
	st.Handshaking = n
	return st
}

type counters struct {
	accepted, acceptErrors atomic.Uint64
	mu                     sync.Mutex // mu guards refused and failed
	refused, failed        map[string]uint64
}

func (c *counters) refuse(cause string) {
	c.mu.Lock()
	if c.refused == nil {
		c.refused = map[string]uint64{}
	}
	c.refused[cause]++
	c.mu.Unlock()
}

func (c *counters) handshakeFailed(cause string) {
	c.mu.Lock()
	if c.failed == nil {
		c.failed = map[string]uint64{}
	}
	c.failed[cause]++
	c.mu.Unlock()
}

func (c *counters) snapshot() Stats {
	c.mu.Lock()
	defer c.mu.Unlock()
	st := Stats{Accepted: c.accepted.Load(), AcceptErrors: c.acceptErrors.Load(),
		Refused: map[string]uint64{}, HandshakeFailures: map[string]uint64{}}
	for k, v := range c.refused {
		st.Refused[k] = v
	}
	for k, v := range c.failed {
		st.HandshakeFailures[k] = v
	}
	return st
}
