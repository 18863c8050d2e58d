package main

import (
	"context"
	"crypto/tls"
	"errors"
	"net"
	"sync"
	"sync/atomic"
	"time"
)

// A client is one simulated TAK client: one goroutine dials, then reads
// until the run ends. It holds no queue and parses no event: the reader
// cuts messages out of a small buffer and looks for the load tool's
// remarks (scan.go).
type client struct {
	r     *runner
	idx   int
	proto bool // negotiates TAK protocol v1
	slow  bool // reads slowly once the load starts
	hist  *histogram

	nc atomic.Pointer[net.Conn]

	wmu    sync.Mutex // wmu guards wproto and writes
	wproto bool       // writes are protobuf frames

	state     atomic.Int32 // stPending, stReady, stFailed, stGone
	sentSA    bool         // sent its first SA (set before state becomes stReady)
	everReady bool         // reader only: was ready at some point
	neg       int          // reader only: negotiation state
	lastSend  atomic.Int64 // Unix ns of the last write
	readyAt   time.Duration
	startedAt time.Duration // when it began connecting, since the run's start

	// Received, read by the progress and settle loops while running.
	recv        atomic.Int64 // measured SAs received
	arrived     atomic.Int64 // load SAs received, measured or not
	distinct    atomic.Int32 // clients whose SA it has received
	lastNewPeer atomic.Int64 // when distinct last grew, ns since the run's start

	// Reader only while running; read by the report after it exits.
	coalesced, dups, msgs, bytes, pongs, departures, other int64
	seen                                                   []uint64 // bitset over client indexes: an SA was received
	last                                                   []uint32 // per sender slot: last seq received + 1 (0: none)
	dialErrs                                               int
}

const (
	stPending = iota
	stReady
	stFailed // never connected
	stGone   // the connection ended during the run
)

// Negotiation states (protocol.md §4).
const (
	negNone      = iota
	negRequested // t-x-takp-q sent
	negSwitched  // positive t-x-takp-r: protobuf both ways
	negRefused   // negative answer: stays XML
	negTimeout   // no offer or answer in time: stays XML
)

// negotiateTimeout bounds the wait for the offer and the answer. The
// offer follows the replay of every connected client's SA, so a storm of
// thousands may take a while.
const negotiateTimeout = 60 * time.Second

// writeTimeout bounds one write of a client.
const writeTimeout = 10 * time.Second

// Read buffer sizes: small while idle, grown while messages arrive faster
// than one read takes them, never beyond one maximal message.
const (
	minReadBuf  = 4 << 10
	busyReadBuf = 16 << 10
	maxReadBuf  = 2 * maxMessage
)

func (c *client) conn() net.Conn {
	if p := c.nc.Load(); p != nil {
		return *p
	}
	return nil
}

// run connects at start (after the run began) and reads until the end.
// A connection the server closes before sending anything (a TLS handshake
// it gave up on, a connection over its limits) counts as a failed attempt
// and is retried, as TAK clients do, until --connect-timeout.
func (c *client) run(start time.Duration) {
	r := c.r
	defer r.wg.Done()
	if !r.sleepUntil(start) {
		c.state.Store(stFailed)
		return
	}
	c.startedAt = r.since()
	rt := retry{deadline: time.Now().Add(r.o.ConnectTO), backoff: 500 * time.Millisecond}
	for {
		nc, err := c.dial(&rt)
		if err != nil {
			c.state.Store(stFailed)
			r.noteDialFailure(err)
			return
		}
		c.nc.Store(&nc)
		if r.closing.Load() { // teardown raced with the dial
			nc.Close()
			c.state.Store(stFailed)
			return
		}
		var established bool
		if c.proto {
			nc.SetReadDeadline(time.Now().Add(negotiateTimeout))
			established = c.readLoop(nc)
		} else if err = c.sendFirstSA(); err == nil {
			established = c.readLoop(nc)
		}
		if established || r.closing.Load() {
			return
		}
		nc.Close()
		c.dialErrs++
		r.noteDialError(errClosedEarly)
		if !rt.wait(r) {
			c.state.Store(stFailed)
			r.noteDialFailure(errClosedEarly)
			return
		}
	}
}

// errClosedEarly: the server closed the connection before sending anything.
var errClosedEarly = errors.New("closed before any data")

// retry is one client's connection attempts: a deadline and a backoff.
type retry struct {
	deadline time.Time
	backoff  time.Duration
}

// wait sleeps the backoff and doubles it (up to 5 s); false when the
// deadline would pass first or the run ends.
func (rt *retry) wait(r *runner) bool {
	if r.ctx.Err() != nil || time.Until(rt.deadline) < rt.backoff || !r.sleepFor(rt.backoff) {
		return false
	}
	rt.backoff = min(2*rt.backoff, 5*time.Second)
	return true
}

// dial connects (and completes the TLS handshake), retrying until the
// deadline.
func (c *client) dial(rt *retry) (net.Conn, error) {
	r := c.r
	for {
		ctx, cancel := context.WithDeadline(r.ctx, rt.deadline)
		nd := &net.Dialer{Timeout: 15 * time.Second}
		if len(r.o.local) > 0 {
			nd.LocalAddr = r.o.local[c.idx%len(r.o.local)]
		}
		var nc net.Conn
		var err error
		if r.tls != nil {
			td := &tls.Dialer{NetDialer: nd, Config: r.tls[c.idx%len(r.tls)]}
			nc, err = td.DialContext(ctx, "tcp", r.o.Addr)
		} else {
			nc, err = nd.DialContext(ctx, "tcp", r.o.Addr)
		}
		cancel()
		if err == nil {
			return nc, nil
		}
		c.dialErrs++
		r.noteDialError(err)
		if !rt.wait(r) {
			return nil, err
		}
	}
}

// sendFirstSA sends the client's first SA, as ATAK does on connect (in
// --idle runs only the --senders do).
func (c *client) sendFirstSA() error {
	r := c.r
	c.sentSA = !r.o.Idle || r.slotOf[c.idx] >= 0
	if !c.sentSA {
		return nil
	}
	now := time.Now()
	return c.write(func(dst []byte, proto bool) ([]byte, error) {
		return r.sa.build(dst, proto, c.idx, 0, now, false)
	})
}

// markReady counts the client as connected: the server sent it something
// (an XML client) or the negotiation ended (protocol.md §4).
func (c *client) markReady() {
	r := c.r
	c.readyAt = r.since()
	c.everReady = true
	c.lastSend.Store(time.Now().UnixNano()) // the first ping is due an interval after connecting
	if c.sentSA {
		r.readySent.Add(1)
	}
	if !c.state.CompareAndSwap(stPending, stReady) {
		if c.sentSA {
			r.readySent.Add(-1)
		}
		return
	}
	r.readyDelta(c.slow, 1)
}

// write sends one message built in the connection's current format.
func (c *client) write(build func(dst []byte, proto bool) ([]byte, error)) error {
	nc := c.conn()
	if nc == nil {
		return net.ErrClosed
	}
	bp := bufPool.Get().(*[]byte)
	defer bufPool.Put(bp)
	c.wmu.Lock()
	defer c.wmu.Unlock()
	b, err := build((*bp)[:0], c.wproto)
	if err != nil {
		return err
	}
	*bp = b[:0]
	nc.SetWriteDeadline(time.Now().Add(writeTimeout))
	_, err = nc.Write(b)
	c.lastSend.Store(time.Now().UnixNano())
	return err
}

var bufPool = sync.Pool{New: func() any { b := make([]byte, 0, 2048); return &b }}

// gone records that the connection ended during the run (the first
// caller wins: reader, sender or pinger) and closes it.
func (c *client) gone(err error) {
	r := c.r
	if r.closing.Load() {
		return
	}
	prev := c.state.Swap(stGone)
	if prev == stGone {
		return
	}
	if prev == stReady {
		r.readyDelta(c.slow, -1)
		if c.sentSA {
			r.readySent.Add(-1)
		}
	}
	r.count(r.gone, err)
	if nc := c.conn(); nc != nil {
		nc.Close()
	}
}

// classify names an error for the report's counts.
func classify(err error) string {
	var ne net.Error
	var tlsErr tls.AlertError
	var recErr tls.RecordHeaderError
	var certErr *tls.CertificateVerificationError
	switch {
	case err == nil:
		return "none"
	case errors.Is(err, context.Canceled):
		return "canceled"
	case errors.Is(err, errClosedEarly):
		return errClosedEarly.Error()
	case errors.As(err, &certErr):
		return "tls: server certificate not trusted"
	case errors.As(err, &tlsErr), errors.As(err, &recErr):
		return "tls: " + err.Error()
	case errors.Is(err, errFraming):
		return "stream framing broken"
	case isEOF(err):
		return "closed by the server"
	case isReset(err):
		return "connection reset"
	case isRefused(err):
		return "connection refused"
	case errors.As(err, &ne) && ne.Timeout():
		return "timeout"
	default:
		return "error"
	}
}
