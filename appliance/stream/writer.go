package stream

import (
	"crypto/tls"
	"errors"
	"io"
	"net"
	"sync"
	"sync/atomic"
	"time"

	"outpost/appliance/broker"
	"outpost/appliance/netx"
)

// The writing side of a connection. There is no writer goroutine per idle
// connection: the broker calls wake when something is queued to an empty
// queue. An idle connection's first event goes out at once, from a writer
// goroutine that runs until the session has nothing left. A busy
// connection's events wait a moment (gatherWindow) so that one system call
// carries several: where writes can be tried without waiting (Linux), its
// listener's flusher (flusher.go) writes it once per window, with no
// goroutine of its own; elsewhere its writer goroutine sleeps out the window
// (gather). On TLS, events are packed into full TLS records and the records
// of a batch go out in one system call (the connection is corked).

// Tuning of the writer.
const (
	// gatherWindow is how long a busy connection's events wait for more
	// before they are written: it bounds the latency this adds. Each write
	// system call costs several microseconds (on loopback the receiver's
	// side of TCP is charged to it too); at 200 clients x 5 SA/s a busy
	// connection receives about 1,000 events a second, so 15 ms carries
	// about 14 per call. Measured (BENCHMARKS.md "Load scenarios"): 2 ms
	// gave 3.4 events per call and 2.5-3.0 µs of server CPU per delivery,
	// 10 ms 10 events and about 12 % more CPU than 15 ms, whose p99
	// latency is about 17 ms (under the 20 ms the relay aims for).
	gatherWindow = 15 * time.Millisecond
	// busyWithin: a connection written to this recently is busy.
	busyWithin = 20 * time.Millisecond
	// gatherEnough: with this many events queued there is no point waiting.
	gatherEnough = 32
	// maxWritev bounds the buffers handed to one writev: the runtime caches
	// an iovec array per socket sized by the largest writev it ever made.
	maxWritev = 64
	// tlsRecord is the most plaintext one TLS record carries.
	tlsRecord = 16 << 10
)

// corker is implemented by the connection under a *tls.Conn (netx's
// slotConn): while corked, writes wait in memory until Uncork sends them in
// one system call.
type corker interface {
	Cork()
	Uncork() error
}

// tryWriter is implemented by netx's slotConn once its reads are
// nonblocking: writes that take what the socket takes now and never wait.
type tryWriter interface {
	TryWritev(bufs *net.Buffers) (int, error)
	TryUncork() (sent bool, err error)
}

type writer struct {
	c       *conn
	out     io.Writer   // where frames go: the raw *net.TCPConn (writev) or the *tls.Conn
	tls     *tls.Conn   // nil on TCP
	cork    corker      // nil when the connection under TLS cannot be corked
	try     tryWriter   // nil: every write may wait, and a busy connection gathers on its own goroutine
	fl      *flusher    // with try: the flusher that writes this connection while it is busy
	started atomic.Bool // serve started the writing side: wakes may start runs
	// running: someone owns the writing side: a writer goroutine, or a
	// flusher's round (the writer is due). Whoever sets it writes.
	running   atomic.Bool
	lastWrite atomic.Int64 // when the last write began (monoNow)

	mu       sync.Mutex // mu is held by whoever writes: a writer goroutine, a flusher's round, or finish; it guards the rest
	finished bool
	proto    bool        // the client speaks TAK protocol v1 (after the switch)
	deadline time.Time   // the write deadline last set by armWrite
	gatherT  *time.Timer // gather's timer, made on the first busy write
	spare    []*broker.Envelope
	// What a write that did not wait left unwritten, for writeRest: on TCP
	// rest (its pooled list in restBuf) and restEnv; on TLS restTLS (it
	// waits in the corked connection).
	rest      net.Buffers
	restBuf   *net.Buffers
	restEnv   []*broker.Envelope // the batch's envelopes after rest, not yet encoded
	restBatch []*broker.Envelope // the batch they belong to: recycled once they are written
	restTLS   bool
}

// Scratch space of writes comes from pools, so an idle connection holds
// none of it.
var (
	bufsPool   = sync.Pool{New: func() any { b := make(net.Buffers, 0, maxWritev); return &b }}
	recordPool = sync.Pool{New: func() any { b := make([]byte, 0, tlsRecord); return &b }}
)

// monoNow is a monotonic clock in nanoseconds (a time.Time is too big for
// an atomic).
func monoNow() int64 { return int64(time.Since(monoEpoch)) }

var monoEpoch = time.Now()

func (w *writer) init(c *conn) {
	w.c, w.out = c, c.nc
	if tc, ok := c.nc.(*tls.Conn); ok {
		w.tls = tc
		w.cork, _ = tc.NetConn().(corker)
	} else if u, ok := c.nc.(interface{ NetConn() net.Conn }); ok {
		// Plain TCP: write to the *net.TCPConn itself, so net.Buffers uses
		// one writev per batch (a wrapper hides that method).
		w.out = u.NetConn()
	}
	// The flusher needs writes that never wait: the parked connection's
	// (corked on TLS).
	if t, ok := c.park.(tryWriter); ok && c.l.flushers != nil && (w.tls == nil || w.cork != nil) {
		w.try, w.fl = t, c.l.flushers.pick()
	}
}

// wake starts writing unless someone is: a busy connection joins its
// flusher's next round, any other gets a writer goroutine. It is the
// session's Wake hook: called on the publisher's goroutine, it never
// blocks. Before start (the broker may wake a session whose connection is
// still being set up) it does nothing; start takes whatever is waiting by
// then.
func (w *writer) wake() {
	// A busy connection is woken for every event published; while it is
	// being written (nearly always) a plain load answers without taking
	// the cache line from the core that writes it.
	if !w.started.Load() || w.running.Load() || !w.running.CompareAndSwap(false, true) {
		return
	}
	if last := w.lastWrite.Load(); w.fl != nil && last != 0 && monoNow()-last <= int64(busyWithin) {
		w.fl.add(w)
		return
	}
	go w.run()
}

// start lets wakes start runs, and starts the first one.
func (w *writer) start() {
	w.started.Store(true)
	w.wake()
}

// run is a writer goroutine.
func (w *writer) run() {
	w.mu.Lock()
	w.loop()
}

// loop writes until the session has nothing left or, with a flusher, until
// fewer than gatherEnough events wait: the flusher's next round takes them.
// It is called with w.mu held and unlocks it. A resumed write (a flusher
// round left part of a batch) is finished first.
func (w *writer) loop() {
	c := w.c
	if w.hasRest() {
		if err := w.writeRest(); err != nil {
			w.stop(err)
			return
		}
	}
	for {
		if w.finished || isDone(c.Sess) {
			w.stop(nil)
			return
		}
		if w.fl == nil {
			w.gather()
		}
		batch := c.Sess.Take(w.spare)
		if len(batch) == 0 {
			if !w.release(batch) {
				w.mu.Unlock()
				return
			}
			continue
		}
		err := w.write(batch, time.Time{})
		w.recycle(batch)
		if err != nil {
			w.stop(err)
			return
		}
		if w.fl != nil && !w.burst() {
			w.mu.Unlock()
			w.fl.add(w) // still running: the round owns the writing side now
			return
		}
	}
}

// flush is a flusher round's turn at a writer it owns: it writes what is
// queued without waiting, and reports whether the writer is due again in
// the next round. When the socket does not take the whole batch, or a
// burst is queued, a writer goroutine takes over (loop, with mu still
// held: it sends the rest first).
func (w *writer) flush() bool {
	if !w.mu.TryLock() {
		// Only finish holds mu while a round owns the writer: the
		// connection is ending; the next round sees it finished.
		return true
	}
	c := w.c
	if w.finished || isDone(c.Sess) {
		w.stop(nil)
		return false
	}
	batch := c.Sess.Take(w.spare)
	if len(batch) == 0 {
		again := w.release(batch)
		w.mu.Unlock()
		return again
	}
	err := w.tryWrite(batch)
	if w.restBatch == nil { // else its tail is still to be encoded: writeRest recycles it
		w.recycle(batch)
	}
	if err != nil {
		w.stop(err)
		return false
	}
	if w.hasRest() || w.burst() {
		go w.loop() // mu stays locked: loop unlocks it
		return false
	}
	w.mu.Unlock()
	return true
}

// release gives up the writing side after Take found the queue empty, and
// reports true when it took it back: something was queued between Take and
// the release, whose wake saw a running writer. Take made w.spare the
// queue's storage: the empty batch (the old queue storage) is the spare now.
func (w *writer) release(batch []*broker.Envelope) bool {
	w.recycle(batch)
	w.running.Store(false)
	frames, _ := w.c.Sess.Pending()
	return frames > 0 && w.running.CompareAndSwap(false, true)
}

// burst reports whether enough is queued that waiting for more is
// pointless (gatherEnough).
func (w *writer) burst() bool {
	frames, _ := w.c.Sess.Pending()
	return frames >= gatherEnough
}

// stop ends a run: after a write error it ends the session (a write that
// timed out means the client stopped reading), then gives up the writing
// side and mu.
func (w *writer) stop(err error) {
	c := w.c
	var ne net.Error
	switch {
	case err == nil:
	case errors.As(err, &ne) && ne.Timeout() && c.Sess.Reason() == broker.ReasonNone:
		c.l.warn.Warn("client stopped reading; disconnecting", "session", c.Sess.ID(), "write_timeout", c.l.cfg.WriteTimeout)
		c.Sess.Close(broker.ReasonWriteDeadline)
	default:
		c.Sess.Close(broker.ReasonWriteError)
	}
	w.running.Store(false)
	w.mu.Unlock()
}

func isDone(s *broker.Session) bool {
	select {
	case <-s.Done():
		return true
	default:
		return false
	}
}

// gather lets a busy connection's queue fill for up to gatherWindow, so one
// write carries several events (where there is no flusher).
func (w *writer) gather() {
	if monoNow()-w.lastWrite.Load() > int64(busyWithin) {
		return
	}
	if w.burst() {
		return
	}
	if w.gatherT == nil {
		w.gatherT = time.NewTimer(gatherWindow)
	} else {
		w.gatherT.Reset(gatherWindow)
	}
	select {
	case <-w.gatherT.C:
	case <-w.c.Sess.Done():
		w.gatherT.Stop()
	}
}

// recycle keeps a batch's storage for the next Take, unless a burst grew it.
// Every Take must be followed by a recycle of what it returned: Take hands
// the spare to the queue, so passing the same spare twice would alias the
// queue with a batch being written.
func (w *writer) recycle(batch []*broker.Envelope) {
	clear(batch)
	w.spare = batch[:0]
	if cap(batch) > broker.MaxRetainedQueue {
		w.spare = nil
	}
}

// finish ends the writing side when the reader is done: it waits for a
// running writer, then, in an orderly shutdown, sends what is still queued
// until the drain deadline; otherwise it lets the queue go.
func (w *writer) finish() {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.finished = true
	shutdown := w.c.Sess.Reason() == broker.ReasonShutdown
	for {
		batch := w.c.Sess.Take(w.spare)
		if len(batch) == 0 {
			w.recycle(batch)
			break
		}
		if shutdown && w.write(batch, w.c.l.drainDeadline()) != nil {
			shutdown = false // the client is gone: let the rest go
		}
		w.recycle(batch)
	}
	w.spare = nil
}

// frame is env's bytes in the connection's current format, or nil when it
// cannot be sent. A SwitchFormat envelope switches everything after it to
// protobuf (protocol.md §4).
func (w *writer) frame(env *broker.Envelope) []byte {
	c := w.c
	var b []byte
	var err error
	if w.proto {
		b, err = env.ProtoFrame()
	} else {
		b = env.XML()
	}
	if b = c.Sendable(env, b, err); b == nil {
		return nil
	}
	if env.SwitchFormat && !w.proto {
		w.proto = true
		c.l.stats.protobuf.Add(1)
	}
	return b
}

// write sends a batch before the deadline: one writev per maxWritev frames
// on TCP; on TLS, frames packed into records of up to 16 KiB, every record
// of the batch in one system call. A zero deadline is the writer's own
// (armWrite).
func (w *writer) write(batch []*broker.Envelope, deadline time.Time) error {
	if deadline.IsZero() {
		w.armWrite(w.c.l.cfg.Now())
	} else {
		w.c.nc.SetWriteDeadline(deadline)
		w.deadline = deadline
	}
	w.lastWrite.Store(monoNow())
	if w.tls != nil {
		if w.cork != nil {
			w.cork.Cork()
		}
		err := w.packTLS(batch)
		if w.cork != nil {
			if uerr := w.cork.Uncork(); err == nil {
				err = uerr
			}
		}
		return err
	}
	for len(batch) > 0 {
		bp, n := w.encode(batch)
		batch = batch[n:]
		_, err := (*bp).WriteTo(w.out)
		putBufs(bp)
		if err != nil {
			return err
		}
	}
	return nil
}

// tryWrite is write without waiting (a flusher's round): what the socket
// does not take now is kept for writeRest (w.rest, w.restTLS).
func (w *writer) tryWrite(batch []*broker.Envelope) error {
	whole := batch
	// A write that does not wait still fails once the deadline has passed.
	w.armWrite(w.c.l.cfg.Now())
	w.lastWrite.Store(monoNow())
	if w.tls != nil {
		w.cork.Cork()
		if err := w.packTLS(batch); err != nil {
			return err
		}
		sent, err := w.try.TryUncork()
		w.restTLS = err == nil && !sent
		return err
	}
	for len(batch) > 0 {
		bp, n := w.encode(batch)
		batch = batch[n:]
		bufs := *bp
		for len(bufs) > 0 {
			n, err := w.try.TryWritev(&bufs)
			if err != nil && !errors.Is(err, netx.ErrWouldBlock) {
				putBufs(bp)
				return err
			}
			if n == 0 {
				break // the socket is full: writeRest waits for it
			}
		}
		if len(bufs) > 0 {
			w.rest, w.restBuf, w.restEnv, w.restBatch = bufs, bp, batch, whole
			return nil
		}
		putBufs(bp)
	}
	return nil
}

// writeRest sends what a write that did not wait left (the rest of a
// writev, then the envelopes not yet encoded), waiting as write does.
func (w *writer) writeRest() error {
	w.armWrite(w.c.l.cfg.Now())
	if w.restTLS {
		w.restTLS = false
		return w.cork.Uncork()
	}
	_, err := w.rest.WriteTo(w.out)
	putBufs(w.restBuf)
	w.rest, w.restBuf = nil, nil
	if err == nil && len(w.restEnv) > 0 {
		err = w.write(w.restEnv, time.Time{})
	}
	w.recycle(w.restBatch)
	w.restEnv, w.restBatch = nil, nil
	return err
}

// hasRest reports whether a write that did not wait left something.
func (w *writer) hasRest() bool { return w.rest != nil || w.restTLS }

// encode lists the frames of the batch's first envelopes, at most
// maxWritev, in a pooled buffer list (putBufs); n is how many envelopes it
// took. A write in flight holds one such list, whatever the batch's size.
func (w *writer) encode(batch []*broker.Envelope) (bp *net.Buffers, n int) {
	bp = bufsPool.Get().(*net.Buffers)
	bufs := (*bp)[:0]
	for n < len(batch) && len(bufs) < maxWritev {
		if b := w.frame(batch[n]); b != nil {
			bufs = append(bufs, b)
		}
		n++
	}
	*bp = bufs
	return bp, n
}

func putBufs(bp *net.Buffers) {
	clear((*bp)[:cap(*bp)])
	*bp = (*bp)[:0]
	bufsPool.Put(bp)
}

// armWrite keeps the write deadline at least WriteTimeout ahead. Setting a
// deadline costs a timer update, and a busy connection writes a hundred
// times a second: the deadline is set a quarter further ahead and moved
// only when less than WriteTimeout is left, so a write that blocks is cut
// after between WriteTimeout and 1.25 x WriteTimeout, never sooner.
func (w *writer) armWrite(now time.Time) {
	timeout := w.c.l.cfg.WriteTimeout
	if w.deadline.Sub(now) >= timeout {
		return
	}
	w.deadline = now.Add(timeout + timeout/4)
	w.c.nc.SetWriteDeadline(w.deadline)
}

// packTLS packs frames into TLS records and writes them through the
// *tls.Conn: into the corked connection under it, when it can be corked.
func (w *writer) packTLS(batch []*broker.Envelope) error {
	rp := recordPool.Get().(*[]byte)
	rec := (*rp)[:0]
	defer func() { *rp = rec[:0]; recordPool.Put(rp) }()
	flush := func() error {
		if len(rec) == 0 {
			return nil
		}
		_, err := w.tls.Write(rec)
		rec = rec[:0]
		return err
	}
	for _, env := range batch {
		b := w.frame(env)
		if b == nil {
			continue
		}
		if len(rec)+len(b) > tlsRecord {
			if err := flush(); err != nil {
				return err
			}
		}
		if len(b) >= tlsRecord {
			if _, err := w.tls.Write(b); err != nil { // a big event goes out as its own records
				return err
			}
			continue
		}
		rec = append(rec, b...)
	}
	return flush()
}
