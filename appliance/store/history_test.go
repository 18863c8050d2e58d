package store

import (
	"context"
	"errors"
	"fmt"
	"math"
	"sync"
	"testing"
	"time"

	"outpost/internal/testkit"
)

func TestHistoryAddFlushLatest(t *testing.T) {
	s := openTest(t, Options{})
	ctx := context.Background()
	h := s.StartHistory(HistoryOptions{FlushInterval: time.Hour}) // only Flush writes
	t0 := time.Date(2026, 11, 22, 10, 0, 0, 0, time.UTC)
	evs := []struct {
		uid, cs  string
		lat, lon float64
		recv     time.Time
	}{
		{"A", "Alpha", 10, 20, t0},
		{"B", "Bravo", 11, 21, t0.Add(time.Second)},
		{"A", "Alpha", 10.5, 20.5, t0.Add(2 * time.Second)}, // newer A
		{"A", "Alpha-old", 9, 19, t0.Add(-time.Minute)},     // late, older: must not win
	}
	for _, e := range evs {
		if !h.Add(testEvent(e.uid, e.cs, e.lat, e.lon, e.recv), nil, e.recv, "tcp:127.0.0.1:1", 0, AnonGroup) {
			t.Fatal("Add refused")
		}
	}
	if err := h.Flush(ctx); err != nil {
		t.Fatal(err)
	}
	if st := h.Stats(); st.Added != 4 || st.Written != 4 || st.Batches != 1 || st.Dropped != 0 {
		t.Errorf("stats %+v", st)
	}
	a, err := s.Events().LatestEvent(ctx, "A", AllGroups)
	if err != nil {
		t.Fatal(err)
	}
	if a.Lat != 10.5 || a.Lon != 20.5 || a.Callsign != "Alpha" || !a.ReceivedAt.Equal(t0.Add(2*time.Second)) ||
		a.Source != "tcp:127.0.0.1:1" || a.Type != "a-f-G-U-C" || a.How != "m-g" || a.Hae != 12.5 ||
		!a.Time.Equal(t0.Add(2*time.Second)) || !a.Stale.Equal(t0.Add(2*time.Second+2*time.Minute)) {
		t.Errorf("latest A = %+v", a)
	}
	ev, err := a.Event()
	if err != nil {
		t.Fatal(err)
	}
	if ev.UID != "A" || ev.Point.Lat != 10.5 || ev.Detail.Contact == nil || ev.Detail.Contact.Callsign != "Alpha" ||
		!ev.Time.Equal(a.Time) {
		t.Errorf("decoded %+v", ev)
	}
	if n := countRows(t, s, "cot_events"); n != 4 {
		t.Errorf("%d events stored, want every one (4)", n)
	}
	if _, err := s.Events().LatestEvent(ctx, "nobody", AllGroups); !errors.Is(err, ErrNotFound) {
		t.Errorf("unknown uid: %v", err)
	}
	if err := h.Close(ctx); err != nil {
		t.Fatal(err)
	}
}

func TestHistoryBatchesBySize(t *testing.T) {
	s := openTest(t, Options{})
	h := s.StartHistory(HistoryOptions{BatchSize: 10, FlushInterval: time.Hour})
	now := timeNow()
	for i := range 35 {
		h.Add(testEvent(fmt.Sprint("u", i%7), "c", 1, 1, now), nil, now.Add(time.Duration(i)*time.Millisecond), "s", 0, AnonGroup)
	}
	testkit.WaitFor(t, "three full batches", func() bool { return h.Stats().Batches == 3 })
	if err := h.Flush(context.Background()); err != nil {
		t.Fatal(err)
	}
	if st := h.Stats(); st.Batches != 4 || st.Written != 35 {
		t.Errorf("stats %+v, want 4 batches, 35 written", st)
	}
	if n := countRows(t, s, "cot_latest"); n != 7 {
		t.Errorf("%d latest rows, want 7", n)
	}
}

func TestHistoryFlushInterval(t *testing.T) {
	s := openTest(t, Options{})
	h := s.StartHistory(HistoryOptions{FlushInterval: 10 * time.Millisecond})
	h.Add(testEvent("u", "c", 1, 1, timeNow()), nil, timeNow(), "s", 0, AnonGroup)
	testkit.WaitFor(t, "the timer to write the partial batch", func() bool { return h.Stats().Written == 1 })
}

func TestHistoryDropsWhenFull(t *testing.T) {
	s := openTest(t, Options{})
	ctx := context.Background()
	h := s.StartHistory(HistoryOptions{Buffer: 4, BatchSize: 1})
	// Hold the single writer connection: the history's first batch blocks.
	tx, err := s.w.BeginTx(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	now := timeNow()
	adds, accepted := 0, 0
	testkit.WaitFor(t, "Add to refuse", func() bool {
		adds++
		if h.Add(testEvent("u", "c", 1, 1, now), nil, now, "s", 0, AnonGroup) {
			accepted++
			return false
		}
		return true
	})
	if accepted > 5 { // 4 queued + 1 taken by the blocked writer
		t.Errorf("%d accepted with a queue of 4", accepted)
	}
	start := time.Now()
	for range 1000 { // Add never blocks, full or not
		h.Add(testEvent("u", "c", 1, 1, now), nil, now, "s", 0, AnonGroup)
		adds++
	}
	if d := time.Since(start); d > 5*time.Second {
		t.Errorf("1000 Adds on a full queue took %v", d)
	}
	tx.Rollback()
	if err := h.Flush(ctx); err != nil {
		t.Fatal(err)
	}
	st := h.Stats()
	if st.Added != uint64(accepted) || st.Added+st.Dropped != uint64(adds) || st.Written != st.Added {
		t.Errorf("stats %+v after %d adds, %d accepted", st, adds, accepted)
	}
}

func TestHistoryCloseFlushesAndIsIdempotent(t *testing.T) {
	s := openTest(t, Options{})
	ctx := context.Background()
	h := s.StartHistory(HistoryOptions{FlushInterval: time.Hour})
	for i := range 100 {
		h.Add(testEvent(fmt.Sprint(i), "c", 1, 1, timeNow()), nil, timeNow(), "s", 0, AnonGroup)
	}
	if err := h.Close(ctx); err != nil {
		t.Fatal(err)
	}
	if err := h.Close(ctx); err != nil {
		t.Fatalf("second Close: %v", err)
	}
	if n := countRows(t, s, "cot_events"); n != 100 {
		t.Errorf("%d events after Close, want 100", n)
	}
	if h.Add(testEvent("late", "c", 1, 1, timeNow()), nil, timeNow(), "s", 0, AnonGroup) {
		t.Error("Add after Close returned true")
	}
	if err := h.Flush(ctx); !errors.Is(err, ErrClosed) {
		t.Errorf("Flush after Close: %v, want ErrClosed", err)
	}
	if st := h.Stats(); st.Written != 100 || st.Dropped != 1 {
		t.Errorf("stats %+v", st)
	}
}

// TestHistoryConcurrentAddAndClose: many producers, Close in the middle;
// every accepted event is written, none is lost silently.
func TestHistoryConcurrentAddAndClose(t *testing.T) {
	s := openTest(t, Options{})
	h := s.StartHistory(HistoryOptions{BatchSize: 64, FlushInterval: time.Millisecond})
	var wg sync.WaitGroup
	for g := range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range 500 {
				h.Add(testEvent(fmt.Sprint(g, "-", i%20), "c", 1, 1, timeNow()), nil, timeNow(), "s", 0, AnonGroup)
				if i == 250 && g == 0 {
					go h.Close(context.Background())
				}
			}
		}()
	}
	wg.Wait()
	if err := h.Close(context.Background()); err != nil {
		t.Fatal(err)
	}
	st := h.Stats()
	if st.Added+st.Dropped != 8*500 || st.Written != st.Added {
		t.Errorf("stats %+v: every add must be written or counted as dropped", st)
	}
	// Identical repeats of a uid's last event refresh cot_latest only.
	if n := countRows(t, s, "cot_events"); uint64(n)+st.Repeats != st.Written || n == 0 {
		t.Errorf("%d rows + %d repeats, %d counted written", n, st.Repeats, st.Written)
	}
}

func TestHistoryPrune(t *testing.T) {
	s := openTest(t, Options{})
	ctx := context.Background()
	h := s.StartHistory(HistoryOptions{Retention: time.Hour, PruneInterval: 20 * time.Millisecond, FlushInterval: time.Hour})
	now := timeNow()
	old := now.Add(-2 * time.Hour)
	const nOld = 2*pruneBatch + 17 // several bounded batches
	for i := range nOld {
		for !h.Add(testEvent(fmt.Sprint("old-", i%1500), "c", float64(i%80), 1, old), nil, old, "s", 0, AnonGroup) {
			h.Flush(ctx)
		}
	}
	h.Add(testEvent("fresh", "c", 2, 2, now), nil, now, "s", 0, AnonGroup)
	h.Add(testEvent("old-1", "c", 3, 3, now), nil, now, "s", 0, AnonGroup) // old-1 moved recently: keep its newest
	if err := h.Flush(ctx); err != nil {
		t.Fatal(err)
	}
	testkit.WaitFor(t, "pruning", func() bool { return h.Stats().Pruned == nOld && countRows(t, s, "cot_latest") == 2 })
	if n := countRows(t, s, "cot_events"); n != 2 {
		t.Errorf("%d events left, want 2", n)
	}
	if n := countRows(t, s, "cot_latest"); n != 2 {
		t.Errorf("%d latest rows left, want 2", n)
	}
	if _, err := s.Events().LatestEvent(ctx, "old-2", AllGroups); !errors.Is(err, ErrNotFound) {
		t.Errorf("pruned uid: %v, want ErrNotFound", err)
	}
	if e, err := s.Events().LatestEvent(ctx, "old-1", AllGroups); err != nil || e.Lat != 3 {
		t.Errorf("recently moved uid: %+v, %v", e, err)
	}
	if _, err := s.Events().LatestEvent(ctx, "fresh", AllGroups); err != nil {
		t.Error(err)
	}
}

func TestHistoryRetentionZeroKeepsForever(t *testing.T) {
	s := openTest(t, Options{})
	h := s.StartHistory(HistoryOptions{Retention: 0, PruneInterval: time.Millisecond})
	ancient := time.Date(2001, 1, 1, 0, 0, 0, 0, time.UTC)
	h.Add(testEvent("u", "c", 1, 1, ancient), nil, ancient, "s", 0, AnonGroup)
	if err := h.Flush(context.Background()); err != nil {
		t.Fatal(err)
	}
	time.Sleep(30 * time.Millisecond) // many prune intervals, had pruning been on
	if n := countRows(t, s, "cot_events"); n != 1 || h.Stats().Pruned != 0 {
		t.Errorf("%d events, %d pruned; want the event kept", n, h.Stats().Pruned)
	}
}

func TestHistoryBatchFailure(t *testing.T) {
	s := openTest(t, Options{})
	ctx := context.Background()
	h := s.StartHistory(HistoryOptions{})
	if _, err := s.w.Exec(`DROP TABLE cot_latest`); err != nil {
		t.Fatal(err)
	}
	h.Add(testEvent("u", "c", 1, 1, timeNow()), nil, timeNow(), "s", 0, AnonGroup)
	h.Add(testEvent("v", "c", 1, 1, timeNow()), nil, timeNow(), "s", 0, AnonGroup)
	if err := h.Flush(ctx); err == nil {
		t.Fatal("Flush reported success for a failed batch")
	}
	if st := h.Stats(); st.Dropped != 2 || st.Written != 0 {
		t.Errorf("stats %+v", st)
	}
	if n := countRows(t, s, "cot_events"); n != 0 {
		t.Errorf("a failed batch left %d events (not atomic)", n)
	}
	if err := h.Flush(ctx); err != nil {
		t.Errorf("Flush with nothing failed since: %v", err)
	}
}

func TestHistoryOddValues(t *testing.T) {
	s := openTest(t, Options{})
	ctx := context.Background()
	h := s.StartHistory(HistoryOptions{})
	ev := testEvent("nan", "", math.NaN(), math.Inf(1), timeNow())
	ev.Point.Hae = math.NaN()
	ev.Detail.Contact = nil
	ev.Detail.XML = nil
	ev.Time, ev.Start, ev.Stale = time.Time{}, time.Time{}, time.Time{}
	if h.Add(nil, nil, timeNow(), "s", 0, AnonGroup) {
		t.Error("Add(nil) returned true")
	}
	h.Add(ev, nil, timeNow(), "", 0, AnonGroup)
	if err := h.Flush(ctx); err != nil {
		t.Fatal(err)
	}
	e, err := s.Events().LatestEvent(ctx, "nan", AllGroups)
	if err != nil {
		t.Fatal(err)
	}
	if e.Lat != 0 || e.Lon != 0 || e.Hae != 9999999 || e.Callsign != "" || !e.Time.IsZero() {
		t.Errorf("stored %+v", e)
	}
}

func TestLatestInBox(t *testing.T) {
	s := openTest(t, Options{})
	ctx := context.Background()
	h := s.StartHistory(HistoryOptions{})
	t0 := timeNow()
	pts := []struct {
		uid      string
		lat, lon float64
	}{
		{"in1", 10, 10}, {"in2", 11, 11}, {"in3", 12, 12}, {"out", 30, 10},
		{"east", 5, 179.5}, {"west", 5, -179.5}, {"greenwich", 5, 0},
	}
	for i, p := range pts {
		h.Add(testEvent(p.uid, p.uid, p.lat, p.lon, t0), nil, t0.Add(time.Duration(i)*time.Second), "s", 0, AnonGroup)
	}
	// "in1" moves out of the box: its old position must not match.
	h.Add(testEvent("in1", "in1", 40, 40, t0), nil, t0.Add(time.Minute), "s", 0, AnonGroup)
	if err := h.Flush(ctx); err != nil {
		t.Fatal(err)
	}
	uids := func(es []StoredEvent) string {
		var out []string
		for _, e := range es {
			out = append(out, e.UID)
		}
		return fmt.Sprint(out)
	}
	tests := []struct {
		name                           string
		minLat, minLon, maxLat, maxLon float64
		limit                          int
		want                           string
	}{
		{"box, newest first", 9, 9, 13, 13, 100, "[in3 in2]"},
		{"limit", 9, 9, 13, 13, 1, "[in3]"},
		{"antimeridian", 0, 179, 10, -179, 100, "[west east]"},
		{"whole world", -90, -180, 90, 180, 100, "[in1 greenwich west east out in3 in2]"},
		{"empty", -10, -10, -5, -5, 100, "[]"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := s.Events().LatestInBox(ctx, tt.minLat, tt.minLon, tt.maxLat, tt.maxLon, tt.limit, AllGroups)
			if err != nil {
				t.Fatal(err)
			}
			if uids(got) != tt.want {
				t.Errorf("got %s, want %s", uids(got), tt.want)
			}
		})
	}
	bad := []struct {
		name                           string
		minLat, minLon, maxLat, maxLon float64
		limit                          int
	}{
		{"NaN", math.NaN(), 0, 1, 1, 10},
		{"Inf", 0, 0, math.Inf(1), 1, 10},
		{"lat above 90", 0, 0, 91, 1, 10},
		{"lon below -180", 0, -181, 1, 1, 10},
		{"min lat above max", 5, 0, 1, 1, 10},
		{"zero limit", 0, 0, 1, 1, 0},
		{"limit too large", 0, 0, 1, 1, MaxBoxLimit + 1},
	}
	for _, tt := range bad {
		t.Run(tt.name, func(t *testing.T) {
			if _, err := s.Events().LatestInBox(ctx, tt.minLat, tt.minLon, tt.maxLat, tt.maxLon, tt.limit, AllGroups); !errors.Is(err, ErrInvalid) {
				t.Errorf("err = %v, want ErrInvalid", err)
			}
		})
	}
	canceled, cancel := context.WithCancel(ctx)
	cancel()
	if _, err := s.Events().LatestInBox(canceled, 0, 0, 1, 1, 1, AllGroups); !errors.Is(err, context.Canceled) {
		t.Errorf("canceled: %v", err)
	}
	if err := h.Flush(canceled); !errors.Is(err, context.Canceled) {
		t.Errorf("Flush canceled: %v", err)
	}
}

// TestStoreCloseStopsHistory: Store.Close flushes a History nobody closed.
func TestStoreCloseStopsHistory(t *testing.T) {
	path := t.TempDir() + "/o.db"
	s := openAt(t, path, Options{})
	h := s.StartHistory(HistoryOptions{FlushInterval: time.Hour})
	h.Add(testEvent("u", "c", 1, 1, timeNow()), nil, timeNow(), "s", 0, AnonGroup)
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	if h.Add(testEvent("u", "c", 1, 1, timeNow()), nil, timeNow(), "s", 0, AnonGroup) {
		t.Error("Add after Store.Close returned true")
	}
	s2 := openAt(t, path, Options{})
	if n := countRows(t, s2, "cot_events"); n != 1 {
		t.Errorf("%d events after Store.Close, want 1", n)
	}
}
