package pki

import (
	"context"
	"crypto/tls"
	"errors"
	"log/slog"
	"net"
	"sync"
	"sync/atomic"
	"time"
)

// maxPendingHandshakes caps handshakes in flight per listener; connections
// beyond it are closed at once, so a connection flood cannot grow memory
// without bound (each pending handshake is cut at the timeout anyway).
const maxPendingHandshakes = 4096

// HandshakeListener is the net.Listener NewHandshakeListener returns. Accept
// hands out *tls.Conn values whose handshake already completed.
type HandshakeListener struct {
	inner   net.Listener
	cfg     *tls.Config
	timeout time.Duration
	log     *slog.Logger

	ready chan *tls.Conn // handshaken connections waiting for Accept
	done  chan struct{}  // closed by Close
	errc  chan error     // the accept loop's terminal error (buffered, 1)
	wg    sync.WaitGroup // accept loop and handshake goroutines
	once  sync.Once      // guards Close
	mu    sync.Mutex     // guards pend
	pend  map[net.Conn]struct{}

	failed   atomic.Uint64
	accepted atomic.Uint64
}

// NewHandshakeListener wraps a raw listener: one goroutine accepts raw
// connections and runs each TLS handshake in its own goroutine under a
// deadline of timeout (api.md §8: WRAP_SSL_TIMEOUT 1.0 s), clears the
// deadline after success and hands the *tls.Conn to Accept. A client that
// connects and never sends a ClientHello is cut at the timeout and never
// blocks other handshakes or the accept loop. Failed handshakes are logged at
// debug with the remote address and counted. Close stops everything.
func NewHandshakeListener(inner net.Listener, cfg *tls.Config, timeout time.Duration, log *slog.Logger) net.Listener {
	if timeout <= 0 {
		timeout = time.Second
	}
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	l := &HandshakeListener{
		inner:   inner,
		cfg:     cfg,
		timeout: timeout,
		log:     log,
		ready:   make(chan *tls.Conn),
		done:    make(chan struct{}),
		errc:    make(chan error, 1),
		pend:    map[net.Conn]struct{}{},
	}
	l.wg.Add(1)
	go l.acceptLoop()
	return l
}

func (l *HandshakeListener) acceptLoop() {
	defer l.wg.Done()
	var backoff time.Duration
	for {
		c, err := l.inner.Accept()
		if err != nil {
			select {
			case <-l.done:
				return
			default:
			}
			if errors.Is(err, net.ErrClosed) {
				l.errc <- err
				return
			}
			// Transient (for example EMFILE): back off, never spin.
			if backoff == 0 {
				backoff = 5 * time.Millisecond
			} else if backoff < time.Second {
				backoff *= 2
			}
			l.log.Warn("accept failed; retrying", "err", err, "backoff", backoff)
			select {
			case <-time.After(backoff):
			case <-l.done:
				return
			}
			continue
		}
		backoff = 0
		if !l.track(c) {
			_ = c.Close()
			l.failed.Add(1)
			l.log.Debug("too many TLS handshakes in progress; connection closed", "remote", c.RemoteAddr().String())
			continue
		}
		l.wg.Add(1)
		go l.handshake(c)
	}
}

// track registers a raw connection mid-handshake; false when closed or full.
func (l *HandshakeListener) track(c net.Conn) bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.pend == nil || len(l.pend) >= maxPendingHandshakes {
		return false
	}
	l.pend[c] = struct{}{}
	return true
}

func (l *HandshakeListener) untrack(c net.Conn) {
	l.mu.Lock()
	if l.pend != nil {
		delete(l.pend, c)
	}
	l.mu.Unlock()
}

func (l *HandshakeListener) handshake(c net.Conn) {
	defer l.wg.Done()
	remote := c.RemoteAddr().String()
	tc := tls.Server(c, l.cfg)
	_ = c.SetDeadline(time.Now().Add(l.timeout))
	ctx, cancel := context.WithTimeout(context.Background(), l.timeout)
	err := tc.HandshakeContext(ctx)
	cancel()
	l.untrack(c)
	if err != nil {
		l.failed.Add(1)
		l.log.Debug("TLS handshake failed", "remote", remote, "err", err)
		_ = c.Close()
		return
	}
	if err := c.SetDeadline(time.Time{}); err != nil {
		l.failed.Add(1)
		_ = tc.Close()
		return
	}
	select {
	case l.ready <- tc:
		l.accepted.Add(1)
	case <-l.done:
		_ = tc.Close()
	}
}

// Accept returns the next connection whose TLS handshake completed.
func (l *HandshakeListener) Accept() (net.Conn, error) {
	select {
	case c := <-l.ready:
		return c, nil
	case <-l.done:
		return nil, net.ErrClosed
	case err := <-l.errc:
		l.errc <- err // keep it for later callers
		return nil, err
	}
}

// Close stops accepting, closes the inner listener and every connection still
// in its handshake, and waits for the listener's goroutines to end.
// Connections already returned by Accept are the caller's.
func (l *HandshakeListener) Close() error {
	var err error
	l.once.Do(func() {
		close(l.done)
		err = l.inner.Close()
		l.mu.Lock()
		for c := range l.pend {
			_ = c.Close()
		}
		l.pend = nil
		l.mu.Unlock()
		l.wg.Wait()
	})
	return err
}

// Addr returns the inner listener's address.
func (l *HandshakeListener) Addr() net.Addr { return l.inner.Addr() }

// FailedHandshakes counts handshakes that failed, timed out or were refused.
func (l *HandshakeListener) FailedHandshakes() uint64 { return l.failed.Load() }

// CompletedHandshakes counts connections handed to Accept.
func (l *HandshakeListener) CompletedHandshakes() uint64 { return l.accepted.Load() }
