package marti

// CoT over websocket: GET /takproto/1 on the mutual-TLS port (8443), the
// endpoint WebTAK and pytak's wss:// (tak:// onboarding) clients use. Each
// socket is a broker session like a connection on 8087/8089: the same
// routing and queues, the certificate's common name as its identity (uid
// binding applies), the latest-SA replay on join, pongs to pings, a
// message size limit, per-connection pacing, write deadlines, close
// reasons, and a cap on open sockets.
//
// Wire format (protocol.md §3): every websocket message is binary and
// carries TAK protocol v1. The official server sends each event as one
// message holding one stream frame (0xBF, varint length, TakMessage) and
// parses incoming messages as a sequence of stream frames; pytak and other
// clients do the same. Outpost sends exactly that, and accepts one or more
// stream frames per message or a bare TakMessage without the frame header
// (what a protobuf library encodes; a TakMessage never starts with 0xBF).
// Text messages are refused: the socket is closed with 1003.
//
// Plain HTTP (8080) refuses the endpoint with 403: a socket must carry the
// identity of a client certificate.

import (
	"context"
	"log/slog"
	"math/big"
	"net/http"
	"sync"
	"sync/atomic"
	"time"

	"github.com/coder/websocket"

	"outpost/appliance/broker"
	"outpost/appliance/cot"
	"outpost/appliance/httpapi"
	"outpost/appliance/logx"
)

// WebsocketListener names CoT websocket sessions in the client registry,
// logs and the history's source.
const WebsocketListener = "cot-ws"

// WebsocketOptions configure CoT over websocket. Zero values take the
// defaults of the CoT listeners (shown).
type WebsocketOptions struct {
	MaxSockets   int           // 4096: open sockets; an upgrade beyond is answered 503
	MaxMessage   int           // 64 KiB: largest TakMessage; a larger message closes the socket (1009)
	IdleTimeout  time.Duration // 60 s: a socket that answers no ping for this long is closed
	WriteTimeout time.Duration // 15 s: a write blocked this long closes the socket (slow consumer)

	// MaxEventsPerSecond and MaxBytesPerSecond pace each socket's reading
	// (bursts of 2 s allowed); 0: no limit.
	MaxEventsPerSecond int
	MaxBytesPerSecond  int

	// OriginPatterns allow browser pages of other origins (host patterns
	// as in path.Match) to open sockets. Empty: only pages of this server's
	// own origin, so a foreign page cannot ride a browser's client
	// certificate; clients that send no Origin (pytak, ws) are unaffected.
	OriginPatterns []string
}

func (o *WebsocketOptions) fill() {
	if o.MaxSockets <= 0 {
		o.MaxSockets = 4096
	}
	if o.MaxMessage <= 0 {
		o.MaxMessage = cot.DefaultMaxMessage
	}
	if o.IdleTimeout <= 0 {
		o.IdleTimeout = 60 * time.Second
	}
	if o.WriteTimeout <= 0 {
		o.WriteTimeout = 15 * time.Second
	}
}

// cotSockets owns the open CoT websockets.
type cotSockets struct {
	opts *Options
	cfg  WebsocketOptions
	log  *slog.Logger
	warn *logx.Limiter // warnings a client can cause, bounded

	drainBy atomic.Pointer[time.Time] // set by shutdown: writers drain until then

	mu       sync.Mutex // guards conns, reserved, closing
	conns    map[*wsConn]struct{}
	reserved int // upgrades admitted, counted against MaxSockets
	closing  bool
	wg       sync.WaitGroup // one per admitted upgrade

	stats wsStats
}

type wsStats struct {
	syntax, oversize, impostor, paced, textRefused atomic.Uint64
}

func newCoTSockets(opts *Options, log *slog.Logger) *cotSockets {
	opts.Websocket.fill()
	log = log.With("listener", WebsocketListener)
	return &cotSockets{opts: opts, cfg: opts.Websocket, log: log, warn: logx.NewLimiter(log, 20, 10*time.Second),
		conns: map[*wsConn]struct{}{}}
}

// serveHTTP upgrades GET /takproto/1 and runs the socket until it closes.
func (s *cotSockets) serveHTTP(w http.ResponseWriter, r *http.Request) {
	if r.TLS == nil {
		httpapi.WriteMessage(w, http.StatusForbidden,
			"CoT over websocket needs mutual TLS: connect to the HTTPS port (8443) with a client certificate")
		return
	}
	user, serial := "", (*big.Int)(nil)
	if s.opts.Identify != nil {
		if u, sn, ok := s.opts.Identify(*r.TLS); ok {
			user, serial = u, sn
		}
	}
	if user == "" {
		httpapi.WriteMessage(w, http.StatusForbidden, "CoT over websocket needs a client certificate with a common name")
		return
	}
	if s.opts.Broker.Draining() || !s.admit() {
		s.warn.Warn("CoT websocket refused: too many sockets or shutting down", "remote", r.RemoteAddr, "max_sockets", s.cfg.MaxSockets)
		w.Header().Set("Retry-After", "5")
		httpapi.WriteMessage(w, http.StatusServiceUnavailable, "too many CoT websockets open; try again later")
		return
	}
	defer s.release()
	ws, err := websocket.Accept(w, r, &websocket.AcceptOptions{OriginPatterns: s.cfg.OriginPatterns})
	if err != nil {
		// Accept has answered the request (400, 403, 426).
		s.warn.Debug("CoT websocket handshake failed", "remote", r.RemoteAddr, "err", logx.Clip(err.Error()))
		return
	}
	// A message may hold a stream frame header around the TakMessage.
	ws.SetReadLimit(int64(s.cfg.MaxMessage) + 16)
	c := s.newConn(ws, r, user, serial)
	if !s.register(c) {
		// Shutdown began during the handshake: no close handshake with a
		// client that may never answer it, just the cut.
		c.sess.Close(broker.ReasonShutdown)
		c.cancelRead()
		ws.CloseNow()
		return
	}
	c.serve()
	s.unregister(c)
}

func (s *cotSockets) admit() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closing || s.reserved >= s.cfg.MaxSockets {
		return false
	}
	s.reserved++
	s.wg.Add(1)
	return true
}

func (s *cotSockets) release() {
	s.mu.Lock()
	s.reserved--
	s.mu.Unlock()
	s.wg.Done()
}

func (s *cotSockets) register(c *wsConn) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closing {
		return false
	}
	s.conns[c] = struct{}{}
	return true
}

func (s *cotSockets) unregister(c *wsConn) {
	s.mu.Lock()
	delete(s.conns, c)
	s.mu.Unlock()
}

func (s *cotSockets) snapshot() []*wsConn {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := make([]*wsConn, 0, len(s.conns))
	for c := range s.conns {
		out = append(out, c)
	}
	return out
}

func (s *cotSockets) len() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.conns)
}

// shutdown refuses new sockets and ends every open one with
// ReasonShutdown: reading stops, each writer sends what is queued until ctx
// ends and closes its socket with 1001 (going away); sockets still open
// then are cut off. It returns once every socket's goroutines ended.
func (s *cotSockets) shutdown(ctx context.Context) error {
	s.mu.Lock()
	s.closing = true
	s.mu.Unlock()
	if d, ok := ctx.Deadline(); ok {
		s.drainBy.Store(&d)
	}
	for _, c := range s.snapshot() {
		c.sess.Close(broker.ReasonShutdown)
	}
	done := make(chan struct{})
	go func() { s.wg.Wait(); close(done) }()
	select {
	case <-done:
		return nil
	case <-ctx.Done():
	}
	cut := s.snapshot()
	for _, c := range cut {
		c.cancelRead() // closes the connection even in the middle of a close handshake
	}
	<-done
	s.log.Info("CoT websockets still receiving at the end of the drain budget were closed", "sockets", len(cut))
	return nil
}

// drainDeadline is how long a writer may drain its queue at shutdown.
func (s *cotSockets) drainDeadline() time.Time {
	if d := s.drainBy.Load(); d != nil {
		return *d
	}
	return s.opts.Now().Add(s.cfg.WriteTimeout)
}

// closeWhere closes the sockets whose certificate serial matches.
func (s *cotSockets) closeWhere(match func(*big.Int) bool, reason broker.Reason) int {
	n := 0
	for _, c := range s.snapshot() {
		if c.serial != nil && match(c.serial) {
			c.sess.Close(reason)
			c.log.Info("CoT websocket closed by the server", "reason", reason.String())
			n++
		}
	}
	return n
}

// WebsocketStats counts what the CoT websockets refused or slowed.
type WebsocketStats struct {
	Open           int
	SyntaxErrors   uint64 // malformed messages skipped
	OversizeEvents uint64 // events refused: larger than what clients can receive
	Impostors      uint64 // position reports refused: uid bound to another identity
	Paced          uint64 // times a socket over its rate was made to wait
	TextRefused    uint64 // sockets closed for sending a text message
}

// WebsocketStats returns the CoT websocket counters.
func (h *Handler) WebsocketStats() WebsocketStats {
	s := h.ws
	return WebsocketStats{Open: s.len(), SyntaxErrors: s.stats.syntax.Load(), OversizeEvents: s.stats.oversize.Load(),
		Impostors: s.stats.impostor.Load(), Paced: s.stats.paced.Load(), TextRefused: s.stats.textRefused.Load()}
}
