package store

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"io"
	"os"
	"runtime"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// TestBlobLarge300MiB writes and reads back a 300 MiB blob, streaming both
// ways, and proves memory stays flat: the peak Go heap in use, sampled
// throughout, must stay far below the blob's size. Slow under -race, so it
// skips there; the Makefile runs it on its own without -race:
//
//	go test -run TestBlobLarge ./appliance/store
func TestBlobLarge300MiB(t *testing.T) {
	if raceEnabled {
		t.Skip("300 MiB blob is too slow under the race detector; run `go test -run TestBlobLarge ./appliance/store` without -race")
	}
	if testing.Short() {
		t.Skip("-short")
	}
	const (
		size     = 300 << 20
		heapCeil = 40 << 20
	)
	s := openTest(t, Options{})
	ctx := context.Background()

	runtime.GC()
	var peak atomic.Uint64
	stop := make(chan struct{})
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		tick := time.NewTicker(5 * time.Millisecond)
		defer tick.Stop()
		var ms runtime.MemStats
		for {
			runtime.ReadMemStats(&ms)
			if ms.HeapInuse > peak.Load() {
				peak.Store(ms.HeapInuse)
			}
			select {
			case <-stop:
				return
			case <-tick.C:
			}
		}
	}()

	start := time.Now()
	src := newPattern(size, 42)
	srcHash := sha256.New()
	w, err := s.Files().CreateBlob(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := io.Copy(w, io.TeeReader(src, srcHash)); err != nil {
		t.Fatal(err)
	}
	info, err := w.Commit(ctx)
	if err != nil {
		t.Fatal(err)
	}
	wrote := time.Since(start)
	// journal_size_limit: the WAL does not stay anywhere near the blob's size.
	if st, err := os.Stat(s.path + "-wal"); err == nil && st.Size() > 80<<20 {
		t.Errorf("WAL is %d MiB after the upload, want it bounded by journal_size_limit", st.Size()>>20)
	} else if err == nil {
		t.Logf("WAL after upload: %.1f MiB", float64(st.Size())/(1<<20))
	}
	want := hex.EncodeToString(srcHash.Sum(nil))
	if info.Size != size || info.SHA256 != want {
		t.Fatalf("committed %d bytes sha %s; want %d sha %s", info.Size, info.SHA256, size, want)
	}

	start = time.Now()
	r, err := s.Files().OpenBlob(ctx, info.ID)
	if err != nil {
		t.Fatal(err)
	}
	h := sha256.New()
	n, err := io.Copy(h, r)
	if err != nil {
		t.Fatal(err)
	}
	read := time.Since(start)
	if got := hex.EncodeToString(h.Sum(nil)); n != size || got != want {
		t.Fatalf("read back %d bytes sha %s; want %d sha %s", n, got, size, want)
	}
	close(stop)
	wg.Wait()

	t.Logf("300 MiB: write %v (%.0f MiB/s), read %v (%.0f MiB/s), peak HeapInuse %.1f MiB",
		wrote.Round(time.Millisecond), 300/wrote.Seconds(), read.Round(time.Millisecond), 300/read.Seconds(),
		float64(peak.Load())/(1<<20))
	if p := peak.Load(); p > heapCeil {
		t.Errorf("peak HeapInuse %d MiB, want below %d MiB: memory is not flat", p>>20, heapCeil>>20)
	}
}
