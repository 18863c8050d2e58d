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
	"net/http"
	"sync/atomic"
	"time"

	"github.com/coder/websocket"

	"outpost/appliance/access"
	"outpost/appliance/broker"
	"outpost/appliance/cot"
	"outpost/appliance/cotsession"
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

// cotSockets owns the open CoT websockets. What they share with the
// streaming ports (message handling, refusal accounting, the registry of
// open sockets, shutdown) is the CoT session driver's (cotsession); this
// file and websocket_conn.go keep what is the websocket's own: the upgrade,
// framing, the keepalive and the writer.
type cotSockets struct {
	opts *Options
	cfg  WebsocketOptions
	log  *slog.Logger
	warn *logx.Limiter // warnings a client can cause, bounded

	// sessions is the CoT session driver: message handling and the
	// registry of open sockets. A socket takes its place (counted against
	// MaxSockets) before its handshake.
	sessions *cotsession.Driver[*wsConn]

	textRefused atomic.Uint64 // sockets closed for sending a text message
}

func newCoTSockets(opts *Options, log *slog.Logger) *cotSockets {
	opts.Websocket.fill()
	log = log.With("listener", WebsocketListener)
	s := &cotSockets{opts: opts, cfg: opts.Websocket, log: log, warn: logx.NewLimiter(log, 20, 10*time.Second)}
	s.sessions = cotsession.New[*wsConn](cotsession.Config{Name: WebsocketListener, MaxMessage: s.cfg.MaxMessage,
		MaxEventsPerSecond: s.cfg.MaxEventsPerSecond, MaxBytesPerSecond: s.cfg.MaxBytesPerSecond,
		Broker: opts.Broker, Logger: log, Warn: s.warn, Now: opts.Now})
	return s
}

// serveHTTP upgrades GET /takproto/1 and runs the socket until it closes.
// Its refusals come before the upgrade; once upgraded, the socket answers
// everything itself.
func (s *cotSockets) serveHTTP(w http.ResponseWriter, r *http.Request) error {
	if r.TLS == nil {
		return httpapi.Errorf(http.StatusForbidden,
			"CoT over websocket needs mutual TLS: connect to the HTTPS port (8443) with a client certificate")
	}
	// The caller the handler resolved from its certificate (access.md
	// "Principals"): its name, serial and groups are the socket's.
	p := access.From(r)
	id := cotsession.Identity{User: p.Identity(), Serial: p.Serial, In: p.In, Out: p.Out, Grouped: true}
	if id.User == "" {
		return httpapi.Errorf(http.StatusForbidden, "CoT over websocket needs a client certificate with a common name")
	}
	if s.opts.Broker.Draining() || !s.sessions.Enter(s.cfg.MaxSockets) {
		s.warn.Warn("CoT websocket refused: too many sockets or shutting down", "remote", r.RemoteAddr, "max_sockets", s.cfg.MaxSockets)
		w.Header().Set("Retry-After", "5")
		return httpapi.Errorf(http.StatusServiceUnavailable, "too many CoT websockets open; try again later")
	}
	ws, err := websocket.Accept(w, r, &websocket.AcceptOptions{OriginPatterns: s.cfg.OriginPatterns})
	if err != nil {
		s.sessions.Leave(nil)
		// Accept has answered the request (400, 403, 426).
		s.warn.Debug("CoT websocket handshake failed", "remote", r.RemoteAddr, "err", logx.Clip(err.Error()))
		return nil
	}
	// A message may hold a stream frame header around the TakMessage.
	ws.SetReadLimit(int64(s.cfg.MaxMessage) + 16)
	c := s.newConn(ws, r, id)
	defer s.sessions.Leave(c)
	if !s.sessions.Add(c) {
		// Shutdown began during the handshake: no close handshake with a
		// client that may never answer it, just the cut.
		c.Sess.Close(broker.ReasonShutdown)
		c.Cut()
		ws.CloseNow()
		return nil
	}
	c.serve()
	return nil
}

// shutdown refuses new sockets and ends every open one with
// ReasonShutdown: reading stops, each writer sends what is queued until ctx
// ends and closes its socket with 1001 (going away); sockets still open
// then are cut off. It returns once every socket's goroutines ended.
func (s *cotSockets) shutdown(ctx context.Context) error {
	s.sessions.Shutdown(ctx)
	return nil
}

// drainDeadline is how long a writer may drain its queue at shutdown.
func (s *cotSockets) drainDeadline() time.Time {
	return s.sessions.DrainDeadline(s.opts.Now().Add(s.cfg.WriteTimeout))
}

// WebsocketStats counts what the CoT websockets refused or slowed.
type WebsocketStats struct {
	// Open, SyntaxErrors, OversizeEvents, Impostors, Paced: the session
	// driver's (JunkBytes stays 0: a websocket message has no frames to
	// resynchronise on).
	cotsession.Stats
	TextRefused uint64 // sockets closed for sending a text message
}

// WebsocketStats returns the CoT websocket counters.
func (h *Handler) WebsocketStats() WebsocketStats {
	return WebsocketStats{Stats: h.ws.sessions.Stats(), TextRefused: h.ws.textRefused.Load()}
}
