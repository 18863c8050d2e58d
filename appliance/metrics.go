package appliance

import (
	"net/http"
	"strconv"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"

	"outpost/appliance/broker"
	"outpost/appliance/federation"
	"outpost/appliance/marti"
	"outpost/appliance/mesh"
	"outpost/appliance/netx"
	"outpost/appliance/stream"
)

// The appliance's metrics (docs/architecture.md "Metrics"), served as
// Prometheus text at GET /metrics on the management port. The relay keeps
// plain atomic counters on its hot path; this collector reads their
// snapshots only when scraped. HTTP requests are counted by a middleware
// around every HTTP listener's handler.

// relayCollector turns the broker's, the listeners' and the history's
// counters into metrics at scrape time.
type relayCollector struct {
	a *Appliance
}

func desc(name, help string, labels ...string) *prometheus.Desc {
	return prometheus.NewDesc("outpost_"+name, help, labels, nil)
}

var (
	mConnections   = desc("cot_connections", "CoT streaming connections open now, by listener and wire format.", "listener", "format")
	mSessions      = desc("cot_sessions_joined_total", "CoT sessions that ever joined the broker.")
	mEventsIn      = desc("cot_events_in_total", "CoT events routed (control types excluded), by class.", "class")
	mDeliveries    = desc("cot_deliveries_total", "CoT events queued to clients, by class.", "class")
	mCoalesced     = desc("cot_coalesced_total", "Queued position reports replaced by a newer one of the same uid (slow client).")
	mDirected      = desc("cot_directed_total", "CoT events routed by <marti><dest>.")
	mRepeated      = desc("cot_repeated_total", "Retained events re-broadcast (repeated geo objects, active emergencies).")
	mDepartures    = desc("cot_departures_total", "Departures (t-x-d-d) sent for clients that left.")
	mRefused       = desc("cot_refused_events_total", "CoT events refused, by listener and cause.", "listener", "cause")
	mQueued        = desc("cot_queued_bytes", "Bytes waiting in client queues now (estimate).")
	mClosed        = desc("cot_sessions_closed_total", "CoT sessions closed, by reason.", "reason")
	mPaced         = desc("cot_paced_total", "Times a connection sending over its rate was made to wait, by listener.", "listener")
	mJunk          = desc("cot_skipped_bytes_total", "Bytes skipped looking for the next protobuf frame, by listener.", "listener")
	mAccepted      = desc("connections_accepted_total", "Connections accepted, by listener.", "listener")
	mConnRefused   = desc("connections_refused_total", "Connections refused at a limit, by listener and cause.", "listener", "cause")
	mAcceptErrors  = desc("accept_errors_total", "Failed accepts (retried with back-off), by listener.", "listener")
	mHSFailed      = desc("tls_handshake_failures_total", "TLS handshakes that failed, by listener and cause.", "listener", "cause")
	mHSInFlight    = desc("tls_handshakes_in_flight", "TLS handshakes in progress now, by listener.", "listener")
	mHistEvents    = desc("history_events_total", "Events handed to the CoT history, by outcome.", "outcome")
	mHistPruned    = desc("history_pruned_total", "History events pruned, by rule.", "rule")
	mHistBacklog   = desc("history_backlog", "Events waiting to be written to the CoT history.")
	mHistBytes     = desc("history_bytes", "Bytes of CoT history stored.")
	mRetainedItems = desc("cot_retained", "Events retained for replay to new clients now.")
	mAuditPruned   = desc("audit_pruned_total", "Audit records pruned, by rule: older than auditRetention, or beyond maxAuditRecords.", "rule")
	mDiskFree      = desc("disk_free_bytes", "Bytes free on the data directory's filesystem (for an unprivileged process).")
	mDiskTotal     = desc("disk_total_bytes", "Size of the data directory's filesystem.")
	mDiskReserve   = desc("disk_reserve_bytes", "Free space kept in reserve (diskReserve): below it uploads get 507 and the CoT history pauses.")
	mMeshDevices   = desc("mesh_devices", "Mesh and UDP device addresses heard within meshIdleTimeout, by listener.", "listener")
	mMeshDatagrams = desc("mesh_datagrams_total", "Datagrams read (in) and sent (out, once per interface), by listener.", "listener", "direction")
	mMeshDropped   = desc("mesh_dropped_total", "Datagrams dropped, by listener and reason: in (size, loop, duplicate, budget, malformed) and out (too_large, send_error).", "listener", "reason")
	mFedConnected  = desc("federate_connected", "1 while a federation link to the federate is up.", "federate")
	mFedEvents     = desc("federate_events_total", "Federation events received (in), published to local clients (published), sent (out), queued while the link was down (queued) and sent from that queue (queue_sent), by federate.", "federate", "direction")
	mFedDropped    = desc("federate_dropped_total", "Federation events dropped, by federate and reason: queue (outbound queue full), loop, hops, duplicate, malformed, too_large, contacts, group (federate groups mapped to no local group), hop_limited (not sent on), queued_expired (dropped from the persistent queue: too old, over its bytes, or not stored).", "federate", "reason")
	mFedReconnects = desc("federate_reconnects_total", "Outbound federation connections made again after a failure, by federate.", "federate")
	mFedROL        = desc("federate_rol_total", "Federation ROL (mission changes): messages received (in), sent (out), statements applied (applied), not applied here (ignored), refused by the store (failed); files stored (files_stored) and already kept (files_known), by federate.", "federate", "direction")
	mFedROLDropped = desc("federate_rol_dropped_total", "Federation ROL messages dropped, by federate and reason: malformed, too_large, loop (or hops spent), duplicate, queue (outbound queue full).", "federate", "reason")
	mDiskFloor     = desc("disk_floor_bytes", "Hard floor of free space (diskFloor): below it every write that grows the database gets 507.")
)

func (c relayCollector) Describe(ch chan<- *prometheus.Desc) {
	prometheus.DescribeByCollect(c, ch)
}

func (c relayCollector) Collect(ch chan<- prometheus.Metric) {
	a := c.a
	counter := func(d *prometheus.Desc, v uint64, labels ...string) {
		ch <- prometheus.MustNewConstMetric(d, prometheus.CounterValue, float64(v), labels...)
	}
	gauge := func(d *prometheus.Desc, v float64, labels ...string) {
		ch <- prometheus.MustNewConstMetric(d, prometheus.GaugeValue, v, labels...)
	}
	if a.broker != nil {
		st := a.broker.Stats()
		counter(mSessions, st.Joined)
		for _, cl := range broker.Classes() {
			counter(mEventsIn, st.In[cl], cl.Label())
			counter(mDeliveries, st.Out[cl], cl.Label())
		}
		counter(mCoalesced, st.Coalesced)
		counter(mDirected, st.Directed)
		counter(mRepeated, st.Repeated)
		counter(mDepartures, st.Departures)
		gauge(mQueued, float64(st.QueuedBytes))
		for _, r := range broker.Reasons() {
			counter(mClosed, st.Closed[r], r.Label())
		}
		gauge(mRetainedItems, float64(len(a.broker.Retained())))
	}
	for _, name := range a.names {
		var ns netx.Stats
		switch l := a.listeners[name].(type) {
		case *stream.Listener:
			st := l.Stats()
			gauge(mConnections, float64(st.Open-st.Protobuf), name, "xml")
			gauge(mConnections, float64(st.Protobuf), name, "protobuf")
			counter(mRefused, st.OversizeEvents, name, "too_large")
			counter(mRefused, st.Impostors, name, "uid_taken")
			counter(mRefused, st.SyntaxErrors, name, "malformed")
			counter(mPaced, st.Paced, name)
			counter(mJunk, st.JunkBytes, name)
			ns = st.Net
		case *httpListener:
			ns = l.Stats()
		case interface{ Stats() mesh.Stats }:
			collectMesh(counter, gauge, name, l.Stats())
			continue
		case *federation.Federation:
			collectFederation(counter, gauge, l.Stats())
			st := l.SessionStats()
			counter(mRefused, st.OversizeEvents, name, "too_large")
			counter(mRefused, st.Impostors, name, "uid_taken")
			counter(mPaced, st.Paced, name)
			continue
		default:
			continue
		}
		counter(mAccepted, ns.Accepted, name)
		counter(mAcceptErrors, ns.AcceptErrors, name)
		for cause, n := range ns.Refused {
			counter(mConnRefused, n, name, cause)
		}
		for cause, n := range ns.HandshakeFailures {
			counter(mHSFailed, n, name, cause)
		}
		gauge(mHSInFlight, float64(ns.Handshaking), name)
	}
	if a.marti != nil {
		// CoT over websocket on 8443 (/takproto/1): protobuf only.
		ws := a.marti.WebsocketStats()
		gauge(mConnections, float64(ws.Open), marti.WebsocketListener, "protobuf")
		counter(mRefused, ws.OversizeEvents, marti.WebsocketListener, "too_large")
		counter(mRefused, ws.Impostors, marti.WebsocketListener, "uid_taken")
		counter(mRefused, ws.SyntaxErrors, marti.WebsocketListener, "malformed")
		counter(mRefused, ws.TextRefused, marti.WebsocketListener, "text_message")
		counter(mPaced, ws.Paced, marti.WebsocketListener)
	}
	if a.history != nil {
		hs := a.history.Stats()
		counter(mHistEvents, hs.Written-hs.Repeats, "stored")
		counter(mHistEvents, hs.Repeats, "repeat")
		counter(mHistEvents, hs.Dropped, "dropped")
		counter(mHistEvents, hs.DroppedBudget, "over_budget")
		counter(mHistEvents, hs.DroppedDisk, "disk_reserve")
		counter(mHistPruned, hs.Pruned, "retention")
		counter(mHistPruned, hs.PrunedSize, "size")
		gauge(mHistBacklog, float64(hs.Backlog))
		gauge(mHistBytes, float64(hs.Bytes))
	}
	if a.store != nil {
		byAge, byCount := a.store.Accounts().AuditPruned()
		counter(mAuditPruned, byAge, "retention")
		counter(mAuditPruned, byCount, "budget")
	}
	if st := a.space.Status(); st.Known {
		gauge(mDiskFree, float64(st.Free))
		gauge(mDiskTotal, float64(st.Total))
		gauge(mDiskReserve, float64(st.Reserve))
		gauge(mDiskFloor, float64(st.Floor))
	}
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

// newMetrics builds the registry: the relay collector, HTTP metrics, and
// the Go runtime and process collectors. It returns the /metrics handler.
func (a *Appliance) newMetrics() http.Handler {
	reg := prometheus.NewRegistry()
	reg.MustRegister(relayCollector{a: a}, collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
	a.httpMetrics = newHTTPMetrics(reg)
	return promhttp.HandlerFor(reg, promhttp.HandlerOpts{Registry: reg, MaxRequestsInFlight: 4, Timeout: 10 * time.Second})
}

// collectMesh reports a mesh bridge's or UDP input's counters.
func collectMesh(counter func(*prometheus.Desc, uint64, ...string), gauge func(*prometheus.Desc, float64, ...string), name string, st mesh.Stats) {
	gauge(mMeshDevices, float64(st.Devices), name)
	counter(mMeshDatagrams, st.DatagramsIn, name, "in")
	counter(mMeshDatagrams, st.DatagramsOut, name, "out")
	for reason, n := range map[string]uint64{"size": st.DroppedSize, "loop": st.DroppedLoop, "duplicate": st.DroppedDuplicate,
		"budget": st.DroppedBudget, "malformed": st.DroppedMalformed, "too_large": st.DroppedOutSize, "send_error": st.SendErrors} {
		counter(mMeshDropped, n, name, reason)
	}
	counter(mRefused, st.OversizeEvents, name, "too_large")
	counter(mRefused, st.Impostors, name, "uid_taken")
}

// collectFederation reports each federate's counters.
func collectFederation(counter func(*prometheus.Desc, uint64, ...string), gauge func(*prometheus.Desc, float64, ...string), sts []federation.FederateStats) {
	for _, st := range sts {
		up := 0.0
		if st.Connected {
			up = 1
		}
		gauge(mFedConnected, up, st.Name)
		counter(mFedEvents, st.EventsIn, st.Name, "in")
		counter(mFedEvents, st.Published, st.Name, "published")
		counter(mFedEvents, st.EventsOut, st.Name, "out")
		counter(mFedEvents, st.Queued, st.Name, "queued")
		counter(mFedEvents, st.QueueSent, st.Name, "queue_sent")
		for _, d := range []struct {
			reason string
			n      uint64
		}{{"queue", st.DroppedQueue}, {"loop", st.DroppedLoop}, {"hops", st.DroppedHops}, {"duplicate", st.DroppedDuplicate},
			{"malformed", st.DroppedMalformed}, {"too_large", st.DroppedSize}, {"contacts", st.DroppedContacts}, {"group", st.DroppedGroup}, {"hop_limited", st.HopLimited},
			{"queued_expired", st.DroppedQueued}} {
			counter(mFedDropped, d.n, st.Name, d.reason)
		}
		counter(mFedReconnects, st.Reconnects, st.Name)
		for dir, n := range map[string]uint64{"in": st.ROLIn, "out": st.ROLOut, "applied": st.ROLApplied, "ignored": st.ROLIgnored,
			"failed": st.ROLFailed, "files_stored": st.FilesStored, "files_known": st.FilesKnown} {
			counter(mFedROL, n, st.Name, dir)
		}
		for reason, n := range map[string]uint64{"malformed": st.ROLDroppedMalformed, "too_large": st.ROLDroppedSize,
			"loop": st.ROLDroppedLoop, "duplicate": st.ROLDroppedDuplicate, "queue": st.ROLDroppedQueue, "group": st.ROLDroppedGroup} {
			counter(mFedROLDropped, n, st.Name, reason)
		}
	}
}
