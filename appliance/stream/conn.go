package stream

import (
	"crypto/tls"
	"errors"
	"io"
	"log/slog"
	"math/big"
	"net"
	"os"
	"sync"
	"syscall"
	"time"

	"outpost/appliance/broker"
	"outpost/appliance/cot"
	"outpost/appliance/logx"
	"outpost/appliance/netx"
)

// conn is one streaming connection: a reader goroutine (serve) around one
// broker session, and a writer goroutine that exists only while there is
// something to write (writer.go). The session is the one owner of "this
// connection is ending": whoever ends it (the reader, the writer, the
// broker, a revocation, shutdown) closes the session first, the first
// reason wins, and the session's close hook unblocks the reader and a
// writer blocked on the socket.
type conn struct {
	l      *Listener
	nc     net.Conn // the connection (a *tls.Conn on 8089); deadlines and Close go here
	user   string
	serial *big.Int // client certificate serial on TLS, nil on TCP
	remote string

	sess *broker.Session // set before the conn is shared; never changes

	logOnce sync.Once
	logger  *slog.Logger // made on first use (log): most connections never log

	w writer // the writing side (writer.go)

	// park is the connection under any TLS, when its reads are nonblocking
	// (Linux): the reader then waits in park.WaitReadable and decodes on a
	// goroutine of the listener's readPool (readLoop). nil: the reader waits
	// inside Read.
	park parker
	// What readReady works with, set by readLoop before each run.
	dec  *cot.StreamDecoder
	neg  *cot.Negotiator
	done chan readResult

	// Reader goroutine only: the pacing of this connection, and what was
	// already logged for it.
	throttle                                   throttle
	loggedOversize, loggedImpostor, loggedPace bool
}

// newConn joins the broker for a freshly accepted connection; the session's
// replay is taken by the writer as soon as serve starts it.
func (l *Listener) newConn(nc net.Conn) *conn {
	c := &conn{l: l, nc: nc, remote: nc.RemoteAddr().String(),
		throttle: newThrottle(l.cfg.MaxEventsPerSecond, l.cfg.MaxBytesPerSecond)}
	if tc, ok := nc.(*tls.Conn); ok && l.cfg.Identify != nil {
		if user, serial, ok := l.cfg.Identify(tc.ConnectionState()); ok {
			c.user, c.serial = user, serial
		}
	}
	raw := nc
	if tc, ok := nc.(*tls.Conn); ok {
		raw = tc.NetConn()
	}
	if p, ok := raw.(parker); ok && p.ReadNonblocking() {
		c.park = p
	}
	c.w.init(c)
	c.sess = l.cfg.Broker.Join(broker.SessionInfo{
		Listener: l.cfg.Name, Addr: c.remote, User: c.user,
		Closed: c.onSessionClosed, Wake: c.w.wake,
	})
	return c
}

// log is the connection's logger (session, remote address, user).
func (c *conn) log() *slog.Logger {
	c.logOnce.Do(func() {
		c.logger = c.l.log.With("session", c.sess.ID(), "remote", c.remote)
		if c.user != "" {
			c.logger = c.logger.With("user", logx.Clip(c.user))
		}
	})
	return c.logger
}

// onSessionClosed runs once when the session closes, whoever closed it. It
// unblocks a reader waiting for input. Except in an orderly shutdown (where
// the writer still sends what is queued, until the drain deadline) it also
// unblocks a writer stuck on a client that stopped reading.
func (c *conn) onSessionClosed(reason broker.Reason) {
	c.nc.SetReadDeadline(time.Unix(1, 0))
	if reason != broker.ReasonShutdown {
		c.nc.SetWriteDeadline(time.Unix(1, 0))
	}
}

// serve runs the connection until it ends: offer protobuf after the replay
// (protocol.md §4), then read until the client goes away.
func (c *conn) serve() {
	neg := cot.NewNegotiator(c.l.cfg.ServerUID)
	if offer := neg.Offer(c.l.cfg.Now()); offer != nil {
		c.sess.Send(broker.NewEnvelope(offer))
	}
	c.w.start()                   // the replay, then the offer
	c.sess.Close(c.readLoop(neg)) // no-op when someone else closed it first
	c.w.finish()
	c.sess.Release()
	c.nc.Close()
}

// parker is netx's accepted connection: nonblocking reads, and a wait for
// input that holds no buffer (netx/park.go).
type parker interface {
	ReadNonblocking() bool
	WaitReadable() error
}

// readResult is how readReady reports back to readLoop.
type readResult struct {
	reason broker.Reason
	stop   bool
}

// readLoop reads and handles messages until the connection ends, and
// returns the close reason. With nonblocking reads (c.park), this goroutine
// only waits for input: decoding and handling run on a goroutine of the
// listener's readPool, until nothing more is ready. The waiting goroutine's
// stack so stays at the runtime's 2 KiB minimum however deep decoding (or a
// TLS record) went, which is most of an idle connection's cost
// (docs/architecture.md "Memory per connection").
func (c *conn) readLoop(neg *cot.Negotiator) broker.Reason {
	dec := cot.NewStreamDecoder(c.nc, c.l.cfg.MaxMessage)
	if c.park == nil {
		return c.readBlocking(dec, neg)
	}
	dec.SetNonblocking()
	c.dec, c.neg, c.done = dec, neg, make(chan readResult)
	if c.armRead() {
		return c.sess.Reason()
	}
	for {
		// Read first, wait after: a TLS client's first records may have
		// come with its handshake and be buffered in the *tls.Conn already,
		// with nothing left on the socket to wake a wait. readReady ends
		// only when a read had to go to the socket and found nothing. (A
		// close while it runs makes its next read fail: the session's hook
		// moved the deadline into the past.)
		c.l.readers.run(c)
		if r := <-c.done; r.stop {
			return r.reason
		}
		if c.armRead() {
			return c.sess.Reason()
		}
		if err := c.park.WaitReadable(); err != nil {
			return c.readErrorReason(err)
		}
	}
}

// armRead sets the idle deadline and reports whether the session is over.
// Whoever ends the connection closes the session before its hook moves the
// deadline into the past; checking after our own SetReadDeadline means we
// can never overwrite theirs and wait on.
func (c *conn) armRead() (done bool) {
	c.nc.SetReadDeadline(c.l.cfg.Now().Add(c.l.cfg.IdleTimeout))
	return isDone(c.sess)
}

// readReady decodes and handles what can be read without waiting, then
// reports on c.done.
func (c *conn) readReady() {
	for {
		msg, err := c.dec.Next()
		if errors.Is(err, netx.ErrWouldBlock) {
			c.done <- readResult{}
			return
		}
		if reason, stop := c.handle(c.dec, c.neg, &msg, err); stop {
			c.done <- readResult{reason, true}
			return
		}
		// A client that never pauses keeps this goroutine reading: its
		// deadline moves with every message, as in readBlocking.
		if c.armRead() {
			c.done <- readResult{c.sess.Reason(), true}
			return
		}
	}
}

// readBlocking is readLoop where reads wait (no c.park). It keeps its own
// frame small and hands each message to handle: an idle connection's
// reader waits at this depth.
func (c *conn) readBlocking(dec *cot.StreamDecoder, neg *cot.Negotiator) broker.Reason {
	for {
		if c.armRead() {
			return c.sess.Reason()
		}
		msg, err := dec.Next()
		if reason, stop := c.handle(dec, neg, &msg, err); stop {
			return reason
		}
	}
}

// handle deals with one result of the decoder: pacing, counting, answering
// pings and negotiation, publishing. stop reports the end of the connection.
//
//go:noinline
func (c *conn) handle(dec *cot.StreamDecoder, neg *cot.Negotiator, msg *cot.Message, err error) (reason broker.Reason, stop bool) {
	cfg := &c.l.cfg
	if msg.Size > 0 && c.throttle.pace(cfg.Now(), msg.Size, c.sess.Done()) {
		c.l.stats.paced.Add(1)
		if !c.loggedPace {
			c.loggedPace = true
			c.l.warn.Info("client sends faster than its rate; reading from it is paced (logged once per connection)",
				"session", c.sess.ID(), "events_per_second", cfg.MaxEventsPerSecond, "bytes_per_second", cfg.MaxBytesPerSecond)
		}
	}
	if msg.Junk > 0 {
		c.l.stats.junkBytes.Add(uint64(msg.Junk))
		c.l.warn.Debug("bytes skipped looking for the next protobuf frame", "session", c.sess.ID(), "bytes", msg.Junk)
	}
	if err != nil {
		var se *cot.SyntaxError
		if errors.As(err, &se) {
			c.l.stats.syntax.Add(1)
			c.l.warn.Debug("malformed CoT message skipped", "session", c.sess.ID(), "err", logx.Clip(se.Msg))
			return broker.ReasonNone, false
		}
		return c.readErrorReason(err), true
	}
	if msg.Auth != nil {
		c.log().Debug("client sent <auth>", "username", logx.Clip(msg.Auth.Username), "uid", logx.Clip(msg.Auth.UID))
		return broker.ReasonNone, false
	}
	ev := msg.Event
	now := cfg.Now()
	switch {
	case cot.IsPing(ev.Type):
		// protocol.md §5: answer on this connection only.
		c.sess.Send(broker.NewEnvelope(cot.NewPong(now)))
	case ev.Type == "t-x-takp-q":
		reply, switchTo, ok := neg.Handle(ev, now)
		if !ok {
			return broker.ReasonNone, false
		}
		env := broker.NewEnvelope(reply)
		env.SwitchFormat = switchTo
		if switchTo {
			// The client speaks protobuf from the byte after its request.
			dec.SetProtocol(cot.ProtocolV1)
			c.log().Debug("client switched to TAK protocol v1")
		}
		c.sess.Send(env)
	case cot.IsControl(ev.Type):
		// Consumed, never relayed (protocol.md §5).
	default:
		if err := cfg.Broker.Publish(ev, c.sess); err != nil {
			c.refused(ev, err)
		}
	}
	return broker.ReasonNone, false
}

// refused counts an event the broker refused and logs it once per
// connection and kind (and at a bounded rate across connections).
func (c *conn) refused(ev *cot.Event, err error) {
	switch {
	case errors.Is(err, broker.ErrTooLarge):
		c.l.stats.oversize.Add(1)
		if !c.loggedOversize {
			c.loggedOversize = true
			c.l.warn.Warn("event refused: larger than what clients can receive (logged once per connection)",
				"session", c.sess.ID(), "uid", logx.Clip(ev.UID), "type", logx.Clip(ev.Type), "err", err.Error())
		}
	case errors.Is(err, broker.ErrUIDTaken):
		c.l.stats.impostor.Add(1)
		if !c.loggedImpostor {
			c.loggedImpostor = true
			c.l.warn.Warn("position report refused: its uid belongs to another client (logged once per connection)",
				"session", c.sess.ID(), "user", logx.Clip(c.user), "uid", logx.Clip(ev.UID), "err", err.Error())
		}
	}
}

func (c *conn) readErrorReason(err error) broker.Reason {
	if r := c.sess.Reason(); r != broker.ReasonNone {
		return r
	}
	var ne net.Error
	switch {
	case errors.Is(err, io.EOF):
		return broker.ReasonClientClosed
	case errors.Is(err, cot.ErrTooLarge):
		c.l.warn.Warn("client sent a message larger than the limit; disconnecting", "session", c.sess.ID(), "limit", c.l.cfg.MaxMessage)
		return broker.ReasonTooLarge
	case errors.As(err, &ne) && ne.Timeout(), errors.Is(err, os.ErrDeadlineExceeded):
		return broker.ReasonIdle
	case errors.Is(err, io.ErrUnexpectedEOF), errors.Is(err, syscall.ECONNRESET):
		// The client went away mid-message or without a TLS close_notify.
		return broker.ReasonClientClosed
	default:
		c.log().Debug("read failed", "err", err)
		return broker.ReasonReadError
	}
}

// close ends the connection with a reason (revocation).
func (c *conn) close(reason broker.Reason) {
	c.sess.Close(reason)
	c.log().Info("connection closed by the server", "reason", reason.String())
}
