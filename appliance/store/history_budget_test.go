package store

import (
	"context"
	"fmt"
	"testing"
	"time"

	"outpost/internal/testkit"
)

// usageAgrees checks cot_usage against the events table.
func usageAgrees(t *testing.T, s *Store) {
	t.Helper()
	rows, err := s.r.Query(`SELECT e.uid, COALESCE(SUM(length(e.xml)),0), COUNT(*), COALESCE(u.bytes,-1), COALESCE(u.events,-1)
		FROM cot_events e LEFT JOIN cot_usage u ON u.uid = e.uid GROUP BY e.uid`)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	for rows.Next() {
		var uid string
		var bytes, n, ub, un int64
		rows.Scan(&uid, &bytes, &n, &ub, &un)
		if bytes != ub || n != un {
			t.Errorf("usage of %s: table says %d bytes %d events, cot_usage %d %d", uid, bytes, n, ub, un)
		}
	}
	var orphans int
	s.r.QueryRow(`SELECT COUNT(*) FROM cot_usage WHERE uid NOT IN (SELECT uid FROM cot_events)`).Scan(&orphans)
	if orphans != 0 {
		t.Errorf("%d cot_usage rows without events", orphans)
	}
}

func TestHistoryRepeatsNotStoredTwice(t *testing.T) {
	s := openTest(t, Options{})
	ctx := context.Background()
	h := s.StartHistory(HistoryOptions{})
	t0 := timeNow()
	for i := range 3 {
		at := t0.Add(time.Duration(i) * time.Minute)
		h.Add(testEvent("still", "c", 1, 1, at), nil, at, "s", 7, AnonGroup)
	}
	moved := t0.Add(5 * time.Minute)
	h.Add(testEvent("still", "c", 2, 1, moved), nil, moved, "s", 7, AnonGroup)
	if err := h.Flush(ctx); err != nil {
		t.Fatal(err)
	}
	if n := countRows(t, s, "cot_events"); n != 2 {
		t.Fatalf("%d rows, want 2 (one per distinct content)", n)
	}
	if st := h.Stats(); st.Repeats != 2 || st.Written != 4 {
		t.Fatalf("stats %+v", st)
	}
	// Between the repeats and the move, latest followed the newest receive.
	e, err := s.Events().LatestEvent(ctx, "still", AllGroups)
	if err != nil || e.Lat != 2 || !e.ReceivedAt.Equal(moved) {
		t.Fatalf("latest %+v %v", e, err)
	}
	usageAgrees(t, s)
}

// TestHistoryBudget: one client flooding the history is cut at its budget
// while another client's events and the server's are still stored.
func TestHistoryBudget(t *testing.T) {
	s := openTest(t, Options{})
	ctx := context.Background()
	h := s.StartHistory(HistoryOptions{ClientRate: 10, ClientBytes: 1 << 20, TotalRate: 1000, TotalBytes: 1 << 30})
	now := timeNow()
	stored := 0
	for i := range 1000 { // 1000 distinct events in one instant
		if h.Add(testEvent("noisy", "c", float64(i%90), 1, now), nil, now, "s", 1, AnonGroup) {
			stored++
		}
	}
	if stored != 10*budgetBurst {
		t.Fatalf("flooding client stored %d events at once, want its burst of %d", stored, 10*budgetBurst)
	}
	for i := range 5 {
		if !h.Add(testEvent("quiet", "c", float64(i), 1, now), nil, now, "s", 2, AnonGroup) {
			t.Fatal("a quiet client's event was refused")
		}
	}
	if !h.Add(testEvent("server-object", "c", 1, 1, now), nil, now, "s", 0, AnonGroup) {
		t.Fatal("the server's own event was refused")
	}
	// A second later the noisy client has 10 more.
	later := now.Add(time.Second)
	n := 0
	for i := range 100 {
		if h.Add(testEvent("noisy", "c", float64(i%90), 2, later), nil, later, "s", 1, AnonGroup) {
			n++
		}
	}
	if n != 10 {
		t.Fatalf("after 1 s the flooding client stored %d, want 10", n)
	}
	if err := h.Flush(ctx); err != nil {
		t.Fatal(err)
	}
	if st := h.Stats(); st.DroppedBudget != 1000-50+90 {
		t.Fatalf("dropped by budget %d", st.DroppedBudget)
	}
}

// TestHistoryTotalBudget: the total caps all clients together.
func TestHistoryTotalBudget(t *testing.T) {
	s := openTest(t, Options{})
	h := s.StartHistory(HistoryOptions{ClientRate: 1000, TotalRate: 20})
	now := timeNow()
	stored := 0
	for c := range 10 {
		for i := range 20 {
			if h.Add(testEvent(fmt.Sprint("c", c), "c", float64(i), 1, now), nil, now, "s", uint64(c+1), AnonGroup) {
				stored++
			}
		}
	}
	if stored != 20*budgetBurst {
		t.Fatalf("stored %d, want the total burst %d", stored, 20*budgetBurst)
	}
}

// TestHistorySizeCap: above MaxBytes the uid holding the most bytes loses
// its oldest events first; a quiet client's history survives.
func TestHistorySizeCap(t *testing.T) {
	s := openTest(t, Options{})
	ctx := context.Background()
	const maxBytes = 400 << 10
	h := s.StartHistory(HistoryOptions{MaxBytes: maxBytes, FlushInterval: time.Millisecond})
	now := timeNow()
	for i := range 20 {
		h.Add(testEvent("quiet", "q", float64(i), 1, now), nil, now, "s", 0, AnonGroup)
	}
	if err := h.Flush(ctx); err != nil {
		t.Fatal(err)
	}
	for i := range 3000 {
		at := now.Add(time.Duration(i) * time.Millisecond)
		for !h.Add(testEvent("noisy", "n", float64(i%80), float64(i), at), nil, at, "s", 0, AnonGroup) {
			h.Flush(ctx)
		}
	}
	if err := h.Flush(ctx); err != nil {
		t.Fatal(err)
	}
	testkit.WaitFor(t, "the size cap", func() bool { return h.Stats().Bytes <= maxBytes })
	var total int64
	s.r.QueryRow(`SELECT SUM(length(xml)) FROM cot_events`).Scan(&total)
	if total > maxBytes || total != h.Stats().Bytes {
		t.Fatalf("stored %d bytes (counted %d), cap %d", total, h.Stats().Bytes, maxBytes)
	}
	var quiet, noisyNewest int
	s.r.QueryRow(`SELECT COUNT(*) FROM cot_events WHERE uid = 'quiet'`).Scan(&quiet)
	if quiet != 20 {
		t.Fatalf("the quiet client's history lost %d of 20 events", 20-quiet)
	}
	// The noisy uid lost its oldest, kept its newest.
	s.r.QueryRow(`SELECT COUNT(*) FROM cot_events WHERE uid = 'noisy' AND lon = 2999`).Scan(&noisyNewest)
	if noisyNewest != 1 || h.Stats().PrunedSize == 0 {
		t.Fatalf("newest noisy event kept: %d; pruned %d", noisyNewest, h.Stats().PrunedSize)
	}
	usageAgrees(t, s)
	// A reopened history knows the size.
	h.Close(ctx)
	h2 := s.StartHistory(HistoryOptions{})
	testkit.WaitFor(t, "the size to be loaded", func() bool { return h2.Stats().Bytes == total })
}

func TestHistoryRetentionKeepsUsage(t *testing.T) {
	s := openTest(t, Options{})
	ctx := context.Background()
	h := s.StartHistory(HistoryOptions{Retention: time.Hour, PruneInterval: 10 * time.Millisecond})
	old := timeNow().Add(-2 * time.Hour)
	for i := range 50 {
		h.Add(testEvent(fmt.Sprint("u", i%5), "c", float64(i), 1, old), nil, old, "s", 0, AnonGroup)
	}
	h.Add(testEvent("u1", "c", 99, 1, timeNow()), nil, timeNow(), "s", 0, AnonGroup)
	h.Flush(ctx)
	testkit.WaitFor(t, "pruning", func() bool { return h.Stats().Pruned == 50 })
	usageAgrees(t, s)
	var n int
	s.r.QueryRow(`SELECT COUNT(*) FROM cot_usage`).Scan(&n)
	if n != 1 {
		t.Fatalf("%d usage rows, want 1", n)
	}
}
