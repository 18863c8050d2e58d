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

	"github.com/google/uuid"

	"outpost/appliance/broker"
	"outpost/appliance/cot"
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
	// reading (throttle.go); bursts of 2 s are allowed. 0: no limit.
	MaxEventsPerSecond int
	MaxBytesPerSecond  int
	ServerUID          string // uid of the negotiation control events (protocol.md §4)

	// Identify returns the user name and certificate serial of a TLS client.
	Identify func(tls.ConnectionState) (user string, serial *big.Int, ok bool)

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
	drainBy atomic.Pointer[time.Time] // set by Shutdown: writers drain until then
	wg      sync.WaitGroup            // accept loop and every connection goroutine

	mu    sync.Mutex // mu guards conns
	conns map[*conn]struct{}

	readers  *readPool     // where connections with input are read (readpool.go)
	waiter   *netx.Waiter  // where idle connections wait (parked.go); nil: readers wait in Read
	flushers *flushers     // who writes busy connections (flusher.go); nil: each writer gathers on its own
	sweep    chan struct{} // closed by Shutdown: ends idleSweep
	noWaiter bool          // set by tests before Serve: run as where there is no waiter

	stats listenerStats
}

type listenerStats struct {
	syntax, oversize, impostor, junkBytes, paced atomic.Uint64
	protobuf                                     atomic.Int64 // connections speaking TAK protocol v1 now
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
	if cfg.ServerUID == "" {
		cfg.ServerUID = "outpost-" + uuid.NewString()
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
	return &Listener{cfg: cfg, log: log, warn: logx.NewLimiter(log, 20, 10*time.Second), conns: map[*conn]struct{}{},
		readers: newReadPool()}
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
		c := l.newConn(nc)
		l.mu.Lock()
		if l.closing.Load() {
			l.mu.Unlock()
			c.sess.Close(broker.ReasonShutdown)
			nc.Close()
			return
		}
		l.conns[c] = struct{}{}
		l.wg.Add(1) // done by c.end
		l.mu.Unlock()
		go c.serve()
	}
}

// Shutdown stops accepting and ends every connection with ReasonShutdown:
// reading stops at once, and each writer may send what is already queued
// for its client until ctx ends (the drain budget); connections still
// writing then are closed. A client that stalls costs at most the budget,
// never an error: Shutdown returns nil once every connection has ended.
// The broker should be draining (Broker.Drain) before, so the closes
// announce no departures.
func (l *Listener) Shutdown(ctx context.Context) error {
	if !l.closing.CompareAndSwap(false, true) {
		l.wg.Wait()
		return nil
	}
	if d, ok := ctx.Deadline(); ok {
		l.drainBy.Store(&d)
	}
	if l.ln != nil {
		l.ln.Close()
	}
	if l.sweep != nil {
		close(l.sweep)
	}
	if l.waiter != nil {
		// Every connection is ended below; none waits for input by then.
		defer l.waiter.Close()
	}
	l.mu.Lock()
	conns := make([]*conn, 0, len(l.conns))
	for c := range l.conns {
		conns = append(conns, c)
	}
	l.mu.Unlock()
	for _, c := range conns {
		c.sess.Close(broker.ReasonShutdown)
	}
	done := make(chan struct{})
	go func() { l.wg.Wait(); close(done) }()
	select {
	case <-done:
	case <-ctx.Done():
		n := 0
		l.mu.Lock()
		for c := range l.conns {
			c.nc.Close()
			n++
		}
		l.mu.Unlock()
		<-done
		l.log.Info("clients still receiving at the end of the drain budget were closed", "connections", n)
	}
	return nil
}

// drainDeadline is how long a writer may drain its queue at shutdown.
func (l *Listener) drainDeadline() time.Time {
	if d := l.drainBy.Load(); d != nil {
		return *d
	}
	return l.cfg.Now().Add(l.cfg.WriteTimeout)
}

// CloseWhere closes every TLS connection whose client certificate serial
// matches (used when a certificate is revoked while connected, api.md §5.11).
func (l *Listener) CloseWhere(match func(serial *big.Int) bool, reason broker.Reason) int {
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
	Protobuf       int    // of which speak TAK protocol v1 (the rest XML)
	OversizeEvents uint64 // events refused: larger than what clients can receive
	Impostors      uint64 // position reports refused: uid bound to another identity
	SyntaxErrors   uint64 // malformed messages skipped
	JunkBytes      uint64 // bytes skipped looking for the next protobuf frame
	Paced          uint64 // times a connection over its rate was made to wait
	Net            netx.Stats
}

// Stats returns the listener's counters.
func (l *Listener) Stats() Stats {
	l.mu.Lock()
	n := len(l.conns)
	l.mu.Unlock()
	st := Stats{Open: n, Protobuf: int(l.stats.protobuf.Load()), OversizeEvents: l.stats.oversize.Load(), Impostors: l.stats.impostor.Load(),
		SyntaxErrors: l.stats.syntax.Load(), JunkBytes: l.stats.junkBytes.Load(), Paced: l.stats.paced.Load()}
	if l.ln != nil {
		st.Net = l.ln.Stats()
	}
	return st
}
