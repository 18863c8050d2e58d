package metrics

import (
	"github.com/prometheus/client_golang/prometheus"

	"outpost/appliance/broker"
	"outpost/appliance/diskspace"
	"outpost/appliance/federation"
	"outpost/appliance/httpapi"
	"outpost/appliance/marti"
	"outpost/appliance/mesh"
	"outpost/appliance/netx"
	"outpost/appliance/store"
	"outpost/appliance/stream"
)

// Sources are what the collector reads when scraped; a nil source is left
// out.
type Sources struct {
	Broker *broker.Broker
	// Listeners lists the enabled listeners, in order: a *stream.Listener,
	// an *httpapi.Listener, a mesh bridge or input (Stats() mesh.Stats) or
	// the *federation.Federation; others are left out.
	Listeners func() []Listener
	Websocket func() (marti.WebsocketStats, bool) // CoT over websocket on 8443 (false: none yet)
	History   *store.History
	Audit     interface {
		AuditPruned() (byAge, byCount uint64)
	}
	Space *diskspace.Gauge
}

// Listener is one listener by name.
type Listener struct {
	Name     string
	Listener any
}

// relayCollector turns the broker's, the listeners' and the history's
// counters into metrics at scrape time.
type relayCollector struct {
	src Sources
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
	src := c.src
	counter := func(d *prometheus.Desc, v uint64, labels ...string) {
		ch <- prometheus.MustNewConstMetric(d, prometheus.CounterValue, float64(v), labels...)
	}
	gauge := func(d *prometheus.Desc, v float64, labels ...string) {
		ch <- prometheus.MustNewConstMetric(d, prometheus.GaugeValue, v, labels...)
	}
	if src.Broker != nil {
		st := src.Broker.Stats()
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
		gauge(mRetainedItems, float64(len(src.Broker.Retained())))
	}
	var listeners []Listener
	if src.Listeners != nil {
		listeners = src.Listeners()
	}
	for _, nl := range listeners {
		name := nl.Name
		var ns netx.Stats
		switch l := nl.Listener.(type) {
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
		case *httpapi.Listener:
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
	if ws, ok := websocketStats(src); ok {
		// CoT over websocket on 8443 (/takproto/1): protobuf only.
		gauge(mConnections, float64(ws.Open), marti.WebsocketListener, "protobuf")
		counter(mRefused, ws.OversizeEvents, marti.WebsocketListener, "too_large")
		counter(mRefused, ws.Impostors, marti.WebsocketListener, "uid_taken")
		counter(mRefused, ws.SyntaxErrors, marti.WebsocketListener, "malformed")
		counter(mRefused, ws.TextRefused, marti.WebsocketListener, "text_message")
		counter(mPaced, ws.Paced, marti.WebsocketListener)
	}
	if src.History != nil {
		hs := src.History.Stats()
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
	if src.Audit != nil {
		byAge, byCount := src.Audit.AuditPruned()
		counter(mAuditPruned, byAge, "retention")
		counter(mAuditPruned, byCount, "budget")
	}
	if src.Space == nil {
		return
	}
	if st := src.Space.Status(); st.Known {
		gauge(mDiskFree, float64(st.Free))
		gauge(mDiskTotal, float64(st.Total))
		gauge(mDiskReserve, float64(st.Reserve))
		gauge(mDiskFloor, float64(st.Floor))
	}
}

func websocketStats(src Sources) (marti.WebsocketStats, bool) {
	if src.Websocket == nil {
		return marti.WebsocketStats{}, false
	}
	return src.Websocket()
}
