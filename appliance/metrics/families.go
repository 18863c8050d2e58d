package metrics

import (
	"github.com/prometheus/client_golang/prometheus"

	"outpost/appliance/federation"
	"outpost/appliance/mesh"
)

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
