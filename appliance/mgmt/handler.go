package mgmt

import (
	"log/slog"
	"net/http"
	"net/netip"
	"time"

	"outpost/appliance/broker"
	"outpost/appliance/httpapi"
	"outpost/appliance/logx"
)

// Options configure the management handler.
type Options struct {
	Broker *broker.Broker
	// AllowedClientIP reports whether an address is in AllowedCLIIPs
	// (api.md §5.4). Nil refuses everyone.
	AllowedClientIP func(netip.Addr) bool
	// Metrics serves GET /metrics (Prometheus text), to callers the
	// AllowedCLIIPs list admits. Nil: not served.
	Metrics http.Handler
	Logger  *slog.Logger
}

type handler struct {
	opts     Options
	log      *slog.Logger
	refusals *logx.Limiter // /Clients refusals: at most a few lines per interval
}

// NewHandler returns the management API handler.
func NewHandler(opts Options) http.Handler {
	h := &handler{opts: opts, log: opts.Logger}
	if h.log == nil {
		h.log = slog.Default()
	}
	h.log = h.log.With("component", "mgmt")
	h.refusals = logx.NewLimiter(h.log, 10, 10*time.Second)
	mux := httpapi.NewMux()
	// api.md §4.1: the only route without authentication.
	mux.HandleFunc("GET /Alive", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/plain; charset=utf-8")
		w.Write([]byte("API is running"))
	})
	mux.HandleFunc("GET /Clients", h.clients)
	if opts.Metrics != nil {
		mux.Handle("GET /metrics", h.ipAllowed(opts.Metrics))
	}
	return mux
}
