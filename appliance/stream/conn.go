package stream

import (
	"crypto/tls"
	"net"
	"sync/atomic"
	"time"

	"outpost/appliance/broker"
	"outpost/appliance/cot"
	"outpost/appliance/cotsession"
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
	// The broker session (Sess), identity, pacing and what every CoT
	// transport does with a message: package cotsession.
	cotsession.Session

	l  *Listener
	nc net.Conn // the connection (a *tls.Conn on 8089); deadlines and Close go here

	w writer // the writing side (writer.go)

	// park is the connection under any TLS, when its reads are nonblocking
	// and the listener has a waiter (Linux): parked.go. nil: the reader
	// waits inside Read (readBlocking).
	park parker
	// What readReady works with, set by serve.
	dec         *cot.StreamDecoder
	state       atomic.Int32 // reading or parked (parked.go)
	lastMessage atomic.Int64 // when the last complete message was read (Unix nanoseconds): the idle sweep's clock
	wakeFn      func()       // c.wake, made once
}

// newConn joins the broker for a freshly accepted connection; the session's
// replay is taken by the writer as soon as serve starts it.
func (l *Listener) newConn(nc net.Conn) *conn {
	c := &conn{l: l, nc: nc}
	var id cotsession.Identity
	if tc, ok := nc.(*tls.Conn); ok && l.cfg.Identify != nil {
		id = l.cfg.Identify(tc.ConnectionState())
	}
	raw := nc
	if tc, ok := nc.(*tls.Conn); ok {
		raw = tc.NetConn()
	}
	if p, ok := raw.(parker); ok && l.waiter != nil && p.ReadNonblocking() {
		c.park, c.wakeFn = p, c.wake
	}
	c.w.init(c)
	l.sessions.Join(&c.Session, broker.SessionInfo{Addr: nc.RemoteAddr().String(),
		Closed: c.onSessionClosed, Wake: c.w.wake}, id)
	return c
}

// Cut closes the connection at once (cotsession.Driver.Shutdown, when the
// drain budget is spent).
func (c *conn) Cut() { c.nc.Close() }

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
	dec := cot.NewStreamDecoder(c.nc, c.l.cfg.MaxMessage)
	c.Negotiate(dec)
	c.w.start() // the replay, then the offer
	if c.park == nil {
		c.end(c.readBlocking(dec))
		return
	}
	dec.SetNonblocking()
	c.dec = dec
	c.startParked()
}

// end ends the connection once its reading side is done: it closes the
// session (a no-op when someone else closed it first), lets the writer
// finish, and gives the connection's place in the listener back.
func (c *conn) end(reason broker.Reason) {
	if c.park != nil {
		c.park.StopNotify()
	}
	c.Sess.Close(reason)
	c.w.finish()
	c.Sess.Release()
	c.nc.Close()
	c.l.sessions.Leave(c)
}

// readBlocking reads where reads wait (no c.park): the connection's
// goroutine waits inside Read, with the idle timeout as read deadline. It
// keeps its own frame small and hands each message to Handle (cotsession):
// an idle connection's reader waits at this depth.
func (c *conn) readBlocking(dec *cot.StreamDecoder) broker.Reason {
	for {
		c.nc.SetReadDeadline(c.l.cfg.Now().Add(c.l.cfg.IdleTimeout))
		// Whoever ends the connection closes the session before its hook
		// moves the deadline into the past; checking after our own
		// SetReadDeadline means we can never overwrite theirs and wait on.
		if isDone(c.Sess) {
			return c.Sess.Reason()
		}
		msg, err := dec.Next()
		if reason, stop := c.Handle(&msg, err); stop {
			return reason
		}
	}
}
