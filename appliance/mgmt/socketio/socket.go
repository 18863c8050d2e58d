package socketio

import (
	"context"
	"encoding/json"
	"errors"
	"net"
	"net/http"
	"net/netip"
	"sync"
	"sync/atomic"

	"github.com/coder/websocket"
)

// Errors of Emit and EmitWithAck.
var (
	ErrClosed         = errors.New("socketio: socket closed")
	ErrNotConnected   = errors.New("socketio: socket not connected to the namespace")
	ErrTooManyPending = errors.New("socketio: too many acknowledgements pending")
)

// Socket is one client: one websocket carrying one Engine.IO session
// connected (once it has sent its connect packet) to the main namespace.
// Its methods are safe for concurrent use; emits to a closed socket are
// no-ops that return ErrClosed.
type Socket struct {
	srv *Server
	// tmu guards conn and raw, which a polling socket gets when it
	// upgrades (before, both are nil).
	tmu    sync.Mutex
	conn   *websocket.Conn
	raw    net.Conn   // the connection under conn (closed by cut)
	poll   *pollState // for a socket that opened with polling; nil otherwise
	id     string     // Socket.IO id, sent in the connect answer
	eid    string     // Engine.IO session id, sent in the open packet
	remote string
	addr   netip.Addr
	local  net.Addr // the server's end of the connection (nil if unknown)
	host   string   // the handshake's Host header
	slot   *slot    // its place in the server's counts

	ctx    context.Context // cancelled to cut the connection off
	cancel context.CancelFunc

	out        chan outMsg
	closeReq   chan closeReq // a protocol error: close with this status
	pong       chan struct{}
	readerDone chan struct{}
	writerDone chan struct{}
	done       chan struct{} // everything of the socket has ended

	closing   atomic.Bool // set once; no emit is queued after it
	connected atomic.Bool // the namespace connect was answered
	authed    atomic.Bool // SetAuthenticated was called
	// connecting is held while the connect answer is queued and connected
	// set, so an emit that finds the socket not yet connected waits for the
	// answer to be queued first (isConnected): a client that has read the
	// answer never misses an event sent after it.
	connecting sync.Mutex

	mu      sync.Mutex // guards the fields below
	reason  string
	auth    json.RawMessage
	vals    map[string]any
	acks    map[int64]func([]json.RawMessage)
	nextAck int64
}

// outMsg is one message for the writer; final asks it to disconnect the
// namespace and close the websocket with code after the messages before.
type outMsg struct {
	data  []byte
	final bool
	code  websocket.StatusCode
}

type closeReq struct {
	code   websocket.StatusCode
	reason string
}

func newSocket(srv *Server, conn *websocket.Conn, raw net.Conn, r *http.Request, sl *slot) *Socket {
	ctx, cancel := context.WithCancel(context.Background())
	local, _ := r.Context().Value(http.LocalAddrContextKey).(net.Addr)
	return &Socket{
		local: local, host: r.Host,
		srv: srv, conn: conn, raw: raw, id: newID(), eid: newID(), remote: r.RemoteAddr, addr: sl.addr, slot: sl,
		ctx: ctx, cancel: cancel,
		out:        make(chan outMsg, srv.opts.QueueLen),
		closeReq:   make(chan closeReq, 1),
		pong:       make(chan struct{}, 1),
		readerDone: make(chan struct{}),
		writerDone: make(chan struct{}),
		done:       make(chan struct{}),
		vals:       map[string]any{},
		acks:       map[int64]func([]json.RawMessage){},
	}
}

// ID is the socket's Socket.IO id.
func (s *Socket) ID() string { return s.id }

// Addr is the IP address the connection came from (never a header).
func (s *Socket) Addr() netip.Addr { return s.addr }

// LocalAddr is the server's address of the connection (nil if unknown).
func (s *Socket) LocalAddr() net.Addr { return s.local }

// Host is the Host header of the handshake (client-controlled).
func (s *Socket) Host() string { return s.host }

// RemoteAddr is the connection's address and port.
func (s *Socket) RemoteAddr() string { return s.remote }

// Auth is the payload of the client's namespace connect (socket.io-client's
// `auth` option); nil when it sent none.
func (s *Socket) Auth() json.RawMessage {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.auth
}

// SetAuthenticated marks the socket authenticated: it is no longer closed
// at AuthTimeout and no longer counts against its address's
// MaxUnauthenticatedPerAddr. Only the application knows what
// authenticates a client; it calls this once the client has proved it.
func (s *Socket) SetAuthenticated() {
	if s.authed.CompareAndSwap(false, true) {
		s.srv.authenticated(s.slot)
	}
}

// Authenticated reports whether SetAuthenticated was called.
func (s *Socket) Authenticated() bool { return s.authed.Load() }

// Set stores a value of per-socket state.
func (s *Socket) Set(key string, v any) {
	s.mu.Lock()
	s.vals[key] = v
	s.mu.Unlock()
}

// Get returns a value stored with Set (nil when absent).
func (s *Socket) Get(key string) any {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.vals[key]
}

// Connected reports whether the namespace connect was answered and the
// socket is not closing.
func (s *Socket) Connected() bool { return s.connected.Load() && !s.closing.Load() }

// Done is closed when the socket has ended (its goroutines have returned).
func (s *Socket) Done() <-chan struct{} { return s.done }

// Reason says why the socket closed ("" while open).
func (s *Socket) Reason() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.reason
}

func (s *Socket) setReason(r string) {
	s.mu.Lock()
	if s.reason == "" {
		s.reason = r
	}
	s.mu.Unlock()
}

// isConnected reports whether the namespace connect was answered; for a
// socket not connected yet it waits while the answer is being queued.
func (s *Socket) isConnected() bool {
	if s.connected.Load() {
		return true
	}
	s.connecting.Lock()
	defer s.connecting.Unlock()
	return s.connected.Load()
}

// Emit sends an event with args (each encoded as JSON; a json.RawMessage
// is sent as is).
func (s *Socket) Emit(event string, args ...any) error {
	if !s.isConnected() {
		return ErrNotConnected
	}
	msg, err := encodeEvent(-1, event, args)
	if err != nil {
		return err
	}
	if !s.send(msg) {
		return ErrClosed
	}
	return nil
}

// EmitWithAck sends an event asking the client to acknowledge it; cb runs
// on the socket's reader with the client's answer. Callbacks still pending
// when the socket closes are dropped.
func (s *Socket) EmitWithAck(event string, cb func(args []json.RawMessage), args ...any) error {
	if !s.isConnected() {
		return ErrNotConnected
	}
	s.mu.Lock()
	if len(s.acks) >= s.srv.opts.MaxPendingAcks {
		s.mu.Unlock()
		return ErrTooManyPending
	}
	id := s.nextAck
	s.nextAck++
	s.acks[id] = cb
	s.mu.Unlock()
	msg, err := encodeEvent(id, event, args)
	if err == nil && !s.send(msg) {
		err = ErrClosed
	}
	if err != nil {
		s.mu.Lock()
		delete(s.acks, id)
		s.mu.Unlock()
	}
	return err
}

// Disconnect disconnects the client from the namespace (it sees "io server
// disconnect" and does not reconnect) after the messages already queued,
// then closes the websocket.
func (s *Socket) Disconnect() { s.disconnect(websocket.StatusNormalClosure, "server disconnect") }

// send queues a message for the writer. A full queue means the client is
// not reading fast enough: it is cut off rather than waited for.
func (s *Socket) send(msg []byte) bool {
	if s.closing.Load() {
		return false
	}
	select {
	case s.out <- outMsg{data: msg}:
		return true
	default:
		s.srv.limited.Warn("socket.io client not reading; socket dropped", "remote", s.remote, "sid", s.id)
		s.cut("outbound queue full")
		return false
	}
}

func (s *Socket) disconnect(code websocket.StatusCode, reason string) {
	if !s.closing.CompareAndSwap(false, true) {
		return
	}
	s.setReason(reason)
	select {
	case s.out <- outMsg{final: true, code: code}:
	default:
		s.cut(reason)
	}
}

// fail closes the socket after a protocol error, with a close status.
func (s *Socket) fail(code websocket.StatusCode, reason string) {
	s.setReason(reason)
	if !s.closing.CompareAndSwap(false, true) {
		return
	}
	select {
	case s.closeReq <- closeReq{code: code, reason: reason}:
	default:
	}
}

// cut closes the connection at once, whatever is in progress.
func (s *Socket) cut(reason string) {
	s.setReason(reason)
	s.closing.Store(true)
	s.cancel()
	s.tmu.Lock()
	conn, raw := s.conn, s.raw
	s.tmu.Unlock()
	// The writer may be inside a close handshake the client never answers:
	// closing the connection under it ends that at once (hijack.go).
	if raw != nil {
		raw.Close()
	}
	if conn != nil {
		conn.CloseNow()
	}
	if s.poll != nil {
		s.poll.end()
	}
}

// ws is the socket's websocket; nil while it polls.
func (s *Socket) ws() *websocket.Conn {
	s.tmu.Lock()
	defer s.tmu.Unlock()
	return s.conn
}

// closeWith closes the transport with a websocket close status (run by
// the writer): the websocket's close handshake, or the end of a polling
// session.
func (s *Socket) closeWith(code websocket.StatusCode, reason string) {
	if conn := s.ws(); conn != nil {
		conn.Close(code, reason)
		return
	}
	s.pollClose()
}

// closeNow closes the transport at once.
func (s *Socket) closeNow() {
	if conn := s.ws(); conn != nil {
		conn.CloseNow()
	}
	if s.poll != nil {
		s.poll.end()
	}
}
