package httpapi

import (
	"context"
	"log/slog"
	"net"
	"net/http"
	"net/netip"

	"outpost/appliance/logx"
)

// Mux is an http.ServeMux (method-and-path patterns) whose unknown paths are
// answered 404 and wrong methods 405 (with Allow) in JSON, never 200 and
// never the standard library's plain text (docs/api.md §7).
// Its handlers' failures (Fail) are logged to its logger.
type Mux struct {
	*http.ServeMux
	log *slog.Logger
}

// NewMux returns an empty Mux logging to log (nil: slog.Default()).
func NewMux(log *slog.Logger) *Mux {
	if log == nil {
		log = slog.Default()
	}
	return &Mux{ServeMux: http.NewServeMux(), log: log}
}

func (m *Mux) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	h, pattern := m.ServeMux.Handler(r)
	if pattern != "" {
		noteRoute(w, pattern)
		m.ServeMux.ServeHTTP(w, r.WithContext(context.WithValue(r.Context(), loggerKey{}, m.log)))
		return
	}
	// No pattern matched: ServeMux's own answer is a 404, or a 405 with an
	// Allow header when the path exists with other methods. Learn which
	// from the headers it sets, and answer in JSON instead.
	probe := &statusProbe{header: http.Header{}}
	h.ServeHTTP(probe, r)
	if probe.status == http.StatusMethodNotAllowed {
		w.Header().Set("Allow", probe.header.Get("Allow"))
		WriteMessage(w, http.StatusMethodNotAllowed, "method "+r.Method+" not allowed on "+logx.Clip(r.URL.Path))
		return
	}
	WriteMessage(w, http.StatusNotFound, "no such endpoint: "+r.Method+" "+logx.Clip(r.URL.Path))
}

// statusProbe records the status and headers of ServeMux's fallback
// handlers and discards their plain-text body.
type statusProbe struct {
	header http.Header
	status int
}

func (p *statusProbe) Header() http.Header         { return p.header }
func (p *statusProbe) Write(b []byte) (int, error) { return len(b), nil }
func (p *statusProbe) WriteHeader(status int)      { p.status = status }

// ClientAddr is the address of the connection a request came on (never a
// header the client may have forged).
func ClientAddr(r *http.Request) netip.Addr {
	host, _, err := net.SplitHostPort(r.RemoteAddr)
	if err != nil {
		host = r.RemoteAddr
	}
	a, _ := netip.ParseAddr(host)
	return a.Unmap()
}

// RouteNoter is implemented by a ResponseWriter wrapper that wants to know
// which route pattern answered the request (the metrics middleware): the
// raw path is client-controlled and unbounded, the pattern is not.
type RouteNoter interface {
	NoteRoute(pattern string)
}

// noteRoute tells the first RouteNoter among w and the writers it wraps.
func noteRoute(w http.ResponseWriter, pattern string) {
	for w != nil {
		if n, ok := w.(RouteNoter); ok {
			n.NoteRoute(pattern)
			return
		}
		u, ok := w.(interface{ Unwrap() http.ResponseWriter })
		if !ok {
			return
		}
		w = u.Unwrap()
	}
}
