package marti

import (
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"io"
	"log/slog"
	"math/big"
	"net"
	"net/http"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/coder/websocket"

	"outpost/appliance/broker"
	"outpost/appliance/cot"
	"outpost/appliance/logx"
	"outpost/appliance/rate"
)

// frameMagic starts a TAK protocol v1 stream frame (protocol.md §3).
const frameMagic = 0xBF

// paceBurst is how many seconds of its rates a socket may send at once (a
// client sends its markers in a burst on connect), as on 8087/8089.
const paceBurst = 2 * time.Second

// wsConn is one CoT websocket: a reader (the request's goroutine), a
// writer and a keepalive around one broker session. As on the streaming
// ports, the session owns "this socket is ending": whoever ends it closes
// the session first, the first reason wins, and the close hook unblocks
// the others.
type wsConn struct {
	s      *cotSockets
	ws     *websocket.Conn
	sess   *broker.Session
	log    *slog.Logger
	serial *big.Int

	readCtx    context.Context
	cancelRead context.CancelFunc // closes the socket at once
	lastRead   atomic.Int64       // unix ns of the last message from the client
	writerDone chan struct{}

	// Reader goroutine only.
	events, bytes                              rate.Bucket
	loggedPace, loggedOversize, loggedImpostor bool
}

// newConn joins the broker for a fresh socket; the broker queues the
// latest-SA replay to it at once.
func (s *cotSockets) newConn(ws *websocket.Conn, r *http.Request, user string, serial *big.Int) *wsConn {
	c := &wsConn{s: s, ws: ws, serial: serial, writerDone: make(chan struct{}),
		events: rate.New(float64(s.cfg.MaxEventsPerSecond), paceBurst),
		bytes:  rate.New(float64(s.cfg.MaxBytesPerSecond), paceBurst)}
	c.readCtx, c.cancelRead = context.WithCancel(context.Background())
	c.lastRead.Store(s.opts.Now().UnixNano())
	c.sess = s.opts.Broker.Join(broker.SessionInfo{Listener: WebsocketListener, Addr: r.RemoteAddr, User: user, Closed: c.onSessionClosed})
	c.log = s.log.With("session", c.sess.ID(), "remote", r.RemoteAddr, "user", logx.Clip(user))
	return c
}

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
	c.log.Debug("CoT websocket connected")
	go c.writeLoop()
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		c.keepalive()
	}()
	c.sess.Close(c.readLoop()) // no-op when someone else closed it first
	<-c.writerDone
	c.sess.Release() // what the writer left queued is let go
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
			c.s.stats.textRefused.Add(1)
			c.s.warn.Info("CoT websocket sent a text message; closing it (TAK protocol v1 travels in binary messages)", "session", c.sess.ID())
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
		case <-c.sess.Done():
			return c.sess.Reason()
		default:
		}
		c.handleMessage(buf.Bytes())
		if buf.Cap() > 16<<10 {
			buf = bytes.Buffer{} // a socket does not keep a large buffer for one large message
		}
	}
}

// handleMessage handles one binary message: one or more stream frames, or
// a bare TakMessage.
func (c *wsConn) handleMessage(msg []byte) {
	if len(msg) == 0 || msg[0] != frameMagic {
		c.handlePayload(msg)
		return
	}
	for len(msg) > 0 {
		if msg[0] != frameMagic {
			c.syntax("bytes after the last stream frame of the message")
			return
		}
		n, k := binary.Uvarint(msg[1:])
		if k <= 0 || n > uint64(c.s.cfg.MaxMessage) || n > uint64(len(msg)-1-k) {
			c.syntax("malformed or truncated stream frame header")
			return
		}
		end := 1 + k + int(n)
		c.handlePayload(msg[1+k : end])
		msg = msg[end:]
	}
}

func (c *wsConn) syntax(what string) {
	c.s.stats.syntax.Add(1)
	c.s.warn.Debug("malformed CoT websocket message skipped", "session", c.sess.ID(), "err", what)
}

// handlePayload decodes one TakMessage and answers, consumes or relays it.
func (c *wsConn) handlePayload(p []byte) {
	now := c.s.opts.Now()
	if c.pace(now, len(p)) {
		c.s.stats.paced.Add(1)
		if !c.loggedPace {
			c.loggedPace = true
			c.s.warn.Info("CoT websocket sends faster than its rate; reading from it is paced (logged once per socket)",
				"session", c.sess.ID(), "events_per_second", c.s.cfg.MaxEventsPerSecond, "bytes_per_second", c.s.cfg.MaxBytesPerSecond)
		}
		now = c.s.opts.Now()
	}
	ev, err := cot.DecodeProto(p)
	if errors.Is(err, cot.ErrNoEvent) {
		return // a TakControl alone: nothing to negotiate on a websocket
	}
	if err != nil {
		var se *cot.SyntaxError
		if errors.As(err, &se) {
			c.syntax(logx.Clip(se.Msg))
		} else {
			c.syntax(logx.Clip(err.Error()))
		}
		return
	}
	switch {
	case cot.IsPing(ev.Type):
		// protocol.md §5: answer on this socket only.
		c.sess.Send(broker.NewEnvelope(cot.NewPong(now)))
	case cot.IsControl(ev.Type):
		// Consumed, never relayed (protocol.md §5); negotiation has no
		// meaning here, the socket speaks protobuf from the start.
	default:
		if err := c.s.opts.Broker.Publish(ev, c.sess); err != nil {
			c.refused(ev, err)
		}
	}
}

// pace charges one message and waits, when the socket is over its rate,
// until it is back within it or the session ends. Nothing is dropped: the
// client is simply read more slowly.
func (c *wsConn) pace(now time.Time, size int) bool {
	wait := max(c.events.Debit(now, 1), c.bytes.Debit(now, float64(size)))
	if wait <= 0 {
		return false
	}
	t := time.NewTimer(wait)
	defer t.Stop()
	select {
	case <-t.C:
	case <-c.sess.Done():
	}
	return true
}

// refused counts an event the broker refused and logs it once per socket
// and kind.
func (c *wsConn) refused(ev *cot.Event, err error) {
	switch {
	case errors.Is(err, broker.ErrTooLarge):
		c.s.stats.oversize.Add(1)
		if !c.loggedOversize {
			c.loggedOversize = true
			c.s.warn.Warn("event refused: larger than what clients can receive (logged once per socket)",
				"session", c.sess.ID(), "uid", logx.Clip(ev.UID), "type", logx.Clip(ev.Type), "err", err.Error())
		}
	case errors.Is(err, broker.ErrUIDTaken):
		c.s.stats.impostor.Add(1)
		if !c.loggedImpostor {
			c.loggedImpostor = true
			c.s.warn.Warn("position report refused: its uid belongs to another client (logged once per socket)",
				"session", c.sess.ID(), "uid", logx.Clip(ev.UID), "err", err.Error())
		}
	}
}

func (c *wsConn) readErrorReason(err error) broker.Reason {
	if r := c.sess.Reason(); r != broker.ReasonNone {
		return r
	}
	switch {
	case errors.Is(err, websocket.ErrMessageTooBig):
		c.s.warn.Warn("CoT websocket sent a message larger than the limit; disconnecting", "session", c.sess.ID(), "limit", c.s.cfg.MaxMessage)
		return broker.ReasonTooLarge
	case websocket.CloseStatus(err) != -1, errors.Is(err, io.EOF), errors.Is(err, io.ErrUnexpectedEOF),
		errors.Is(err, syscall.ECONNRESET):
		return broker.ReasonClientClosed
	case errors.Is(err, net.ErrClosed):
		// Closed on this side: by the writer when a write timed out, or by
		// the keepalive when a ping went unanswered. That closer records
		// the reason right after; wait for it rather than guess.
		t := time.NewTimer(c.s.cfg.WriteTimeout)
		defer t.Stop()
		select {
		case <-c.sess.Done():
			return c.sess.Reason()
		case <-t.C:
			return broker.ReasonWriteError
		}
	default:
		c.log.Debug("CoT websocket read failed", "err", err)
		return broker.ReasonReadError
	}
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
		case <-c.sess.Done():
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
		if c.sess.Reason() == broker.ReasonNone {
			c.log.Info("CoT websocket answered no ping; disconnecting", "idle_timeout", c.s.cfg.IdleTimeout)
			c.sess.Close(broker.ReasonIdle)
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
		case <-c.sess.Ready():
		case <-c.sess.Done():
			// Take what is left either way, so the queue's bytes are
			// released; only an orderly shutdown still sends it.
			rest := c.sess.Take(spare)
			if c.sess.Reason() == broker.ReasonShutdown {
				ctx, cancel := context.WithDeadline(context.Background(), c.s.drainDeadline())
				if c.writeBatch(ctx, rest) == nil {
					c.ws.Close(websocket.StatusGoingAway, "server shutting down")
				}
				cancel()
			}
			return
		}
		batch := c.sess.Take(spare)
		ctx, cancel := context.WithTimeout(context.Background(), c.s.cfg.WriteTimeout)
		err := c.writeBatch(ctx, batch)
		timedOut := ctx.Err() != nil
		cancel()
		if err != nil {
			if timedOut && c.sess.Reason() == broker.ReasonNone {
				c.s.warn.Warn("CoT websocket client stopped reading; disconnecting", "session", c.sess.ID(), "write_timeout", c.s.cfg.WriteTimeout)
				c.sess.Close(broker.ReasonWriteDeadline)
			} else {
				c.sess.Close(broker.ReasonWriteError)
			}
			c.sess.Take(nil) // release what is still queued (the broker counts queued bytes)
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
		if err != nil {
			c.log.Debug("event cannot be encoded as protobuf; skipped", "uid", logx.Clip(env.Event.UID), "err", err)
			continue
		}
		if len(f) > cot.MaxRelayedEvent {
			c.s.stats.oversize.Add(1)
			c.log.Debug("event larger than 64 KiB not sent", "uid", logx.Clip(env.Event.UID), "bytes", len(f))
			continue
		}
		if err := c.ws.Write(ctx, websocket.MessageBinary, f); err != nil {
			return err
		}
	}
	return nil
}
