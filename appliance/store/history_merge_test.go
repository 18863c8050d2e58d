package store

import (
	"context"
	"testing"
	"time"

	"outpost/appliance/cot"
)

// TestHistoryBatchMergesPerUID: several events of one uid in one batch are
// each stored, and their latest row and usage are what writing them one by
// one gives: the newest event, and the sum of every stored event's bytes.
func TestHistoryBatchMergesPerUID(t *testing.T) {
	s := openTest(t, Options{})
	ctx := context.Background()
	h := s.StartHistory(HistoryOptions{FlushInterval: time.Hour}) // one batch, written by Flush
	t0 := time.Date(2026, 11, 22, 10, 0, 0, 0, time.UTC)
	for i := range 5 {
		at := t0.Add(time.Duration(i) * time.Second)
		h.Add(testEvent("A", "Alpha", 10+float64(i), 20, at), nil, at, "s", 0, AnonGroup)
		if i < 2 {
			h.Add(testEvent("B", "Bravo", 30+float64(i), 40, at), nil, at, "s", 0, AnonGroup)
		}
	}
	if err := h.Flush(ctx); err != nil {
		t.Fatal(err)
	}
	if st := h.Stats(); st.Written != 7 || st.Batches != 1 {
		t.Fatalf("stats %+v, want 7 written in 1 batch", st)
	}
	a, err := s.Events().LatestEvent(ctx, "A", AllGroups)
	if err != nil {
		t.Fatal(err)
	}
	if a.Lat != 14 || !a.ReceivedAt.Equal(t0.Add(4*time.Second)) {
		t.Errorf("latest A = %+v, want the fifth report", a)
	}
	rows, err := s.r.QueryContext(ctx, `SELECT u.uid, u.bytes, u.events, e.bytes, e.events FROM cot_usage u
		JOIN (SELECT uid, SUM(length(xml)) AS bytes, COUNT(*) AS events FROM cot_events GROUP BY uid) e ON e.uid = u.uid`)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	want := map[string]int64{"A": 5, "B": 2}
	for rows.Next() {
		var uid string
		var ub, ue, eb, ee int64
		if err := rows.Scan(&uid, &ub, &ue, &eb, &ee); err != nil {
			t.Fatal(err)
		}
		if ue != want[uid] || ue != ee || ub != eb || ub == 0 {
			t.Errorf("usage of %s: %d events, %d bytes; stored: %d events, %d bytes; want %d events", uid, ue, ub, ee, eb, want[uid])
		}
		delete(want, uid)
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	if len(want) != 0 {
		t.Errorf("no usage row for %v", want)
	}
}

// TestHistoryBatchDeleteAndRepeat: a delete and a repeat in the same batch
// as the rows they touch see those rows written first. A marker reported
// and then deleted in one batch is stale from the delete; a report followed
// by its repeat leaves the repeat's times on the latest row.
func TestHistoryBatchDeleteAndRepeat(t *testing.T) {
	s := openTest(t, Options{})
	ctx := context.Background()
	h := s.StartHistory(HistoryOptions{FlushInterval: time.Hour})
	t0 := time.Date(2026, 11, 22, 10, 0, 0, 0, time.UTC)

	marker := testEvent("M", "Marker", 1, 2, t0)
	marker.Type, marker.Stale = "a-h-G", t0.Add(time.Hour)
	del := testEvent("D", "", 0, 0, t0.Add(time.Second))
	del.Type, del.Detail.Contact, del.Detail.XML = cot.TypeDelete, nil, []byte(`<link uid="M" relation="none" type="none"/>`)
	del.Detail.Links = []cot.Link{{UID: "M", Relation: "none", Type: "none"}}
	h.Add(marker, nil, t0, "s", 0, AnonGroup)
	h.Add(del, nil, t0.Add(time.Second), "s", 0, AnonGroup)

	r1 := testEvent("R", "Romeo", 5, 6, t0)
	r2 := testEvent("R", "Romeo", 5, 6, t0.Add(3*time.Second)) // only the times differ: a repeat
	h.Add(r1, nil, t0, "s", 0, AnonGroup)
	h.Add(r2, nil, t0.Add(3*time.Second), "s", 0, AnonGroup)
	if err := h.Flush(ctx); err != nil {
		t.Fatal(err)
	}

	if stale, _ := latestTimes(t, s, "M"); stale != t0.Add(time.Second).UnixMilli() {
		t.Errorf("deleted marker stale at %d, want the delete's receive time %d", stale, t0.Add(time.Second).UnixMilli())
	}
	if stale, recv := latestTimes(t, s, "R"); recv != t0.Add(3*time.Second).UnixMilli() || stale != r2.Stale.UnixMilli() {
		t.Errorf("latest R received %d stale %d, want the repeat's %d and %d", recv, stale, t0.Add(3*time.Second).UnixMilli(), r2.Stale.UnixMilli())
	}
	if st := h.Stats(); st.Repeats != 1 || st.Written != 4 {
		t.Errorf("stats %+v, want 1 repeat of 4 written", st)
	}
	if n := countRows(t, s, "cot_events"); n != 3 {
		t.Errorf("%d events stored, want 3 (the repeat is not stored again)", n)
	}
}

// latestTimes is a uid's cot_latest stale and received_at (Unix ms).
func latestTimes(t *testing.T, s *Store, uid string) (stale, recv int64) {
	t.Helper()
	if err := s.r.QueryRow(`SELECT stale, received_at FROM cot_latest WHERE uid = ?`, uid).Scan(&stale, &recv); err != nil {
		t.Fatal(err)
	}
	return stale, recv
}
