package stream

import (
	"context"
	"crypto/tls"
	"errors"
	"log/slog"
	"math/big"
	"net"
	"sync"
	"sync/atomic"
	"time"

	"outpost/appliance/broker"
	"outpost/appliance/cot"
	"outpost/appliance/cotsession"
	"outpost/appliance/logx"
	"outpost/appliance/netx"
)

// Config configures one streaming listener.
type Config struct {
	Name string // "cot-tcp" or "cot-tls"; used in logs, the registry and stats

	// Net is the port: address, connection limits and, for 8089, the
	// mutual-TLS configuration (netx runs the handshakes). Its Name and
	// Logger default to this Config's.
	Net netx.Config

	IdleTimeout  time.Duration // close a connection silent this long (default 60 s)
	WriteTimeout time.Duration // a write blocked this long (up to 1.25x, writer.go armWrite): ReasonWriteDeadline (default 15 s)
	MaxMessage   int           // largest inbound message (default cot.DefaultMaxMessage, 64 KiB)

	// MaxEventsPerSecond and MaxBytesPerSecond pace each connection's
	// reading (cotsession); bursts of 2 s are allowed. 0: no limit.
	MaxEventsPerSecond int
	MaxBytesPerSecond  int
	ServerUID          string // uid of the negotiation control events (protocol.md §4); default: one made up (cotsession)

	// Identify returns who a TLS client is: its certificate's name and
	// serial, and its groups (access.md "Principals"). Nil, or a TCP
	// client: anonymous, in __ANON__.
	Identify func(tls.ConnectionState) cotsession.Identity

	Broker *broker.Broker
	Logger *slog.Logger
	Now    func() time.Time
}

// Listener accepts CoT streaming connections. Listen binds synchronously,
// Serve runs in the background, Shutdown is idempotent (architecture.md "The
// five listeners").
type Listener struct {
	cfg  Config
	log  *slog.Logger
	warn *logx.Limiter // client-triggered warnings, bounded

	ln      *netx.Listener
	closing atomic.Bool
	wg      sync.WaitGroup // the accept loop and the idle sweep

	// sessions is the CoT session driver: what each connection does with
	// a message, and the registry of open connections (Shutdown,
	// CloseWhere, the idle sweep).
	sessions *cotsession.Driver[*conn]

	readers     *readPool     // where connections with input are read (readpool.go)
	readersOnce sync.Once     // the pool is closed once (Shutdown is idempotent)
	waiter      *netx.Waiter  // where idle connections wait (parked.go); nil: readers wait in Read
	flushers    *flushers     // who writes busy connections (flusher.go); nil: each writer gathers on its own
	sweep       chan struct{} // closed by Shutdown: ends idleSweep
	noWaiter    bool          // set by tests before Serve: run as where there is no waiter

	stats listenerStats
}

type listenerStats struct {
	protobuf atomic.Int64 // connections speaking TAK protocol v1 now
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
		cfg.MaxMessage = cot.DefaultMaxMessage
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.Default()
	}
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	log := cfg.Logger.With("listener", cfg.Name)
	if cfg.Net.Name == "" {
		cfg.Net.Name = cfg.Name
	}
	if cfg.Net.Logger == nil {
		cfg.Net.Logger = log
	}
	warn := logx.NewLimiter(log, 20, 10*time.Second)
	sessions := cotsession.New[*conn](cotsession.Config{Name: cfg.Name, MaxMessage: cfg.MaxMessage,
		MaxEventsPerSecond: cfg.MaxEventsPerSecond, MaxBytesPerSecond: cfg.MaxBytesPerSecond, ServerUID: cfg.ServerUID,
		Broker: cfg.Broker, Logger: log, Warn: warn, Now: cfg.Now})
	return &Listener{cfg: cfg, log: log, warn: warn, sessions: sessions, readers: newReadPool()}
}

// Listen binds the address. A bind error is returned as is.
func (l *Listener) Listen() error {
	ln, err := netx.Listen(l.cfg.Net)
	if err != nil {
		return err
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

// Serve starts taking connections in the background.
func (l *Listener) Serve() {
	w, err := (*netx.Waiter)(nil), errors.ErrUnsupported
	if !l.noWaiter {
		w, err = netx.NewWaiter()
	}
	if err == nil {
		l.waiter, l.sweep, l.flushers = w, make(chan struct{}), newFlushers()
		l.wg.Add(1)
		go l.idleSweep(l.sweep)
	} else if !errors.Is(err, errors.ErrUnsupported) {
		l.log.Warn("cannot wait for input without a goroutine per connection; readers wait in Read", "err", err)
	}
	l.wg.Add(1)
	go l.acceptLoop()
}

// acceptLoop takes the connections netx admitted (limits and TLS handshake
// done); it has no back-off of its own: netx.Listener.Accept returns only a
// connection or net.ErrClosed.
func (l *Listener) acceptLoop() {
	defer l.wg.Done()
	for {
		nc, err := l.ln.Accept()
		if err != nil {
			return
		}
		if !l.sessions.Enter(0) { // shutting down
			nc.Close()
			return
		}
		c := l.newConn(nc)
		if !l.sessions.Add(c) {
			c.Sess.Close(broker.ReasonShutdown)
			nc.Close()
			l.sessions.Leave(c)
			return
		}
		go c.serve() // c.end gives the place back
	}
}

// Shutdown stops accepting and ends every connection with ReasonShutdown:
// reading stops at once, and each writer may send what is already queued
// for its client until ctx ends (the drain budget); connections still
// writing then are closed (cotsession.Driver.Shutdown). A client that
// stalls costs at most the budget, never an error: Shutdown returns nil
// once every connection has ended. The broker should be draining
// (Broker.Drain) before, so the closes announce no departures.
func (l *Listener) Shutdown(ctx context.Context) error {
	if l.closing.CompareAndSwap(false, true) {
		if l.ln != nil {
			l.ln.Close()
		}
		if l.sweep != nil {
			close(l.sweep)
		}
	}
	l.sessions.Shutdown(ctx)
	l.wg.Wait()
	if l.waiter != nil {
		// Every connection has ended: none waits for input any more.
		l.waiter.Close()
	}
	if l.readers != nil {
		l.readersOnce.Do(l.readers.close)
	}
	return nil
}

// drainDeadline is how long a writer may drain its queue at shutdown.
func (l *Listener) drainDeadline() time.Time {
	return l.sessions.DrainDeadline(l.cfg.Now().Add(l.cfg.WriteTimeout))
}

// CloseWhere closes every TLS connection whose client certificate serial
// matches (used when a certificate is revoked while connected, api.md §5.11).
func (l *Listener) CloseWhere(match func(serial *big.Int) bool, reason broker.Reason) int {
	return l.sessions.CloseWhere(match, reason)
}

// Stats is a snapshot of the listener's counters.
type Stats struct {
	// Open, OversizeEvents, Impostors, SyntaxErrors, JunkBytes, Paced: the
	// session driver's.
	cotsession.Stats
	Protobuf int // of the open connections, those speaking TAK protocol v1 (the rest XML)
	Net      netx.Stats
}

// Stats returns the listener's counters.
func (l *Listener) Stats() Stats {
	st := Stats{Stats: l.sessions.Stats(), Protobuf: int(l.stats.protobuf.Load())}
	if l.ln != nil {
		st.Net = l.ln.Stats()
	}
	return st
}
