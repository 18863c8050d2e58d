package marti

import (
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"io"
	"net"
	"net/http"
	"sync"
	"sync/atomic"
	"time"

	"github.com/coder/websocket"

	"outpost/appliance/broker"
	"outpost/appliance/cot"
	"outpost/appliance/cotsession"
)

// frameMagic starts a TAK protocol v1 stream frame (protocol.md §3).
const frameMagic = 0xBF

// wsConn is one CoT websocket: a reader (the request's goroutine), a
// writer and a keepalive around one broker session. As on the streaming
// ports, the session owns "this socket is ending": whoever ends it closes
// the session first, the first reason wins, and the close hook unblocks
// the others.
type wsConn struct {
	// The broker session (Sess), identity, pacing and what every CoT
	// transport does with a message: package cotsession.
	cotsession.Session

	s  *cotSockets
	ws *websocket.Conn

	readCtx    context.Context
	cancelRead context.CancelFunc // closes the socket at once
	lastRead   atomic.Int64       // unix ns of the last message from the client
	writerDone chan struct{}
}

// newConn joins the broker for a fresh socket; the broker queues the
// latest-SA replay to it at once.
func (s *cotSockets) newConn(ws *websocket.Conn, r *http.Request, id cotsession.Identity) *wsConn {
	c := &wsConn{s: s, ws: ws, writerDone: make(chan struct{})}
	c.readCtx, c.cancelRead = context.WithCancel(context.Background())
	c.lastRead.Store(s.opts.Now().UnixNano())
	s.sessions.Join(&c.Session, broker.SessionInfo{Addr: r.RemoteAddr, Closed: c.onSessionClosed}, id)
	return c
}

// Cut closes the socket at once, even in the middle of a close handshake
// (cotsession.Driver.Shutdown, when the drain budget is spent).
func (c *wsConn) Cut() { c.cancelRead() }

// onSessionClosed runs once when the session closes, whoever closed it.
// Except in an orderly shutdown (where the writer still sends what is
// queued, then closes the socket with 1001) it closes the socket at once,
// which unblocks the reader, the writer and the keepalive.
func (c *wsConn) onSessionClosed(reason broker.Reason) {
	if reason != broker.ReasonShutdown {
		c.cancelRead()
	}
}

// serve runs the socket until it ends.
func (c *wsConn) serve() {
	c.Log().Debug("CoT websocket connected")
	go c.writeLoop()
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		c.keepalive()
	}()
	c.Sess.Close(c.readLoop()) // no-op when someone else closed it first
	<-c.writerDone
	c.Sess.Release() // what the writer left queued is let go
	wg.Wait()
	c.cancelRead()
	c.ws.CloseNow()
}

// readLoop reads messages until an error and returns the close reason.
func (c *wsConn) readLoop() broker.Reason {
	var buf bytes.Buffer
	for {
		typ, rd, err := c.ws.Reader(c.readCtx)
		if err != nil {
			return c.readErrorReason(err)
		}
		if typ != websocket.MessageBinary {
			io.Copy(io.Discard, rd)
			c.s.textRefused.Add(1)
			c.s.warn.Info("CoT websocket sent a text message; closing it (TAK protocol v1 travels in binary messages)", "session", c.Sess.ID())
			c.ws.Close(websocket.StatusUnsupportedData, "text messages are not supported: send TAK protocol v1 in binary messages")
			return broker.ReasonReadError
		}
		buf.Reset()
		if _, err := buf.ReadFrom(rd); err != nil {
			return c.readErrorReason(err)
		}
		c.lastRead.Store(c.s.opts.Now().UnixNano())
		// Whoever ends the session (shutdown included) stops the reading:
		// nothing read after that is relayed.
		select {
		case <-c.Sess.Done():
			return c.Sess.Reason()
		default:
		}
		if reason, stop := c.handleMessage(buf.Bytes()); stop {
			return reason
		}
		if buf.Cap() > 16<<10 {
			buf = bytes.Buffer{} // a socket does not keep a large buffer for one large message
		}
	}
}

// handleMessage handles one binary message: one or more stream frames, or
// a bare TakMessage. stop reports the end of the socket.
func (c *wsConn) handleMessage(msg []byte) (reason broker.Reason, stop bool) {
	if len(msg) == 0 || msg[0] != frameMagic {
		return c.handlePayload(msg)
	}
	for len(msg) > 0 {
		if msg[0] != frameMagic {
			c.Malformed("bytes after the last stream frame of the message")
			return broker.ReasonNone, false
		}
		n, k := binary.Uvarint(msg[1:])
		if k <= 0 || n > uint64(c.s.cfg.MaxMessage) || n > uint64(len(msg)-1-k) {
			c.Malformed("malformed or truncated stream frame header")
			return broker.ReasonNone, false
		}
		end := 1 + k + int(n)
		if reason, stop := c.handlePayload(msg[1+k : end]); stop {
			return reason, true
		}
		msg = msg[end:]
	}
	return broker.ReasonNone, false
}

// handlePayload decodes one TakMessage and hands it to the session driver,
// which paces, answers, consumes or relays it (cotsession Session.Handle).
// DecodeProto's errors are *cot.SyntaxError (counted and skipped) or
// ErrNoEvent: a TakControl alone, with nothing to negotiate on a websocket,
// which speaks protobuf from the start.
func (c *wsConn) handlePayload(p []byte) (reason broker.Reason, stop bool) {
	ev, err := cot.DecodeProto(p)
	if errors.Is(err, cot.ErrNoEvent) {
		err = nil
	}
	// An empty message still costs one event of the client's rate.
	return c.Handle(&cot.Message{Event: ev, Size: max(len(p), 1)}, err)
}

// readErrorReason maps what only a websocket reports onto the driver's
// mapping (cotsession Session.ReadErrorReason).
func (c *wsConn) readErrorReason(err error) broker.Reason {
	switch {
	case errors.Is(err, websocket.ErrMessageTooBig):
		err = cot.ErrTooLarge // logged and ReasonTooLarge
	case websocket.CloseStatus(err) != -1:
		err = io.EOF // the client closed the socket
	case errors.Is(err, net.ErrClosed) && c.Sess.Reason() == broker.ReasonNone:
		// Closed on this side: by the writer when a write timed out, or by
		// the keepalive when a ping went unanswered. That closer records
		// the reason right after; wait for it rather than guess.
		t := time.NewTimer(c.s.cfg.WriteTimeout)
		defer t.Stop()
		select {
		case <-c.Sess.Done():
		case <-t.C:
			return broker.ReasonWriteError
		}
	}
	return c.ReadErrorReason(err)
}

// keepalive pings a socket that has been silent for half the idle timeout;
// one that does not answer within the other half is closed (ReasonIdle).
// Browsers answer pings by themselves, so a silent but live WebTAK page
// stays connected, and a dead peer is found within the idle timeout.
func (c *wsConn) keepalive() {
	half := c.s.cfg.IdleTimeout / 2
	t := time.NewTicker(half)
	defer t.Stop()
	for {
		select {
		case <-c.Sess.Done():
			return
		case <-t.C:
		}
		if c.s.opts.Now().Sub(time.Unix(0, c.lastRead.Load())) < half {
			continue
		}
		ctx, cancel := context.WithTimeout(context.Background(), half)
		err := c.ws.Ping(ctx)
		cancel()
		if err == nil {
			c.lastRead.Store(c.s.opts.Now().UnixNano())
			continue
		}
		if c.Sess.Reason() == broker.ReasonNone {
			c.Log().Info("CoT websocket answered no ping; disconnecting", "idle_timeout", c.s.cfg.IdleTimeout)
			c.Sess.Close(broker.ReasonIdle)
		}
		return
	}
}

// writeLoop sends the session's queue, one binary message per event, each
// batch bounded by the write timeout. A blocked write closes the session
// (ReasonWriteDeadline), so one socket never delays the others.
func (c *wsConn) writeLoop() {
	defer close(c.writerDone)
	var spare []*broker.Envelope
	for {
		select {
		case <-c.Sess.Ready():
		case <-c.Sess.Done():
			// Take what is left either way, so the queue's bytes are
			// released; only an orderly shutdown still sends it.
			rest := c.Sess.Take(spare)
			if c.Sess.Reason() == broker.ReasonShutdown {
				ctx, cancel := context.WithDeadline(context.Background(), c.s.drainDeadline())
				if c.writeBatch(ctx, rest) == nil {
					c.ws.Close(websocket.StatusGoingAway, "server shutting down")
				}
				cancel()
			}
			return
		}
		batch := c.Sess.Take(spare)
		ctx, cancel := context.WithTimeout(context.Background(), c.s.cfg.WriteTimeout)
		err := c.writeBatch(ctx, batch)
		timedOut := ctx.Err() != nil
		cancel()
		if err != nil {
			if timedOut && c.Sess.Reason() == broker.ReasonNone {
				c.s.warn.Warn("CoT websocket client stopped reading; disconnecting", "session", c.Sess.ID(), "write_timeout", c.s.cfg.WriteTimeout)
				c.Sess.Close(broker.ReasonWriteDeadline)
			} else {
				c.Sess.Close(broker.ReasonWriteError)
			}
			c.Sess.Take(nil) // release what is still queued (the broker counts queued bytes)
			return
		}
		clear(batch)
		spare = batch[:0]
		if cap(batch) > broker.MaxRetainedQueue {
			spare = nil
		}
	}
}

// writeBatch sends each envelope as one binary message holding its TAK
// protocol v1 stream frame, the same bytes the streaming ports send.
func (c *wsConn) writeBatch(ctx context.Context, batch []*broker.Envelope) error {
	for _, env := range batch {
		f, err := env.ProtoFrame()
		if f = c.Sendable(env, f, err); f == nil {
			continue
		}
		if err := c.ws.Write(ctx, websocket.MessageBinary, f); err != nil {
			return err
		}
	}
	return nil
}
