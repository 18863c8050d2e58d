package stream

import (
	"context"
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
)

// Close reasons recorded by this package (the broker adds "slow consumer"
// and "server shutdown").
const (
	ReasonClientClosed = "client closed"
	ReasonIdle         = "idle timeout"
	ReasonTooLarge     = "message too large"
	ReasonReadError    = "read error"
	ReasonWriteError   = "write error"
	ReasonRevoked      = "certificate revoked"
)

// conn is one streaming connection: a reader goroutine (serve) and a
// writer goroutine (writeLoop) around one broker session.
type conn struct {
	l      *Listener
	nc     net.Conn
	log    *slog.Logger
	user   string
	serial *big.Int // client certificate serial on TLS, nil on TCP

	sess *broker.Session // set before the conn is shared; never changes

	wbufs net.Buffers // writer goroutine only: scratch for writeBatch

	shutdownOnce sync.Once
	shutdownCtx  atomic.Pointer[context.Context] // set by beginShutdown
	stopping     chan struct{}                   // closed by beginShutdown
	writerDone   chan struct{}
}

// newConn joins the broker for a freshly accepted connection; the broker
// queues the latest-SA replay to it at once.
func (l *Listener) newConn(nc net.Conn) *conn {
	c := &conn{l: l, nc: nc, stopping: make(chan struct{}), writerDone: make(chan struct{})}
	if tc, ok := nc.(*tls.Conn); ok && l.cfg.Identify != nil {
		if user, serial, ok := l.cfg.Identify(tc.ConnectionState()); ok {
			c.user, c.serial = user, serial
		}
	}
	c.sess = l.cfg.Broker.Join(broker.SessionInfo{
		Listener: l.cfg.Name, Addr: nc.RemoteAddr().String(), User: c.user,
		Closed: c.onSessionClosed,
	})
	c.log = l.log.With("session", c.sess.ID(), "addr", nc.RemoteAddr().String())
	if c.user != "" {
		c.log = c.log.With("user", c.user)
	}
	return c
}

// onSessionClosed runs when the broker or this package closes the session.
// Except in an orderly shutdown (where the writer still drains the queue),
// it unblocks a reader waiting for input and a writer stuck on a client
// that stopped reading, so the connection ends at once.
func (c *conn) onSessionClosed(reason string) {
	if reason != broker.ReasonShutdown {
		c.nc.SetDeadline(time.Unix(1, 0))
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
	reason := c.readLoop(neg)
	select {
	case <-c.stopping:
		// Shutdown: the writer drains the queue; the session is closed.
	default:
		c.sess.Close(reason)
	}
	<-c.writerDone
	c.nc.Close()
}

// readLoop decodes messages until an error and returns the close reason.
func (c *conn) readLoop(neg *cot.Negotiator) string {
	cfg := &c.l.cfg
	dec := cot.NewStreamDecoder(c.nc, cfg.MaxMessage)
	for {
		c.nc.SetReadDeadline(cfg.Now().Add(cfg.IdleTimeout))
		// Whoever ends the connection closes done/stopping before moving
		// the deadline into the past; checking after our own SetReadDeadline
		// means we can never overwrite theirs and block for IdleTimeout.
		if reason, ended := c.ended(); ended {
			return reason
		}
		msg, err := dec.Next()
		if err != nil {
			var se *cot.SyntaxError
			if errors.As(err, &se) {
				c.l.stats.syntax.Add(1)
				c.log.Debug("malformed CoT message skipped", "err", err)
				continue
			}
			return c.readErrorReason(err)
		}
		if msg.Auth != nil {
			c.log.Debug("client sent <auth>", "username", msg.Auth.Username, "uid", msg.Auth.UID)
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
			cfg.Broker.Publish(ev, c.sess)
		}
	}
}

// ended reports whether the connection was already ended by someone else
// (broker, shutdown, revocation) and with which reason.
func (c *conn) ended() (string, bool) {
	select {
	case <-c.sess.Done():
		return c.sess.Reason(), true
	case <-c.stopping:
		return broker.ReasonShutdown, true
	default:
		return "", false
	}
}

func (c *conn) readErrorReason(err error) string {
	if reason, ended := c.ended(); ended {
		return reason
	}
	var ne net.Error
	switch {
	case errors.Is(err, io.EOF):
		return ReasonClientClosed
	case errors.Is(err, cot.ErrTooLarge):
		c.log.Warn("client sent a message larger than the limit; disconnecting", "limit", c.l.cfg.MaxMessage)
		return ReasonTooLarge
	case errors.As(err, &ne) && ne.Timeout(), errors.Is(err, os.ErrDeadlineExceeded):
		return ReasonIdle
	case errors.Is(err, io.ErrUnexpectedEOF), errors.Is(err, syscall.ECONNRESET):
		// The client went away mid-message or without a TLS close_notify.
		return ReasonClientClosed
	default:
		c.log.Debug("read failed", "err", err)
		return ReasonReadError
	}
}

// writeLoop drains the session's queue: each batch becomes one writev
// (net.Buffers) bounded by the write deadline. A blocked write closes the
// session as a slow consumer, so one client never delays the others.
func (c *conn) writeLoop() {
	defer close(c.writerDone)
	var spare []*broker.Envelope
	proto := false
	for {
		select {
		case <-c.sess.Ready():
		case <-c.sess.Done():
			if c.sess.Reason() == broker.ReasonShutdown {
				// Orderly shutdown: write what is still queued, bounded by
				// the shutdown deadline.
				deadline := c.l.cfg.Now().Add(c.l.cfg.WriteTimeout)
				if ctx := c.shutdownCtx.Load(); ctx != nil {
					if d, ok := (*ctx).Deadline(); ok {
						deadline = d
					}
				}
				c.writeBatch(c.sess.Take(spare), &proto, deadline)
			}
			// Unblock the reader, which may be waiting for input.
			c.nc.SetReadDeadline(time.Unix(1, 0))
			return
		}
		batch := c.sess.Take(spare)
		if err := c.writeBatch(batch, &proto, c.l.cfg.Now().Add(c.l.cfg.WriteTimeout)); err != nil {
			var ne net.Error
			if errors.As(err, &ne) && ne.Timeout() {
				c.log.Warn("client stopped reading; disconnecting", "write_timeout", c.l.cfg.WriteTimeout)
				c.sess.Close(broker.ReasonSlowConsumer)
			} else {
				c.sess.Close(ReasonWriteError)
			}
			c.nc.SetReadDeadline(time.Unix(1, 0))
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
				c.log.Debug("event cannot be encoded as protobuf; skipped", "uid", env.Event.UID, "err", err)
				continue
			}
			b = f
		} else {
			b = env.XML()
		}
		if len(b) > MaxRelayedEvent {
			c.l.stats.oversize.Add(1)
			c.log.Debug("event larger than 64 KiB not sent", "uid", env.Event.UID, "type", env.Event.Type, "bytes", len(b))
			continue
		}
		bufs = append(bufs, b)
		if env.SwitchFormat {
			*proto = true
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
		if _, err := chunk.WriteTo(c.nc); err != nil {
			return err
		}
		rest = rest[n:]
	}
	return nil
}

// maxWritev bounds the buffers handed to one writev.
const maxWritev = 64

// beginShutdown stops reading; the writer then drains the queue and the
// session is closed with reason "server shutdown".
func (c *conn) beginShutdown(ctx context.Context) {
	c.shutdownOnce.Do(func() {
		c.shutdownCtx.Store(&ctx)
		close(c.stopping)
		c.nc.SetReadDeadline(time.Unix(1, 0))
		c.sess.Close(broker.ReasonShutdown)
	})
}

// close ends the connection with a reason (revocation).
func (c *conn) close(reason string) {
	c.sess.Close(reason)
	c.log.Info("connection closed by the server", "reason", reason)
}
