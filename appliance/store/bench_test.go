package store

import (
	"context"
	"fmt"
	"io"
	"testing"
	"time"

	"outpost/appliance/cot"
)

// BenchmarkHistoryAddFlush measures sustained CoT history throughput: every
// event goes through Add and is committed (a full queue is waited out with
// Flush, so nothing is dropped). Reports events/s.
func BenchmarkHistoryAddFlush(b *testing.B) {
	s := openTest(b, Options{})
	ctx := context.Background()
	h := s.StartHistory(HistoryOptions{})
	evs := make([]*cot.Event, 1000)
	now := timeNow()
	for i := range evs {
		evs[i] = testEvent(fmt.Sprintf("ANDROID-%04d", i), fmt.Sprintf("Unit %d", i), 50+float64(i)/1000, 8, now)
	}
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		for !h.Add(evs[i%len(evs)], nil, now, "tcp", 0, AnonGroup) {
			if err := h.Flush(ctx); err != nil {
				b.Fatal(err)
			}
		}
	}
	if err := h.Flush(ctx); err != nil {
		b.Fatal(err)
	}
	b.StopTimer()
	b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "events/s")
	if st := h.Stats(); st.Written != uint64(b.N) {
		b.Fatalf("written %d of %d", st.Written, b.N)
	}
}

// BenchmarkHistoryAdd measures the caller's cost of Add alone (the relay's
// hot path); the queue is drained concurrently.
func BenchmarkHistoryAdd(b *testing.B) {
	s := openTest(b, Options{})
	h := s.StartHistory(HistoryOptions{})
	ev := testEvent("ANDROID-1", "Unit", 50, 8, timeNow())
	now := time.Now()
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		h.Add(ev, nil, now, "tcp", 0, AnonGroup)
	}
}

const benchBlobSize = 16 << 20

// BenchmarkBlobWrite streams 16 MiB blobs in and commits them (MB/s).
func BenchmarkBlobWrite(b *testing.B) {
	s := openTest(b, Options{})
	ctx := context.Background()
	src := patternBytes(ChunkSize, 1)
	b.SetBytes(benchBlobSize)
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		w, err := s.Files().CreateBlob(ctx)
		if err != nil {
			b.Fatal(err)
		}
		for n := 0; n < benchBlobSize; n += len(src) {
			if _, err := w.Write(src); err != nil {
				b.Fatal(err)
			}
		}
		if _, err := w.Commit(ctx); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkBlobRead streams a 16 MiB blob out (MB/s).
func BenchmarkBlobRead(b *testing.B) {
	s := openTest(b, Options{})
	ctx := context.Background()
	info := putBlob(b, s, patternBytes(benchBlobSize, 1))
	b.SetBytes(benchBlobSize)
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		r, err := s.Files().OpenBlob(ctx, info.ID)
		if err != nil {
			b.Fatal(err)
		}
		if n, err := io.Copy(io.Discard, r); err != nil || n != benchBlobSize {
			b.Fatal(n, err)
		}
	}
}

// BenchmarkVerifyPassword is the cost of one enrollment password check at
// the production iteration count.
func BenchmarkVerifyPassword(b *testing.B) {
	s := openTest(b, Options{})
	s.passwordIter = pbkdf2Iterations
	ctx := context.Background()
	if _, err := s.Accounts().CreateUser(ctx, UserInput{Name: "u", Password: "pw"}); err != nil {
		b.Fatal(err)
	}
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if _, err := s.Accounts().VerifyPassword(ctx, "u", "pw"); err != nil {
			b.Fatal(err)
		}
	}
}
