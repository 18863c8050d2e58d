package metrics

import (
	"net/http"
	"strconv"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"
)

// Registry holds the appliance's metrics: the relay collector, the HTTP
// requests of every listener, and the Go runtime and process collectors.
type Registry struct {
	reg  *prometheus.Registry
	http *httpMetrics
}

// New builds the registry over src.
func New(src Sources) *Registry {
	reg := prometheus.NewRegistry()
	reg.MustRegister(relayCollector{src: src}, collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
	return &Registry{reg: reg, http: newHTTPMetrics(reg)}
}

// Handler serves the metrics as Prometheus text (GET /metrics).
func (r *Registry) Handler() http.Handler {
	return promhttp.HandlerFor(r.reg, promhttp.HandlerOpts{Registry: r.reg, MaxRequestsInFlight: 4, Timeout: 10 * time.Second})
}

// Wrap counts the requests a listener's handler answers.
func (r *Registry) Wrap(listener string, next http.Handler) http.Handler {
	return r.http.wrap(listener, next)
}

// httpMetrics counts requests of every HTTP listener by route and status,
// with their latency.
type httpMetrics struct {
	requests *prometheus.CounterVec
	latency  *prometheus.HistogramVec
}

func newHTTPMetrics(reg prometheus.Registerer) *httpMetrics {
	m := &httpMetrics{
		requests: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "outpost_http_requests_total",
			Help: "HTTP requests answered, by listener, route pattern and status code."}, []string{"listener", "route", "code"}),
		latency: prometheus.NewHistogramVec(prometheus.HistogramOpts{Name: "outpost_http_request_duration_seconds",
			Help:    "Time to answer an HTTP request, by listener and route pattern.",
			Buckets: []float64{.001, .005, .01, .025, .05, .1, .25, .5, 1, 2.5, 10, 60}}, []string{"listener", "route"}),
	}
	reg.MustRegister(m.requests, m.latency)
	return m
}

// wrap instruments a listener's handler. The route is the pattern of the
// httpapi.Mux route that answered (never the raw path, which a client
// controls), "unmatched" otherwise.
func (m *httpMetrics) wrap(listener string, next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		start := time.Now()
		rec := &statusRecorder{ResponseWriter: w, status: http.StatusOK}
		next.ServeHTTP(rec, r)
		route := rec.route
		if route == "" {
			route = "unmatched"
		}
		m.requests.WithLabelValues(listener, route, strconv.Itoa(rec.status)).Inc()
		m.latency.WithLabelValues(listener, route).Observe(time.Since(start).Seconds())
	})
}

// statusRecorder remembers the status a handler wrote. Unwrap lets
// http.ResponseController reach the connection (deadlines, hijacking).
type statusRecorder struct {
	http.ResponseWriter
	status int
	wrote  bool
	route  string // set by httpapi.Mux through NoteRoute
}

func (s *statusRecorder) NoteRoute(pattern string) { s.route = pattern }

func (s *statusRecorder) WriteHeader(code int) {
	if !s.wrote {
		s.status, s.wrote = code, true
	}
	s.ResponseWriter.WriteHeader(code)
}

func (s *statusRecorder) Write(b []byte) (int, error) {
	s.wrote = true
	return s.ResponseWriter.Write(b)
}

func (s *statusRecorder) Unwrap() http.ResponseWriter { return s.ResponseWriter }

// Flush passes flushes through (streamed downloads).
func (s *statusRecorder) Flush() {
	if f, ok := s.ResponseWriter.(http.Flusher); ok {
		f.Flush()
	}
}
