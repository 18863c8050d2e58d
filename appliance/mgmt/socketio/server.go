package socketio

import (
	"context"
	"crypto/rand"
	"encoding/base64"
	"encoding/json"
	"log/slog"
	"math"
	"net"
	"net/http"
	"net/netip"
	"strconv"
	"sync"
	"time"

	"github.com/coder/websocket"

	"outpost/appliance/logx"
)

// Defaults of Options.
const (
	DefaultMaxSockets      = 64
	DefaultMaxMessageBytes = 64 << 10
	DefaultPingInterval    = 25 * time.Second
	DefaultPingTimeout     = 20 * time.Second
	DefaultConnectTimeout  = 20 * time.Second
	DefaultAuthTimeout     = 10 * time.Second
	DefaultWriteTimeout    = 10 * time.Second
	DefaultQueueLen        = 64
	DefaultMaxPendingAcks  = 64
)

// Options configure a Server. Zero values take the defaults above.
type Options struct {
	// MaxSockets bounds the open sockets; a handshake beyond it is
	// answered 503.
	MaxSockets int
	// MaxUnauthenticatedPerAddr bounds the sockets of one IP address that
	// have not been marked authenticated (Socket.SetAuthenticated), from
	// the handshake on; a handshake beyond it is answered 429 and takes no
	// slot of MaxSockets. Zero: MaxSockets/8, at least 1.
	MaxUnauthenticatedPerAddr int
	// MaxMessageBytes bounds one message from a client (announced as
	// maxPayload); a longer one closes the socket.
	MaxMessageBytes int
	// PingInterval is how often the server pings; a client that does not
	// answer within PingTimeout is closed.
	PingInterval, PingTimeout time.Duration
	// ConnectTimeout is how long a client has, after the handshake, to
	// connect to the namespace.
	ConnectTimeout time.Duration
	// AuthTimeout is how long a client has, after the handshake, to be
	// marked authenticated (Socket.SetAuthenticated); one that is not is
	// closed (deadline.go). An application without authentication marks
	// its sockets in OnConnect.
	AuthTimeout time.Duration
	// WriteTimeout bounds every write to a client; a client that does not
	// take a message within it is dropped.
	WriteTimeout time.Duration
	// QueueLen bounds the messages waiting for one client's writer; a
	// client whose queue is full is dropped rather than waited for.
	QueueLen int
	// MaxPendingAcks bounds the acknowledgements the server awaits from
	// one client (EmitWithAck).
	MaxPendingAcks int
	// OriginPatterns restricts the Origin of browser handshakes (host
	// patterns as in path.Match). Empty allows any origin: the channel
	// authenticates with a key sent in band, never with cookies, so a
	// cross-origin page gains nothing a direct client would not have.
	OriginPatterns []string
	Logger         *slog.Logger
	// OnConnect runs when a client has connected to the namespace (after
	// the server's connect answer was queued). An error disconnects it.
	OnConnect func(*Socket) error
	// OnDisconnect runs once when a socket that had connected is gone,
	// with the reason.
	OnDisconnect func(s *Socket, reason string)
}

// Handler handles one event. args are the event's arguments after its
// name; ack answers the client's acknowledgement request (a no-op when
// the client asked for none; only the first call counts). Handlers of
// one socket run one at a time in the order the events arrived, on that
// socket's reader, so they must return promptly.
type Handler func(s *Socket, args []json.RawMessage, ack func(args ...any))

// Server serves Socket.IO over websocket. Register handlers with On
// before serving.
type Server struct {
	opts    Options
	log     *slog.Logger
	limited *logx.Limiter // warnings a client can cause

	hmu      sync.RWMutex
	handlers map[string]Handler

	mu       sync.Mutex
	sockets  map[*Socket]struct{}
	polls    map[string]*Socket // the polling sessions, by Engine.IO sid
	reserved int                // handshakes admitted, counted against MaxSockets
	// unauth counts, per address, the admitted handshakes not yet
	// authenticated (against MaxUnauthenticatedPerAddr).
	unauth  map[netip.Addr]int
	closing bool
	wg      sync.WaitGroup // one per admitted handshake
}

// NewServer returns a server with opts.
func NewServer(opts Options) *Server {
	def := func(v *int, d int) {
		if *v <= 0 {
			*v = d
		}
	}
	defDur := func(v *time.Duration, d time.Duration) {
		if *v <= 0 {
			*v = d
		}
	}
	def(&opts.MaxSockets, DefaultMaxSockets)
	def(&opts.MaxMessageBytes, DefaultMaxMessageBytes)
	def(&opts.QueueLen, DefaultQueueLen)
	def(&opts.MaxPendingAcks, DefaultMaxPendingAcks)
	defDur(&opts.PingInterval, DefaultPingInterval)
	defDur(&opts.PingTimeout, DefaultPingTimeout)
	defDur(&opts.ConnectTimeout, DefaultConnectTimeout)
	defDur(&opts.AuthTimeout, DefaultAuthTimeout)
	def(&opts.MaxUnauthenticatedPerAddr, max(1, opts.MaxSockets/8))
	defDur(&opts.WriteTimeout, DefaultWriteTimeout)
	log := opts.Logger
	if log == nil {
		log = slog.Default()
	}
	return &Server{
		opts:     opts,
		log:      log,
		limited:  logx.NewLimiter(log, 10, time.Minute),
		handlers: map[string]Handler{},
		sockets:  map[*Socket]struct{}{},
		polls:    map[string]*Socket{},
		unauth:   map[netip.Addr]int{},
	}
}

// On registers the handler of an event (replacing an earlier one).
// Events without a handler are ignored.
func (srv *Server) On(event string, h Handler) {
	srv.hmu.Lock()
	srv.handlers[event] = h
	srv.hmu.Unlock()
}

func (srv *Server) handler(event string) Handler {
	srv.hmu.RLock()
	defer srv.hmu.RUnlock()
	return srv.handlers[event]
}

// handshakeError writes Engine.IO's JSON error answer.
func handshakeError(w http.ResponseWriter, status, code int, msg string) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	json.NewEncoder(w).Encode(struct {
		Code    int    `json:"code"`
		Message string `json:"message"`
	}{code, msg})
}

// ServeHTTP serves the Engine.IO endpoint: a handshake (websocket or
// polling) becomes a socket; a request with a sid continues its polling
// session (polling.go); anything else gets Engine.IO's error answer.
func (srv *Server) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	q := r.URL.Query()
	transport := q.Get("transport")
	if transport == "polling" && !srv.allowOrigin(w, r) {
		handshakeError(w, http.StatusForbidden, 4, "Forbidden")
		return
	}
	switch {
	case transport != "websocket" && transport != "polling":
		handshakeError(w, http.StatusBadRequest, 0, "Transport unknown")
		return
	case q.Get("EIO") != "4":
		handshakeError(w, http.StatusBadRequest, 5, "Unsupported protocol version")
		return
	case q.Has("sid"):
		if s := srv.pollingSocket(q.Get("sid")); s != nil {
			srv.servePollingRequest(w, r, s)
			return
		}
		handshakeError(w, http.StatusBadRequest, 1, "Session ID unknown")
		return
	case r.Method != http.MethodGet:
		handshakeError(w, http.StatusBadRequest, 2, "Bad handshake method")
		return
	}
	addr := remoteIP(r)
	sl, refused := srv.admit(addr)
	switch refused {
	case refusedAddr:
		// This address's unauthenticated sockets free a place within
		// AuthTimeout at the latest.
		srv.limited.Warn("socket.io handshake refused: too many unauthenticated sockets from this address",
			"remote", r.RemoteAddr, "max_per_address", srv.opts.MaxUnauthenticatedPerAddr)
		w.Header().Set("Retry-After", strconv.Itoa(int(math.Ceil(srv.opts.AuthTimeout.Seconds()))))
		handshakeError(w, http.StatusTooManyRequests, 3, "Too many unauthenticated connections from this address")
		return
	case refusedFull:
		srv.limited.Warn("socket.io handshake refused: too many sockets", "remote", r.RemoteAddr, "max", srv.opts.MaxSockets)
		w.Header().Set("Retry-After", "5")
		handshakeError(w, http.StatusServiceUnavailable, 3, "Too many connections")
		return
	}
	if transport == "polling" {
		srv.openPolling(w, r, sl)
		return
	}
	conn, hw, err := srv.accept(w, r)
	if err != nil {
		// Accept has answered the request (400, 403).
		srv.release(sl)
		srv.limited.Debug("socket.io handshake failed", "remote", r.RemoteAddr, "err", logx.Clip(err.Error()))
		return
	}
	s := newSocket(srv, conn, hw.conn, r, sl)
	if !srv.register(s) {
		srv.release(sl)
		conn.Close(websocket.StatusGoingAway, "server shutting down")
		return
	}
	s.serve()
	srv.leave(s, sl)
}

// slot is one admitted handshake: its place among MaxSockets and, until
// it is authenticated or gone, among its address's unauthenticated ones.
type slot struct {
	addr   netip.Addr
	unauth bool // guarded by Server.mu
}

// Why admit refused a handshake.
const (
	admitted    = iota
	refusedAddr // the address has MaxUnauthenticatedPerAddr already
	refusedFull // MaxSockets reached, or shutting down
)

// admit counts a handshake from addr against its address's
// unauthenticated sockets and MaxSockets. A handshake refused for its
// address takes nothing from anyone else.
func (srv *Server) admit(addr netip.Addr) (*slot, int) {
	srv.mu.Lock()
	defer srv.mu.Unlock()
	if srv.closing {
		return nil, refusedFull
	}
	if srv.unauth[addr] >= srv.opts.MaxUnauthenticatedPerAddr {
		return nil, refusedAddr
	}
	if srv.reserved >= srv.opts.MaxSockets {
		return nil, refusedFull
	}
	srv.reserved++
	srv.unauth[addr]++
	srv.wg.Add(1)
	return &slot{addr: addr, unauth: true}, admitted
}

// authenticated takes sl off its address's unauthenticated count (once).
func (srv *Server) authenticated(sl *slot) {
	srv.mu.Lock()
	defer srv.mu.Unlock()
	srv.authenticatedLocked(sl)
}

// authenticatedLocked is authenticated with srv.mu held.
func (srv *Server) authenticatedLocked(sl *slot) {
	if !sl.unauth {
		return
	}
	sl.unauth = false
	if n := srv.unauth[sl.addr] - 1; n > 0 {
		srv.unauth[sl.addr] = n
	} else {
		delete(srv.unauth, sl.addr)
	}
}

// release gives back everything sl holds.
func (srv *Server) release(sl *slot) {
	srv.mu.Lock()
	srv.releaseLocked(sl)
	srv.mu.Unlock()
	srv.wg.Done()
}

// releaseLocked gives back sl's counts; srv.mu is held.
func (srv *Server) releaseLocked(sl *slot) {
	srv.authenticatedLocked(sl)
	srv.reserved--
}

// accept upgrades the request to a websocket (Origin checked against
// OriginPatterns, when set).
func (srv *Server) accept(w http.ResponseWriter, r *http.Request) (*websocket.Conn, *hijackRecorder, error) {
	hw := &hijackRecorder{ResponseWriter: w}
	conn, err := websocket.Accept(hw, r, &websocket.AcceptOptions{
		InsecureSkipVerify: len(srv.opts.OriginPatterns) == 0,
		OriginPatterns:     srv.opts.OriginPatterns,
	})
	if err == nil {
		conn.SetReadLimit(int64(srv.opts.MaxMessageBytes))
	}
	return conn, hw, err
}

func (srv *Server) register(s *Socket) bool {
	srv.mu.Lock()
	defer srv.mu.Unlock()
	if srv.closing {
		return false
	}
	srv.sockets[s] = struct{}{}
	if s.poll != nil {
		srv.polls[s.eid] = s
	}
	return true
}

// leave ends a socket that was registered. Its slot and its place in the
// list go together, under one lock, so that once a socket is no longer
// listed its address may connect again; the handshake's count in srv.wg
// goes last, so that when Shutdown returns no socket is listed any more.
func (srv *Server) leave(s *Socket, sl *slot) {
	srv.mu.Lock()
	srv.releaseLocked(sl)
	delete(srv.sockets, s)
	delete(srv.polls, s.eid)
	srv.mu.Unlock()
	srv.wg.Done()
}

// pollingSocket is the socket of a polling session (nil when unknown).
func (srv *Server) pollingSocket(sid string) *Socket {
	srv.mu.Lock()
	defer srv.mu.Unlock()
	return srv.polls[sid]
}

// Sockets returns the open sockets.
func (srv *Server) Sockets() []*Socket {
	srv.mu.Lock()
	defer srv.mu.Unlock()
	out := make([]*Socket, 0, len(srv.sockets))
	for s := range srv.sockets {
		out = append(out, s)
	}
	return out
}

// Len is the number of open sockets.
func (srv *Server) Len() int {
	srv.mu.Lock()
	defer srv.mu.Unlock()
	return len(srv.sockets)
}

// Broadcast emits an event to every socket connected to the namespace for
// which filter (nil: all) returns true. The message is encoded once; a
// socket whose queue is full is dropped, never waited for. It returns how
// many sockets the event was queued for.
func (srv *Server) Broadcast(filter func(*Socket) bool, event string, args ...any) (int, error) {
	msg, err := encodeEvent(-1, event, args)
	if err != nil {
		return 0, err
	}
	n := 0
	for _, s := range srv.Sockets() {
		if !s.isConnected() || (filter != nil && !filter(s)) {
			continue
		}
		if s.send(msg) {
			n++
		}
	}
	return n, nil
}

// Shutdown refuses new handshakes and closes every socket: each is
// disconnected and its websocket closed with "going away"; sockets still
// open when ctx ends are cut off. It returns when every socket's
// goroutines have ended and no socket is listed (Len is 0), or ctx's
// error after cutting off the rest.
func (srv *Server) Shutdown(ctx context.Context) error {
	srv.mu.Lock()
	srv.closing = true
	srv.mu.Unlock()
	for _, s := range srv.Sockets() {
		s.disconnect(websocket.StatusGoingAway, "server shutting down")
	}
	done := make(chan struct{})
	go func() {
		srv.wg.Wait()
		close(done)
	}()
	select {
	case <-done:
		return nil
	case <-ctx.Done():
	}
	for _, s := range srv.Sockets() {
		s.cut("server shut down")
	}
	<-done
	return ctx.Err()
}

// remoteIP is the IP address of the request's connection (never a
// header); the zero Addr when it has none.
func remoteIP(r *http.Request) netip.Addr {
	host, _, err := net.SplitHostPort(r.RemoteAddr)
	if err != nil {
		host = r.RemoteAddr
	}
	a, _ := netip.ParseAddr(host)
	return a.Unmap()
}

// newID is a random socket id (URL-safe base64 of 15 bytes).
func newID() string {
	var b [15]byte
	rand.Read(b[:])
	return base64.RawURLEncoding.EncodeToString(b[:])
}
