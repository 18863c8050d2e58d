package stream

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"log/slog"
	"math/big"
	"net"
	"sync"
	"sync/atomic"
	"time"

	"outpost/appliance/broker"
	"outpost/appliance/cot"
)

// Config configures one streaming listener.
type Config struct {
	Name string // "cot-tcp" or "cot-tls"; used in logs, the registry and stats
	Addr string // host:port to bind; port 0 picks a free one

	// TLS, when set, makes this a mutual-TLS listener: each connection is
	// handshaken by Wrap (normally pki.NewHandshakeListener, which bounds the
	// handshake by WRAP_SSL_TIMEOUT) and its client certificate's common
	// name becomes the session's user.
	TLS  *tls.Config
	Wrap func(net.Listener) net.Listener

	IdleTimeout  time.Duration // close a connection silent this long (default 60 s)
	WriteTimeout time.Duration // a write blocked this long: slow consumer (default 15 s)
	MaxMessage   int           // largest inbound message (default 8 MiB, protocol.md §2)
	MaxConns     int           // concurrent connections (default 4096)
	ServerUID    string        // uid of the negotiation control events (protocol.md §4)

	// Identify returns the user name and certificate serial of a TLS client.
	Identify func(tls.ConnectionState) (user string, serial *big.Int, ok bool)

	Broker *broker.Broker
	Logger *slog.Logger
	Now    func() time.Time
}

// MaxRelayedEvent is the largest event sent to a client: ATAK's receive
// buffer is 65536 bytes (protocol.md §2). Larger events are still routed to the
// history but not written to sockets.
const MaxRelayedEvent = 64 << 10

// Listener accepts CoT streaming connections. Listen binds synchronously,
// Serve runs in the background, Shutdown is idempotent (architecture.md "The
// five listeners").
type Listener struct {
	cfg Config
	log *slog.Logger

	ln      net.Listener
	closing atomic.Bool
	wg      sync.WaitGroup // accept loop and every connection goroutine

	mu    sync.Mutex // mu guards conns
	conns map[*conn]struct{}

	stats listenerStats
}

type listenerStats struct {
	accepted, refused, oversize, syntax atomic.Uint64
}

// New returns a listener; nothing is bound until Listen.
func New(cfg Config) *Listener {
	if cfg.IdleTimeout <= 0 {
		cfg.IdleTimeout = 60 * time.Second
	}
	if cfg.WriteTimeout <= 0 {
		cfg.WriteTimeout = 15 * time.Second
	}
	if cfg.MaxMessage <= 0 {
		cfg.MaxMessage = 8 << 20
	}
	if cfg.MaxConns <= 0 {
		cfg.MaxConns = 4096
	}
	if cfg.ServerUID == "" {
		cfg.ServerUID = "outpost-" + cot.NewUID()
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.Default()
	}
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	return &Listener{cfg: cfg, log: cfg.Logger.With("listener", cfg.Name), conns: map[*conn]struct{}{}}
}

// Listen binds the address. A bind error is returned as is.
func (l *Listener) Listen() error {
	ln, err := net.Listen("tcp", l.cfg.Addr)
	if err != nil {
		return fmt.Errorf("%s: listen on %s: %w", l.cfg.Name, l.cfg.Addr, err)
	}
	if l.cfg.TLS != nil {
		if l.cfg.Wrap == nil {
			ln.Close()
			return fmt.Errorf("%s: TLS configured without a handshake wrapper", l.cfg.Name)
		}
		ln = l.cfg.Wrap(ln)
	}
	l.ln = ln
	return nil
}

// Addr is the bound address (nil before Listen).
func (l *Listener) Addr() net.Addr {
	if l.ln == nil {
		return nil
	}
	return l.ln.Addr()
}

// Serve starts the accept loop in the background.
func (l *Listener) Serve() {
	l.wg.Add(1)
	go l.acceptLoop()
}

func (l *Listener) acceptLoop() {
	defer l.wg.Done()
	var backoff time.Duration
	for {
		nc, err := l.ln.Accept()
		if err != nil {
			if l.closing.Load() || errors.Is(err, net.ErrClosed) {
				return
			}
			// Out of file descriptors and the like: back off, keep serving.
			if backoff == 0 {
				backoff = 5 * time.Millisecond
			} else if backoff *= 2; backoff > time.Second {
				backoff = time.Second
			}
			l.log.Warn("accept failed; retrying", "err", err, "retry_in", backoff)
			time.Sleep(backoff)
			continue
		}
		backoff = 0
		l.mu.Lock()
		full := len(l.conns) >= l.cfg.MaxConns
		l.mu.Unlock()
		if full {
			l.stats.refused.Add(1)
			l.log.Warn("connection refused: too many connections", "addr", nc.RemoteAddr().String(), "max", l.cfg.MaxConns)
			nc.Close()
			continue
		}
		l.stats.accepted.Add(1)
		c := l.newConn(nc)
		l.mu.Lock()
		if l.closing.Load() {
			l.mu.Unlock()
			c.sess.Close(broker.ReasonShutdown)
			nc.Close()
			return
		}
		l.conns[c] = struct{}{}
		l.wg.Add(1)
		l.mu.Unlock()
		go func() {
			defer l.wg.Done()
			c.serve()
			l.mu.Lock()
			delete(l.conns, c)
			l.mu.Unlock()
		}()
	}
}

// Shutdown stops accepting, stops reading from clients, lets every
// connection write what is already queued for it (until ctx ends), then
// closes the connections. The broker is closed by the caller afterwards.
func (l *Listener) Shutdown(ctx context.Context) error {
	if !l.closing.CompareAndSwap(false, true) {
		l.wg.Wait()
		return nil
	}
	if l.ln != nil {
		l.ln.Close()
	}
	l.mu.Lock()
	conns := make([]*conn, 0, len(l.conns))
	for c := range l.conns {
		conns = append(conns, c)
	}
	l.mu.Unlock()
	for _, c := range conns {
		c.beginShutdown(ctx)
	}
	done := make(chan struct{})
	go func() { l.wg.Wait(); close(done) }()
	select {
	case <-done:
		return nil
	case <-ctx.Done():
		for _, c := range conns {
			c.nc.Close()
		}
		<-done
		return fmt.Errorf("%s: shutdown: %w", l.cfg.Name, ctx.Err())
	}
}

// CloseWhere closes every TLS connection whose client certificate serial
// matches (used when a certificate is revoked while connected, api.md §5.11).
func (l *Listener) CloseWhere(match func(serial *big.Int) bool, reason string) int {
	l.mu.Lock()
	var hit []*conn
	for c := range l.conns {
		if c.serial != nil && match(c.serial) {
			hit = append(hit, c)
		}
	}
	l.mu.Unlock()
	for _, c := range hit {
		c.close(reason)
	}
	return len(hit)
}

// Stats is a snapshot of the listener's counters.
type Stats struct {
	Open           int    // connections now
	Accepted       uint64 // connections accepted
	Refused        uint64 // refused at MaxConns
	OversizeEvents uint64 // events not written because they exceed MaxRelayedEvent
	SyntaxErrors   uint64 // malformed messages skipped
}

// Stats returns the listener's counters.
func (l *Listener) Stats() Stats {
	l.mu.Lock()
	n := len(l.conns)
	l.mu.Unlock()
	return Stats{Open: n, Accepted: l.stats.accepted.Load(), Refused: l.stats.refused.Load(),
		OversizeEvents: l.stats.oversize.Load(), SyntaxErrors: l.stats.syntax.Load()}
}
