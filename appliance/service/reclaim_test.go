package service

import (
	"log/slog"
	"runtime"
	"runtime/debug"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

func TestQuietLook(t *testing.T) {
	const mib = 1 << 20
	for _, tc := range []struct {
		name      string
		prev, now heapSample
		wantQuiet bool
	}{
		{"little free", heapSample{0, 100}, heapSample{2 * mib, 100}, false},
		{"free and nothing allocated", heapSample{0, 100}, heapSample{8 * mib, 100}, true},
		{"free and a little allocated", heapSample{0, 100}, heapSample{8 * mib, 100 + mib}, true},
		{"allocating a quarter of what is free", heapSample{0, 0}, heapSample{8 * mib, 2 * mib}, false},
		{"busy", heapSample{0, 0}, heapSample{64 * mib, 500 * mib}, false},
	} {
		if got := quietLook(tc.prev, tc.now); got != tc.wantQuiet {
			t.Errorf("%s: quietLook = %v, want %v", tc.name, got, tc.wantQuiet)
		}
	}
}

// scripted runs a reclaimer over heap samples made by next (given the
// look's number and how many times it has freed so far) and returns how
// many times it freed after n looks.
func scripted(t *testing.T, n int, next func(look, freed int) heapSample) int {
	t.Helper()
	var mu sync.Mutex
	look, freed := 0, 0
	all := make(chan struct{})
	r := &reclaimer{period: 2 * time.Millisecond, log: slog.New(slog.DiscardHandler),
		stop: make(chan struct{}), done: make(chan struct{})}
	r.read = func() heapSample {
		mu.Lock()
		defer mu.Unlock()
		look++
		if look == n {
			close(all)
		}
		return next(look, freed)
	}
	r.free = func() {
		mu.Lock()
		freed++
		mu.Unlock()
	}
	go r.run()
	select {
	case <-all:
	case <-time.After(10 * time.Second):
		t.Fatal("the reclaimer stopped looking")
	}
	r.close()
	mu.Lock()
	defer mu.Unlock()
	return freed
}

func TestReclaimerLeavesABusyServerAlone(t *testing.T) {
	// 64 MiB free, but 40 MiB allocated between looks: the heap is in use.
	freed := scripted(t, 50, func(look, _ int) heapSample {
		return heapSample{spare: 64 << 20, allocated: uint64(look) * 40 << 20}
	})
	if freed != 0 {
		t.Fatalf("returned memory %d times while the server was busy", freed)
	}
}

func TestReclaimerReturnsOnceAfterAQuietPeriod(t *testing.T) {
	// A burst (looks 1-5), then quiet. After the return the free heap is
	// small, so it is not returned again.
	freed := scripted(t, 40, func(look, freed int) heapSample {
		switch {
		case look <= 5:
			return heapSample{spare: 32 << 20, allocated: uint64(look) * 100 << 20}
		case freed > 0:
			return heapSample{spare: 1 << 20, allocated: 500<<20 + uint64(look)*1024}
		default:
			return heapSample{spare: 32 << 20, allocated: 500<<20 + uint64(look)*1024}
		}
	})
	if freed != 1 {
		t.Fatalf("returned memory %d times, want once", freed)
	}
}

// TestReclaimerReturnsTheRuntimesFreeHeap runs the reclaimer against the
// real runtime: garbage of a burst lies free after a collection, and the
// reclaimer hands it back.
func TestReclaimerReturnsTheRuntimesFreeHeap(t *testing.T) {
	burst := make([][]byte, 0, 1024)
	for range 1024 {
		b := make([]byte, 64<<10)
		b[0] = 1 // touch it
		burst = append(burst, b)
	}
	runtime.KeepAlive(burst)
	burst = nil
	runtime.GC()
	before := readHeap()
	if before.spare < reclaimMinFree {
		t.Skipf("the runtime returned the burst's memory by itself (%d bytes spare)", before.spare)
	}
	var freed atomic.Int32
	r := &reclaimer{period: 20 * time.Millisecond, read: readHeap, log: slog.New(slog.DiscardHandler),
		stop: make(chan struct{}), done: make(chan struct{})}
	r.free = func() { debug.FreeOSMemory(); freed.Add(1) }
	go r.run()
	defer r.close()
	deadline := time.Now().Add(10 * time.Second)
	for freed.Load() == 0 && time.Now().Before(deadline) {
		time.Sleep(10 * time.Millisecond)
	}
	if freed.Load() == 0 {
		t.Fatalf("the reclaimer never returned the %d MiB spare after a burst", before.spare>>20)
	}
	if after := readHeap(); after.spare >= before.spare/2 {
		t.Fatalf("spare heap still backed by memory: %d bytes, %d before", after.spare, before.spare)
	}
}
