package service

import (
	"log/slog"
	"runtime/debug"
	"runtime/metrics"
	"time"
)

// Returning memory when the server goes quiet (docs/architecture.md
// "Memory per connection"). The Go heap grows by gcPercent over what is
// live before the next collection, and the runtime keeps what a collection
// frees for the next cycle. A server that goes quiet after a burst (a
// thousand clients connecting at once, each with a TLS handshake) would
// sit on that memory for as long as it stays quiet, and an idle one holds
// the garbage of its clients' pings until the heap reaches the target. The
// reclaimer watches the heap: when, for a whole quiet period, the server
// allocated little compared with what it could give back (free heap and
// garbage not collected yet), it runs debug.FreeOSMemory once (a
// collection, then every free page goes back to the system). A busy server
// allocates far more than that, so it is left to the collector's pacing.

// reclaimMinFree is the least memory worth giving back.
const reclaimMinFree = 4 << 20

// heapSample is what the reclaimer reads of the runtime at one look.
type heapSample struct {
	// spare is what a collection and a return would give back: free heap
	// still backed by memory, and objects the last collection did not find
	// live (garbage since then, or an estimate above it).
	spare     uint64
	allocated uint64 // bytes allocated since the start, cumulative
}

func readHeap() heapSample {
	s := []metrics.Sample{{Name: "/memory/classes/heap/free:bytes"}, {Name: "/memory/classes/heap/objects:bytes"},
		{Name: "/gc/heap/live:bytes"}, {Name: "/gc/heap/allocs:bytes"}}
	metrics.Read(s)
	free, objects, live := s[0].Value.Uint64(), s[1].Value.Uint64(), s[2].Value.Uint64()
	spare := free
	if objects > live {
		spare += objects - live
	}
	return heapSample{spare: spare, allocated: s[3].Value.Uint64()}
}

// quietLook tells whether a look at the heap counts toward a quiet period:
// enough could be given back, and since the previous look the server
// allocated less than a quarter of it.
func quietLook(prev, now heapSample) bool {
	return now.spare >= reclaimMinFree && (now.allocated-prev.allocated)*4 < now.spare
}

// reclaimer returns the free heap after a quiet period. It looks at the
// heap every period/2 and returns after two quiet looks in a row.
type reclaimer struct {
	period time.Duration
	read   func() heapSample
	free   func() // debug.FreeOSMemory
	log    *slog.Logger
	stop   chan struct{}
	done   chan struct{}
}

func startReclaimer(period time.Duration, log *slog.Logger) *reclaimer {
	r := &reclaimer{period: period, read: readHeap, free: debug.FreeOSMemory, log: log,
		stop: make(chan struct{}), done: make(chan struct{})}
	go r.run()
	return r
}

func (r *reclaimer) run() {
	defer close(r.done)
	t := time.NewTicker(r.period / 2)
	defer t.Stop()
	prev, quiet := r.read(), 0
	for {
		select {
		case <-r.stop:
			return
		case <-t.C:
		}
		now := r.read()
		if quietLook(prev, now) {
			quiet++
		} else {
			quiet = 0
		}
		prev = now
		if quiet < 2 {
			continue
		}
		r.free()
		after := r.read()
		r.log.Debug("returned free heap memory to the system after a quiet period",
			"mib", (int64(now.spare)-int64(after.spare))>>20)
		prev, quiet = after, 0
	}
}

// close stops the reclaimer and waits for it.
func (r *reclaimer) close() {
	close(r.stop)
	<-r.done
}
