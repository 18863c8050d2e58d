package stream

import (
	"errors"
	"time"

	"outpost/appliance/broker"
	"outpost/appliance/netx"
)

// Parked reading (Linux; docs/architecture.md "Memory per connection"). An
// idle connection is the common case, and a goroutine waiting for its
// input costs at least the runtime's 2 KiB minimum stack. So a connection
// with nothing to read has no goroutine: it is armed on the listener's
// netx.Waiter (one goroutine and one epoll instance for all of them), and
// when input arrives the waiter hands the connection to the listener's
// reading pool, where readReady reads, decodes and handles with
// nonblocking reads until a read finds nothing; then the connection parks
// again. The decoder keeps a partly received message across those reads,
// and a *tls.Conn a partly received record.
//
// At most one run of readReady exists per connection: a run starts only by
// moving the state from parked to reading (wake), and the run itself moves
// it back (parkReading) before arming the waiter. Whoever else ends the
// connection closes its session, whose hook moves the read deadline into
// the past and wakes it: the run's next read fails and the run ends the
// connection. The idle timeout is the listener's sweep (idleSweep), which
// closes the session of a parked connection whose last complete message
// is older than IdleTimeout.

// parker is netx's accepted connection: nonblocking reads, and waiting for
// input on a netx.Waiter (netx/park.go).
type parker interface {
	ReadNonblocking() bool
	NotifyReadable(w *netx.Waiter, ready func()) error
	StopNotify()
}

// The states of a parked reading side.
const (
	reading int32 = iota // a run of readReady owns the reading side
	parked               // armed on the waiter, or about to be
)

// startParked runs the first read run on serve's goroutine, which then
// ends. Reading comes before the first wait: a TLS client's first records
// may have come with its handshake and be buffered in the *tls.Conn
// already, with nothing left on the socket to report.
func (c *conn) startParked() {
	c.state.Store(reading)
	c.lastMessage.Store(c.l.cfg.Now().UnixNano())
	// A deadline left from the handshake must not fail the first reads;
	// a close before this line is seen by the check below.
	c.nc.SetReadDeadline(time.Time{})
	if isDone(c.Sess) {
		c.end(c.Sess.Reason())
		return
	}
	c.readReady()
}

// wake starts a read run unless one is running. It is the waiter's report
// and the session's close hook; it never blocks.
func (c *conn) wake() {
	if c.state.CompareAndSwap(parked, reading) {
		c.l.readers.run(c)
	}
}

// readReady decodes and handles what can be read without waiting, then
// parks the connection, or ends it.
func (c *conn) readReady() {
	for {
		msg, err := c.dec.Next()
		if errors.Is(err, netx.ErrWouldBlock) {
			if c.parkReading() {
				return
			}
			continue
		}
		if reason, stop := c.Handle(&msg, err); stop {
			c.end(reason)
			return
		}
		c.lastMessage.Store(c.l.cfg.Now().UnixNano())
	}
}

// parkReading hands the connection to the waiter and reports true, or reports
// false when this run must go on reading: the session closed meanwhile,
// and the next read fails at the deadline the close hook set.
func (c *conn) parkReading() bool {
	c.state.Store(parked)
	// Parked first, armed after: a report or a close from here on starts
	// a run through wake. A close that came before the Store found this
	// run still reading, so look once more.
	if isDone(c.Sess) {
		// Either this run takes the connection back, or a wake already
		// started the run that ends it.
		return !c.state.CompareAndSwap(parked, reading)
	}
	if err := c.park.NotifyReadable(c.l.waiter, c.wakeFn); err != nil {
		// The connection is closed under us: end it, unless a wake took it.
		if c.state.CompareAndSwap(parked, reading) {
			c.end(c.ReadErrorReason(err))
		}
		return true
	}
	return true
}

// idleSweep closes, every tick, the sessions of parked connections whose
// last complete message came longer than the idle timeout ago
// (ReasonIdle): a client that trickles the bytes of a message it never
// completes is idle too. It ends with the listener's Shutdown.
func (l *Listener) idleSweep(stop <-chan struct{}) {
	defer l.wg.Done()
	tick := min(time.Second, max(l.cfg.IdleTimeout/4, 10*time.Millisecond))
	t := time.NewTicker(tick)
	defer t.Stop()
	var idle []*conn
	for {
		select {
		case <-stop:
			return
		case <-t.C:
		}
		limit := l.cfg.Now().Add(-l.cfg.IdleTimeout).UnixNano()
		idle = l.sessions.Conns(idle, func(c *conn) bool {
			return c.park != nil && c.state.Load() == parked && c.lastMessage.Load() < limit
		})
		for i, c := range idle {
			c.Sess.Close(broker.ReasonIdle)
			idle[i] = nil
		}
		idle = idle[:0]
	}
}
