package socketio

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"sync/atomic"
	"time"

	"github.com/coder/websocket"

	"outpost/appliance/logx"
)

// openPacket is the Engine.IO open packet of the socket; a polling
// session is offered the websocket upgrade.
func (s *Socket) openPacket() []byte {
	o := s.srv.opts
	upgrades := []string{}
	if s.poll != nil {
		upgrades = []string{"websocket"}
	}
	open, _ := json.Marshal(map[string]any{
		"sid": s.eid, "upgrades": upgrades,
		"pingInterval": o.PingInterval.Milliseconds(), "pingTimeout": o.PingTimeout.Milliseconds(),
		"maxPayload": o.MaxMessageBytes,
	})
	return append([]byte{eioOpen}, open...)
}

// serve runs a socket that opened on a websocket: the open packet, a
// writer goroutine, and the reader on the calling goroutine, until the
// connection ends.
func (s *Socket) serve() {
	defer close(s.done)
	if !s.write(s.openPacket()) {
		s.cancel()
		s.conn.CloseNow()
		return
	}
	go s.writeLoop()
	s.readLoop(s.conn)
	s.finish()
}

// finish ends a socket whose reading ended: the writer stops, pending
// acknowledgements are dropped, OnDisconnect runs.
func (s *Socket) finish() {
	o := s.srv.opts
	close(s.readerDone)
	<-s.writerDone
	s.closing.Store(true)
	s.cancel()
	s.mu.Lock()
	clear(s.acks)
	reason := s.reason
	s.mu.Unlock()
	if reason == "" {
		reason = "connection lost"
		s.setReason(reason)
	}
	if s.connected.Load() && o.OnDisconnect != nil {
		o.OnDisconnect(s, reason)
	}
}

// readLoop reads the websocket's messages until the connection fails or
// a message closes the socket. Every read has a deadline: the client must
// at least answer the pings.
func (s *Socket) readLoop(conn *websocket.Conn) {
	o := s.srv.opts
	timeout := o.PingInterval + o.PingTimeout + time.Second
	for {
		ctx, cancel := context.WithTimeout(s.ctx, timeout)
		typ, data, err := conn.Read(ctx)
		cancel()
		if err != nil {
			s.readFailed(err)
			return
		}
		if typ != websocket.MessageText {
			s.refuse(websocket.StatusUnsupportedData, errBinary, data)
			return
		}
		if !s.handle(data) {
			return
		}
	}
}

func (s *Socket) readFailed(err error) {
	switch {
	case errors.Is(err, websocket.ErrMessageTooBig):
		s.setReason("message too big")
		s.srv.limited.Warn("socket.io message too big; socket closed", "remote", s.remote, "sid", s.id, "max", s.srv.opts.MaxMessageBytes)
	case websocket.CloseStatus(err) != -1:
		s.setReason("client closed the websocket")
	case s.ctx.Err() != nil:
		// cut off; the reason is set
	case errors.Is(err, context.DeadlineExceeded):
		s.setReason("read timeout")
	default:
		s.setReason("connection lost")
	}
}

// refuse logs a refused message (rate-limited, clipped) and closes the
// socket with code.
func (s *Socket) refuse(code websocket.StatusCode, err error, data []byte) {
	s.srv.limited.Warn("socket.io packet refused; socket closed", "remote", s.remote, "sid", s.id,
		"err", err.Error(), "packet", logx.ClipN(string(data), 64))
	s.fail(code, err.Error())
}

// handle handles one Engine.IO packet; false ends the socket.
func (s *Socket) handle(b []byte) bool {
	if len(b) == 0 {
		s.refuse(websocket.StatusProtocolError, errors.New("empty message"), b)
		return false
	}
	switch b[0] {
	case eioPong:
		select {
		case s.pong <- struct{}{}:
		default:
		}
		return true
	case eioPing:
		// Engine.IO v4 clients do not ping, but answering is harmless.
		return s.send(append([]byte{eioPong}, b[1:]...))
	case eioNoop:
		return true
	case eioClose:
		s.setReason("client closed the session")
		return false
	case eioMessage:
		return s.handlePacket(b)
	case eioOpen, eioUpgrade:
		s.refuse(websocket.StatusProtocolError, fmt.Errorf("unexpected Engine.IO packet type %q", b[0]), b)
	default:
		s.refuse(websocket.StatusProtocolError, fmt.Errorf("unknown Engine.IO packet type %q", b[0]), b)
	}
	return false
}

// handlePacket handles an Engine.IO message (b starts with its '4').
func (s *Socket) handlePacket(b []byte) bool {
	p, err := parsePacket(b[1:])
	if err != nil {
		code := websocket.StatusProtocolError
		if errors.Is(err, errBinary) {
			code = websocket.StatusUnsupportedData
		}
		s.refuse(code, err, b)
		return false
	}
	if p.nsp != "/" {
		if p.typ == sioConnect {
			// Only the main namespace exists; the session stays open.
			return s.send(encodeControl(sioConnectError, p.nsp, map[string]string{"message": "Invalid namespace"}))
		}
		s.refuse(websocket.StatusProtocolError, errors.New("packet for a namespace not connected"), b)
		return false
	}
	switch p.typ {
	case sioConnect:
		if s.connected.Load() {
			s.refuse(websocket.StatusProtocolError, errors.New("second connect"), b)
			return false
		}
		s.mu.Lock()
		s.auth = p.data
		s.mu.Unlock()
		s.connecting.Lock()
		ok := s.send(encodeControl(sioConnect, "/", map[string]string{"sid": s.id}))
		if ok {
			s.connected.Store(true)
		}
		s.connecting.Unlock()
		if !ok {
			return false
		}
		if s.srv.opts.OnConnect != nil {
			if err := s.call(func() error { return s.srv.opts.OnConnect(s) }); err != nil {
				s.srv.log.Info("socket.io connect refused", "remote", s.remote, "sid", s.id, "err", logx.Clip(err.Error()))
				s.disconnect(websocket.StatusNormalClosure, "connect refused")
			}
		}
		return true
	case sioDisconnect:
		s.setReason("client disconnected")
		return false
	}
	if !s.connected.Load() {
		s.refuse(websocket.StatusProtocolError, errors.New("event before connect"), b)
		return false
	}
	if p.typ == sioAck {
		s.mu.Lock()
		cb := s.acks[p.id]
		delete(s.acks, p.id)
		s.mu.Unlock()
		if cb == nil {
			s.srv.limited.Debug("socket.io acknowledgement with an unknown id ignored", "remote", s.remote, "sid", s.id, "id", p.id)
			return true
		}
		return s.call(func() error { cb(p.args); return nil }) == nil
	}
	h := s.srv.handler(p.name)
	if h == nil {
		s.srv.limited.Debug("socket.io event without a handler ignored", "remote", s.remote, "sid", s.id, "event", logx.Clip(p.name))
		return true
	}
	ack := func(...any) {}
	if p.id >= 0 {
		var answered atomic.Bool
		ack = func(args ...any) {
			if !answered.CompareAndSwap(false, true) {
				return
			}
			if msg, err := encodeAck(p.id, args); err == nil {
				s.send(msg)
			} else {
				s.srv.log.Error("socket.io acknowledgement not encoded", "event", logx.Clip(p.name), "err", err)
			}
		}
	}
	return s.call(func() error { h(s, p.args, ack); return nil }) == nil
}

// errPanic is returned by call when the function panicked.
var errPanic = errors.New("handler panicked")

// call runs f; a panic is logged and closes this socket only.
func (s *Socket) call(f func() error) (err error) {
	defer func() {
		if v := recover(); v != nil {
			s.srv.log.Error("socket.io handler panicked; socket closed", "remote", s.remote, "sid", s.id, "panic", fmt.Sprint(v))
			s.fail(websocket.StatusInternalError, "internal error")
			err = errPanic
		}
	}()
	return f()
}

// write writes one message within the write timeout (run by the writer):
// on the websocket, or for the next poll.
func (s *Socket) write(msg []byte) bool {
	conn := s.ws()
	if conn == nil {
		return s.pollWrite(msg)
	}
	ctx, cancel := context.WithTimeout(s.ctx, s.srv.opts.WriteTimeout)
	defer cancel()
	if err := conn.Write(ctx, websocket.MessageText, msg); err != nil {
		if s.ctx.Err() == nil {
			s.setReason("write failed")
			s.srv.log.Debug("socket.io write failed", "remote", s.remote, "sid", s.id, "err", err)
		}
		return false
	}
	return true
}

// writeLoop writes queued messages, pings the client every PingInterval
// and closes the websocket when asked or when the client fails the
// heartbeat, the connect deadline or the authentication deadline
// (deadline.go).
func (s *Socket) writeLoop() {
	defer close(s.writerDone)
	o := s.srv.opts
	ping := time.NewTimer(o.PingInterval)
	defer ping.Stop()
	pongTimer := time.NewTimer(o.PingTimeout)
	pongTimer.Stop()
	defer pongTimer.Stop()
	var pongDue <-chan time.Time
	connectTimer := time.NewTimer(o.ConnectTimeout)
	defer connectTimer.Stop()
	connectDue := connectTimer.C
	authTimer := time.NewTimer(o.AuthTimeout)
	defer authTimer.Stop()
	authDue := authTimer.C
	for {
		// A protocol error closes before anything still queued.
		select {
		case req := <-s.closeReq:
			s.closeWith(req.code, req.reason)
			return
		default:
		}
		select {
		case req := <-s.closeReq:
			s.closeWith(req.code, req.reason)
			return
		case <-s.readerDone:
			select {
			case req := <-s.closeReq:
				s.closeWith(req.code, req.reason)
			default:
				s.closeNow()
			}
			return
		case <-s.ctx.Done():
			s.closeNow()
			return
		case ws := <-s.switches():
			s.upgradeTo(ws)
		case m := <-s.out:
			if m.final {
				if s.isConnected() {
					s.write(encodeControl(sioDisconnect, "/", nil))
				}
				s.closeWith(m.code, "")
				return
			}
			if !s.write(m.data) {
				s.closeNow()
				return
			}
		case <-ping.C:
			if !s.write([]byte{eioPing}) {
				s.closeNow()
				return
			}
			pongTimer.Reset(o.PingTimeout)
			pongDue = pongTimer.C
		case <-s.pong:
			if pongDue != nil { // an unasked pong changes nothing
				pongTimer.Stop()
				pongDue = nil
				ping.Reset(o.PingInterval)
			}
		case <-pongDue:
			s.setReason("ping timeout")
			s.srv.log.Debug("socket.io client missed its pong; socket closed", "remote", s.remote, "sid", s.id)
			s.closing.Store(true)
			s.closeNow()
			return
		case <-connectDue:
			connectDue = nil
			if !s.connected.Load() {
				s.expire("connect timeout", "socket.io client did not connect to the namespace in time; socket closed")
				return
			}
		case <-authDue:
			authDue = nil
			if !s.authed.Load() {
				s.expire("authentication timeout", "socket.io client did not authenticate in time; socket closed")
				return
			}
		}
	}
}
