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
	"sync/atomic"
	"syscall"
	"time"

	"outpost/appliance/broker"
	"outpost/appliance/cot"
	"outpost/appliance/logx"
)

// conn is one streaming connection around one broker session. Its reading
// side runs only while there is input (parked.go: on Linux an idle
// connection has no goroutine; elsewhere a reader goroutine waits in Read),
// and its writer only while there is something to write (writer.go). The
// session is the one owner of "this connection is ending": whoever ends it
// (the reader, the writer, the broker, a revocation, shutdown, the idle
// sweep) closes the session first, the first reason wins, and the
// session's close hook wakes the reading side and unblocks a writer
// blocked on the socket. The reading side then ends the connection (end).
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
	// and the listener has a waiter (Linux): parked.go. nil: the reader
	// waits inside Read (readBlocking).
	park parker
	// What readReady works with, set by serve.
	dec         *cot.StreamDecoder
	neg         *cot.Negotiator
	state       atomic.Int32 // reading or parked (parked.go)
	lastMessage atomic.Int64 // when the last complete message was read (Unix nanoseconds): the idle sweep's clock
	wakeFn      func()       // c.wake, made once

	// Reading side only (one run at a time): the pacing of this connection,
	// and what was already logged for it.
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
	if p, ok := raw.(parker); ok && l.waiter != nil && p.ReadNonblocking() {
		c.park, c.wakeFn = p, c.wake
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
	if c.park != nil {
		c.wake()
	}
	if reason != broker.ReasonShutdown {
		c.nc.SetWriteDeadline(time.Unix(1, 0))
	}
}

// serve starts the connection: offer protobuf after the replay
// (protocol.md §4), then read. With a parked reading side it returns as
// soon as nothing is ready to read, and the connection lives on without a
// goroutine; otherwise it reads until the client goes away.
func (c *conn) serve() {
	neg := cot.NewNegotiator(c.l.cfg.ServerUID)
	if offer := neg.Offer(c.l.cfg.Now()); offer != nil {
		c.sess.Send(broker.NewEnvelope(offer))
	}
	c.w.start() // the replay, then the offer
	dec := cot.NewStreamDecoder(c.nc, c.l.cfg.MaxMessage)
	if c.park == nil {
		c.end(c.readBlocking(dec, neg))
		return
	}
	dec.SetNonblocking()
	c.dec, c.neg = dec, neg
	c.startParked()
}

// end ends the connection once its reading side is done: it closes the
// session (a no-op when someone else closed it first), lets the writer
// finish, and releases the connection's slot in the listener.
func (c *conn) end(reason broker.Reason) {
	if c.park != nil {
		c.park.StopNotify()
	}
	c.sess.Close(reason)
	c.w.finish()
	c.sess.Release()
	c.nc.Close()
	c.l.mu.Lock()
	delete(c.l.conns, c)
	c.l.mu.Unlock()
	c.l.wg.Done()
}

// readBlocking reads where reads wait (no c.park): the connection's
// goroutine waits inside Read, with the idle timeout as read deadline. It
// keeps its own frame small and hands each message to handle: an idle
// connection's reader waits at this depth.
func (c *conn) readBlocking(dec *cot.StreamDecoder, neg *cot.Negotiator) broker.Reason {
	for {
		c.nc.SetReadDeadline(c.l.cfg.Now().Add(c.l.cfg.IdleTimeout))
		// Whoever ends the connection closes the session before its hook
		// moves the deadline into the past; checking after our own
		// SetReadDeadline means we can never overwrite theirs and wait on.
		if isDone(c.sess) {
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
