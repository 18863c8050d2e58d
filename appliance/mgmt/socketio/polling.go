package socketio

// HTTP long polling, the transport a Socket.IO client starts on by
// default, and its upgrade to a websocket (docs/socketio.md "Long
// polling"). A polling socket is the same Socket: its writer puts messages
// on a bounded queue that the client's GET requests take, and its POST
// requests are handled one at a time as the websocket reader handles
// messages. The upgrade: the client opens a websocket with the session's
// sid and sends "2probe", the server answers "3probe" and from then on
// answers GETs with a noop, the client sends "5", and the socket's writer
// sends what is still queued, then everything else, over the websocket,
// whose reader takes over from the POSTs.

import (
	"bytes"
	"context"
	"errors"
	"io"
	"net"
	"net/http"
	"sync"
	"sync/atomic"
	"time"

	"github.com/coder/websocket"

	"outpost/appliance/logx"
)

// separator separates the packets of one polling request or answer.
const separator = 0x1e

// pollState is what a socket that opened with polling adds.
type pollState struct {
	q        chan []byte      // messages for the client's next GET (the writer fills it)
	getting  atomic.Bool      // a GET is waiting
	readMu   sync.Mutex       // one POST (or the upgrade's hand-over) at a time
	probed   chan struct{}    // closed when a websocket probe succeeded: GETs are answered noop
	probeOne sync.Once        // closes probed
	trying   atomic.Bool      // an upgrade is under way
	switchTo chan wsTransport // the upgraded websocket, for the writer
	wsDone   chan struct{}    // closed when the upgraded websocket's reader ended

	stateMu  sync.Mutex    // guards upgraded and ended's closing
	upgraded bool          // the websocket reads; POSTs are refused
	ended    chan struct{} // closed when the polling session ends (not after an upgrade)
	up       chan struct{} // closed when upgraded is set
}

// wsTransport is an upgraded websocket and the connection under it.
type wsTransport struct {
	conn *websocket.Conn
	raw  net.Conn
}

func newPollState(queue int) *pollState {
	return &pollState{q: make(chan []byte, queue), probed: make(chan struct{}), switchTo: make(chan wsTransport),
		wsDone: make(chan struct{}), ended: make(chan struct{}), up: make(chan struct{})}
}

// end ends the polling session (once); after an upgrade it changes nothing.
func (p *pollState) end() {
	p.stateMu.Lock()
	defer p.stateMu.Unlock()
	select {
	case <-p.ended:
	default:
		close(p.ended)
	}
}

// isUpgraded reports whether the websocket took over reading.
func (p *pollState) isUpgraded() bool {
	p.stateMu.Lock()
	defer p.stateMu.Unlock()
	return p.upgraded
}

// servePolling runs a socket that opened with polling until it ends: its
// writer, and the wait for the POSTs or, after an upgrade, the websocket's
// reader to finish.
func (s *Socket) servePolling() {
	defer close(s.done)
	p := s.poll
	go s.writeLoop()
	select {
	case <-p.ended:
	case <-p.up:
	}
	if p.isUpgraded() {
		<-p.wsDone
	}
	s.finish()
}

// pollWrite queues msg for the client's next GET, within the write
// timeout (a client that stopped polling is dropped); an upgrade that
// arrives meanwhile takes it over the websocket.
func (s *Socket) pollWrite(msg []byte) bool {
	p := s.poll
	t := time.NewTimer(s.srv.opts.WriteTimeout)
	defer t.Stop()
	select {
	case p.q <- msg:
		return true
	case ws := <-p.switchTo:
		s.upgradeTo(ws)
		return s.write(msg)
	case <-p.ended:
	case <-s.ctx.Done():
	case <-t.C:
		s.setReason("client stopped polling")
	}
	return false
}

// upgradeTo switches the writer to the websocket (run by the writer):
// first what the GETs did not take, in order.
func (s *Socket) upgradeTo(ws wsTransport) {
	s.tmu.Lock()
	s.conn, s.raw = ws.conn, ws.raw
	s.tmu.Unlock()
	for {
		select {
		case m := <-s.poll.q:
			if !s.write(m) {
				return
			}
		default:
			return
		}
	}
}

// switches is the channel an upgrade arrives on (nil, never ready, for a
// socket that opened on a websocket).
func (s *Socket) switches() chan wsTransport {
	if s.poll == nil {
		return nil
	}
	return s.poll.switchTo
}

// pollClose ends a polling session: a close packet for the next GET,
// which has closeGrace to take it.
func (s *Socket) pollClose() {
	p := s.poll
	select {
	case p.q <- []byte{eioClose}:
		deadline := time.NewTimer(closeGrace)
		defer deadline.Stop()
		tick := time.NewTicker(10 * time.Millisecond)
		defer tick.Stop()
		for len(p.q) > 0 {
			select {
			case <-deadline.C:
				p.end()
				return
			case <-p.ended:
				return
			case <-tick.C:
			}
		}
	default:
	}
	p.end()
}

// servePollingRequest serves a request of a polling session: a GET takes
// the queued messages, a POST brings the client's, a websocket handshake
// upgrades it.
func (srv *Server) servePollingRequest(w http.ResponseWriter, r *http.Request, s *Socket) {
	switch {
	case r.URL.Query().Get("transport") == "websocket":
		srv.upgrade(w, r, s)
	case r.Method == http.MethodGet:
		srv.pollGet(w, r, s)
	case r.Method == http.MethodPost:
		srv.pollPost(w, r, s)
	default:
		handshakeError(w, http.StatusBadRequest, 3, "Bad request")
	}
}

// pollGet answers with the queued messages, waiting for the first: a
// noop once the websocket probe succeeded, a close packet when the session
// ended. Two GETs at once end the session, as Engine.IO does.
func (srv *Server) pollGet(w http.ResponseWriter, r *http.Request, s *Socket) {
	p := s.poll
	if !p.getting.CompareAndSwap(false, true) {
		srv.limited.Warn("socket.io polling client sent two GETs at once; socket closed", "remote", s.remote, "sid", s.id)
		s.cut("overlapping polls")
		handshakeError(w, http.StatusBadRequest, 3, "Bad request")
		return
	}
	defer p.getting.Store(false)
	var out [][]byte
	select {
	case m := <-p.q:
		out = append(out, m)
		for more := true; more && len(out) < cap(p.q); {
			select {
			case m := <-p.q:
				out = append(out, m)
			default:
				more = false
			}
		}
	case <-p.probed:
		out = [][]byte{{eioNoop}}
	case <-p.ended:
		out = [][]byte{{eioClose}}
	case <-r.Context().Done():
		return
	}
	w.Header().Set("Content-Type", "text/plain; charset=UTF-8")
	w.Write(bytes.Join(out, []byte{separator}))
}

// pollPost handles the packets of a POST in order, as the websocket
// reader handles messages; a body longer than MaxMessageBytes ends the
// session.
func (srv *Server) pollPost(w http.ResponseWriter, r *http.Request, s *Socket) {
	max := srv.opts.MaxMessageBytes
	body, err := io.ReadAll(io.LimitReader(r.Body, int64(max)+1))
	switch {
	case err != nil:
		s.limitedDebug("socket.io polling body not read", err)
		handshakeError(w, http.StatusBadRequest, 3, "Bad request")
		return
	case len(body) > max:
		s.setReason("message too big")
		srv.limited.Warn("socket.io message too big; socket closed", "remote", s.remote, "sid", s.id, "max", max)
		s.cut("message too big")
		handshakeError(w, http.StatusRequestEntityTooLarge, 3, "Payload too large")
		return
	}
	p := s.poll
	p.readMu.Lock()
	if p.isUpgraded() {
		p.readMu.Unlock()
		handshakeError(w, http.StatusBadRequest, 3, "Bad request")
		return
	}
	open := true
	for _, pkt := range bytes.Split(body, []byte{separator}) {
		if open = s.handle(pkt); !open {
			break
		}
	}
	p.readMu.Unlock()
	if !open {
		p.end()
	}
	w.Header().Set("Content-Type", "text/html")
	w.Write([]byte("ok"))
}

// errProbe is a websocket that did not upgrade its session as Engine.IO
// does.
var errProbe = errors.New("the upgrade did not follow the probe")

// upgrade takes a polling session onto a websocket: the probe, then "5",
// then the websocket is the socket's transport and this request its
// reader until the socket ends.
func (srv *Server) upgrade(w http.ResponseWriter, r *http.Request, s *Socket) {
	p := s.poll
	if !p.trying.CompareAndSwap(false, true) || p.isUpgraded() {
		handshakeError(w, http.StatusBadRequest, 3, "Bad request")
		return
	}
	defer p.trying.Store(false)
	conn, hw, err := srv.accept(w, r)
	if err != nil {
		s.limitedDebug("socket.io upgrade handshake failed", err)
		return
	}
	expect := func(want string) bool {
		ctx, cancel := context.WithTimeout(s.ctx, srv.opts.PingTimeout)
		defer cancel()
		typ, msg, err := conn.Read(ctx)
		return err == nil && typ == websocket.MessageText && string(msg) == want
	}
	if !expect("2probe") {
		// The polling session goes on; this websocket is dropped.
		s.limitedDebug("socket.io upgrade probe refused", errProbe)
		conn.CloseNow()
		return
	}
	ctx, cancel := context.WithTimeout(s.ctx, srv.opts.WriteTimeout)
	err = conn.Write(ctx, websocket.MessageText, []byte("3probe"))
	cancel()
	if err != nil {
		conn.CloseNow()
		return
	}
	p.probeOne.Do(func() { close(p.probed) })
	if !expect("5") {
		srv.limited.Warn("socket.io upgrade not completed; socket closed", "remote", s.remote, "sid", s.id)
		conn.CloseNow()
		s.cut("upgrade failed")
		return
	}
	// Wait for a POST being handled, then no more are.
	p.readMu.Lock()
	p.stateMu.Lock()
	select {
	case <-p.ended:
		p.stateMu.Unlock()
		p.readMu.Unlock()
		conn.CloseNow()
		return
	default:
	}
	p.upgraded = true
	close(p.up)
	p.stateMu.Unlock()
	p.readMu.Unlock()
	select {
	case p.switchTo <- wsTransport{conn: conn, raw: hw.conn}:
		s.readLoop(conn)
	case <-s.writerDone:
		conn.CloseNow()
	}
	close(p.wsDone)
	<-s.done // the socket owns the connection until it ends
}

// limitedDebug logs a failure a client can cause, rate-limited (the
// error may quote the client: clipped).
func (s *Socket) limitedDebug(msg string, err error) {
	s.srv.limited.Debug(msg, "remote", s.remote, "sid", s.id, "err", logx.Clip(err.Error()))
}
