package stream

import (
	"crypto/tls"
	"errors"
	"io"
	"log/slog"
	"math/big"
	"net"
	"os"
	"syscall"
	"time"

	"outpost/appliance/broker"
	"outpost/appliance/cot"
	"outpost/appliance/logx"
)

// conn is one streaming connection: a reader goroutine (serve) and a
// writer goroutine (writeLoop) around one broker session. The session is
// the one owner of "this connection is ending": whoever ends it (the
// reader, the writer, the broker, a revocation, shutdown) closes the
// session first, the first reason wins, and the session's close hook
// unblocks both goroutines.
type conn struct {
	l      *Listener
	nc     net.Conn  // the connection (a *tls.Conn on 8089); deadlines and Close go here
	w      io.Writer // where frames are written: nc, or the raw *net.TCPConn for writev
	log    *slog.Logger
	user   string
	serial *big.Int // client certificate serial on TLS, nil on TCP

	sess *broker.Session // set before the conn is shared; never changes

	wbufs net.Buffers // writer goroutine only: scratch for writeBatch

	// Reader goroutine only: the pacing of this connection, and what was
	// already logged for it.
	throttle                                   throttle
	loggedOversize, loggedImpostor, loggedPace bool

	writerDone chan struct{}
}

// newConn joins the broker for a freshly accepted connection; the broker
// queues the latest-SA replay to it at once.
func (l *Listener) newConn(nc net.Conn) *conn {
	c := &conn{l: l, nc: nc, w: nc, writerDone: make(chan struct{}),
		throttle: newThrottle(l.cfg.MaxEventsPerSecond, l.cfg.MaxBytesPerSecond)}
	if tc, ok := nc.(*tls.Conn); ok {
		if l.cfg.Identify != nil {
			if user, serial, ok := l.cfg.Identify(tc.ConnectionState()); ok {
				c.user, c.serial = user, serial
			}
		}
	} else if u, ok := nc.(interface{ NetConn() net.Conn }); ok {
		// Plain TCP: write to the *net.TCPConn itself, so net.Buffers uses
		// one writev per batch (a wrapper hides that method).
		c.w = u.NetConn()
	}
	c.sess = l.cfg.Broker.Join(broker.SessionInfo{
		Listener: l.cfg.Name, Addr: nc.RemoteAddr().String(), User: c.user,
		Closed: c.onSessionClosed,
	})
	c.log = l.log.With("session", c.sess.ID(), "remote", nc.RemoteAddr().String())
	if c.user != "" {
		c.log = c.log.With("user", logx.Clip(c.user))
	}
	return c
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
	c.log.Debug("client connected")
	neg := cot.NewNegotiator(c.l.cfg.ServerUID)
	if offer := neg.Offer(c.l.cfg.Now()); offer != nil {
		c.sess.Send(broker.NewEnvelope(offer))
	}
	go c.writeLoop()
	c.sess.Close(c.readLoop(neg)) // no-op when someone else closed it first
	<-c.writerDone
	c.nc.Close()
}

// readLoop decodes messages until an error and returns the close reason.
func (c *conn) readLoop(neg *cot.Negotiator) broker.Reason {
	cfg := &c.l.cfg
	dec := cot.NewStreamDecoder(c.nc, cfg.MaxMessage)
	for {
		c.nc.SetReadDeadline(cfg.Now().Add(cfg.IdleTimeout))
		// Whoever ends the connection closes the session before its hook
		// moves the deadline into the past; checking after our own
		// SetReadDeadline means we can never overwrite theirs and block.
		select {
		case <-c.sess.Done():
			return c.sess.Reason()
		default:
		}
		msg, err := dec.Next()
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
				continue
			}
			return c.readErrorReason(err)
		}
		if msg.Auth != nil {
			c.log.Debug("client sent <auth>", "username", logx.Clip(msg.Auth.Username), "uid", logx.Clip(msg.Auth.UID))
			continue
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
				continue
			}
			env := broker.NewEnvelope(reply)
			env.SwitchFormat = switchTo
			if switchTo {
				// The client speaks protobuf from the byte after its request.
				dec.SetProtocol(cot.ProtocolV1)
				c.log.Debug("client switched to TAK protocol v1")
			}
			c.sess.Send(env)
		case cot.IsControl(ev.Type):
			// Consumed, never relayed (protocol.md §5).
		default:
			if err := cfg.Broker.Publish(ev, c.sess); err != nil {
				c.refused(ev, err)
			}
		}
	}
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
		c.log.Debug("read failed", "err", err)
		return broker.ReasonReadError
	}
}

// writeLoop drains the session's queue: each batch becomes one writev
// (net.Buffers) bounded by the write deadline. A blocked write closes the
// session (ReasonWriteDeadline), so one client never delays the others.
func (c *conn) writeLoop() {
	var spare []*broker.Envelope
	proto := false
	defer func() {
		if proto {
			c.l.stats.protobuf.Add(-1)
		}
		close(c.writerDone)
	}()
	for {
		select {
		case <-c.sess.Ready():
		case <-c.sess.Done():
			// Take what is left either way, so the queue's bytes are
			// released; only an orderly shutdown still sends it.
			rest := c.sess.Take(spare)
			if c.sess.Reason() == broker.ReasonShutdown {
				c.writeBatch(rest, &proto, c.l.drainDeadline())
			}
			return
		}
		batch := c.sess.Take(spare)
		if err := c.writeBatch(batch, &proto, c.l.cfg.Now().Add(c.l.cfg.WriteTimeout)); err != nil {
			var ne net.Error
			if errors.As(err, &ne) && ne.Timeout() && c.sess.Reason() == broker.ReasonNone {
				c.l.warn.Warn("client stopped reading; disconnecting", "session", c.sess.ID(), "write_timeout", c.l.cfg.WriteTimeout)
				c.sess.Close(broker.ReasonWriteDeadline)
			} else {
				c.sess.Close(broker.ReasonWriteError)
			}
			return
		}
		clear(batch)
		spare = batch[:0]
		if cap(batch) > broker.MaxRetainedQueue {
			spare = nil
		}
	}
}

// writeBatch encodes each envelope in the connection's current format and
// writes them with one writev per format run. A SwitchFormat envelope ends
// the run: everything after it is protobuf (protocol.md §4).
func (c *conn) writeBatch(batch []*broker.Envelope, proto *bool, deadline time.Time) error {
	// c.wbufs is the writer goroutine's scratch slice, reused across
	// batches so the relay allocates nothing per batch; one grown by a
	// burst (a new client's replay) is let go rather than kept per socket.
	if cap(c.wbufs) > maxWritev {
		c.wbufs = nil
	}
	bufs := c.wbufs[:0]
	defer func() { clear(bufs[:cap(bufs)]); c.wbufs = bufs[:0] }()
	for _, env := range batch {
		var b []byte
		if *proto {
			f, err := env.ProtoFrame()
			if err != nil {
				c.log.Debug("event cannot be encoded as protobuf; skipped", "uid", logx.Clip(env.Event.UID), "err", err)
				continue
			}
			b = f
		} else {
			b = env.XML()
		}
		if len(b) > cot.MaxRelayedEvent {
			// The broker refuses such events at publish; this guards the
			// server's own events and the protobuf encoding.
			c.l.stats.oversize.Add(1)
			c.log.Debug("event larger than 64 KiB not sent", "uid", logx.Clip(env.Event.UID), "bytes", len(b))
			continue
		}
		bufs = append(bufs, b)
		if env.SwitchFormat && !*proto {
			*proto = true
			c.l.stats.protobuf.Add(1)
		}
	}
	if len(bufs) == 0 {
		return nil
	}
	c.nc.SetWriteDeadline(deadline)
	// At most maxWritev buffers per writev: the runtime caches an iovec
	// array per socket sized by the largest writev it ever made, and a
	// thousand connections each keeping a 1024-entry array is 16 MiB.
	for rest := bufs; len(rest) > 0; {
		n := min(len(rest), maxWritev)
		chunk := rest[:n:n]
		if _, err := chunk.WriteTo(c.w); err != nil {
			return err
		}
		rest = rest[n:]
	}
	return nil
}

// maxWritev bounds the buffers handed to one writev.
const maxWritev = 64

// close ends the connection with a reason (revocation).
func (c *conn) close(reason broker.Reason) {
	c.sess.Close(reason)
	c.log.Info("connection closed by the server", "reason", reason.String())
}
