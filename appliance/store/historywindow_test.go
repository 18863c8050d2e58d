package store

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"outpost/appliance/cot"
)

// Two groups of the tests: bits 3 and 4.
const (
	redGroup  uint64 = 1 << 3
	blueGroup uint64 = 1 << 4
)

// latsOf names the events of one uid by their latitude.
func latsOf(es []StoredEvent) string {
	var out []string
	for _, e := range es {
		out = append(out, fmt.Sprint(e.Lat))
	}
	return fmt.Sprint(out)
}

// TestEventsOfUID: a uid's events in a window, newest first, paged, each
// shown to the groups it was sent to only (not those of the uid's latest
// event), events from before migration 0013 with the groups of the uid's
// latest row.
func TestEventsOfUID(t *testing.T) {
	s := openTest(t, Options{})
	ctx := context.Background()
	h := s.StartHistory(HistoryOptions{FlushInterval: time.Hour})
	t0 := time.Date(2026, 11, 22, 10, 0, 0, 0, time.UTC)
	// A moves every minute: lat 1 to 5 in Red, 6 in Blue (its user changed
	// groups); B once in Red.
	for i := 1; i <= 6; i++ {
		g := redGroup
		if i == 6 {
			g = blueGroup
		}
		h.Add(testEvent("A", "Alpha", float64(i), 1, t0), nil, t0.Add(time.Duration(i)*time.Minute), "s", 0, g)
	}
	h.Add(testEvent("B", "Bravo", 50, 1, t0), nil, t0.Add(3*time.Minute), "s", 0, redGroup)
	if err := h.Flush(ctx); err != nil {
		t.Fatal(err)
	}
	ev := s.Events()
	all := Page{Limit: 100, MaxBytes: 1 << 20}
	at := func(min int) time.Time { return t0.Add(time.Duration(min) * time.Minute) }
	tests := []struct {
		name     string
		from, to time.Time
		groups   uint64
		want     string
	}{
		{"every event, every group", time.Time{}, time.Time{}, AllGroups, "[6 5 4 3 2 1]"},
		{"Red: not the Blue one, though it is the latest", time.Time{}, time.Time{}, redGroup, "[5 4 3 2 1]"},
		{"Blue: only the Blue one", time.Time{}, time.Time{}, blueGroup, "[6]"},
		{"both", time.Time{}, time.Time{}, redGroup | blueGroup, "[6 5 4 3 2 1]"},
		{"__ANON__: none", time.Time{}, time.Time{}, AnonGroup, "[]"},
		{"window, ends included", at(2), at(4), AllGroups, "[4 3 2]"},
		{"from only", at(5), time.Time{}, AllGroups, "[6 5]"},
		{"to only", time.Time{}, at(1), AllGroups, "[1]"},
		{"empty window", at(7), at(8), AllGroups, "[]"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, next, err := ev.EventsOfUID(ctx, "A", tt.from, tt.to, tt.groups, all)
			if err != nil {
				t.Fatal(err)
			}
			if latsOf(got) != tt.want || !next.IsZero() {
				t.Errorf("got %s (next %q), want %s", latsOf(got), next, tt.want)
			}
			for _, e := range got {
				if e.UID != "A" || !strings.Contains(string(e.XML), `uid="A"`) {
					t.Errorf("another uid's event: %+v", e)
				}
			}
		})
	}

	// Pages of two, following the cursor, cover the list once.
	var pages []string
	p := Page{Limit: 2, MaxBytes: 1 << 20}
	for {
		got, next, err := ev.EventsOfUID(ctx, "A", time.Time{}, time.Time{}, AllGroups, p)
		if err != nil {
			t.Fatal(err)
		}
		pages = append(pages, latsOf(got))
		if next.IsZero() {
			break
		}
		p.Before = next
	}
	if fmt.Sprint(pages) != "[[6 5] [4 3] [2 1]]" {
		t.Errorf("pages %v", pages)
	}
	// A byte bound keeps at least one event.
	if got, next, err := ev.EventsOfUID(ctx, "A", time.Time{}, time.Time{}, AllGroups, Page{Limit: 100, MaxBytes: 1}); err != nil ||
		latsOf(got) != "[6]" || next.IsZero() {
		t.Errorf("byte bound: %s %q %v", latsOf(got), next, err)
	}
	if _, _, err := ev.EventsOfUID(ctx, "A", time.Time{}, time.Time{}, AllGroups, Page{Limit: 2, Before: Cursor{At: 1, ID: "x"}}); !errors.Is(err, ErrInvalid) {
		t.Errorf("a cursor that is no event's: %v", err)
	}
	if _, _, err := ev.EventsOfUID(ctx, "A", time.Time{}, time.Time{}, AllGroups, Page{}); !errors.Is(err, ErrInvalid) {
		t.Errorf("an empty page: %v", err)
	}
	if got, _, err := ev.EventsOfUID(ctx, "nobody", time.Time{}, time.Time{}, AllGroups, all); err != nil || len(got) != 0 {
		t.Errorf("unknown uid: %v %v", got, err)
	}

	// Events stored before migration 0013 have no groups: they take those
	// of their uid's latest row (Blue for A).
	if _, err := s.db.w.Exec(`UPDATE cot_events SET groups = NULL WHERE uid = 'A'`); err != nil {
		t.Fatal(err)
	}
	if got, _, err := ev.EventsOfUID(ctx, "A", time.Time{}, time.Time{}, redGroup, all); err != nil || latsOf(got) != "[]" {
		t.Errorf("old events for Red: %s %v", latsOf(got), err)
	}
	if got, _, err := ev.EventsOfUID(ctx, "A", time.Time{}, time.Time{}, blueGroup, all); err != nil || latsOf(got) != "[6 5 4 3 2 1]" {
		t.Errorf("old events for Blue: %s %v", latsOf(got), err)
	}
}

// TestEventsOfUIDUsesItsIndex: EventsOfUID's query (its shape) reads the
// uid's window in the order of cot_events_uid_received, which holds what
// its conditions need: it never sorts, and reads only the rows it answers.
func TestEventsOfUIDUsesItsIndex(t *testing.T) {
	s := openTest(t, Options{})
	rows, err := s.db.r.Query(`EXPLAIN QUERY PLAN SELECT e.id FROM cot_events e
		WHERE e.uid = ? AND e.received_at >= ? AND e.received_at <= ? AND (e.received_at, e.id) < (?, ?)
			AND COALESCE(e.groups, (SELECT groups FROM cot_latest WHERE uid = ?), 0) & 4 != 0
			AND COALESCE((SELECT groups FROM cot_usage WHERE uid = ?), -1) & 4 != 0
		ORDER BY e.received_at DESC, e.id DESC LIMIT ?`, "A", 0, 1, 2, 3, "A", "A", 4)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	var plan []string
	for rows.Next() {
		var id, parent, unused int
		var detail string
		if err := rows.Scan(&id, &parent, &unused, &detail); err != nil {
			t.Fatal(err)
		}
		plan = append(plan, detail)
	}
	p := strings.Join(plan, "; ")
	if !strings.Contains(p, "COVERING INDEX cot_events_uid_received") || strings.Contains(p, "TEMP B-TREE") {
		t.Errorf("plan: %s", p)
	}
}

// TestLatestInWindow: the latest event of every uid in a window, the one
// its latest row names when that is in the window, of the picture and
// seen, else the newest stored one that is.
func TestLatestInWindow(t *testing.T) {
	s := openTest(t, Options{})
	ctx := context.Background()
	h := s.StartHistory(HistoryOptions{FlushInterval: time.Hour})
	t0 := time.Date(2026, 11, 22, 10, 0, 0, 0, time.UTC)
	at := func(min int) time.Time { return t0.Add(time.Duration(min) * time.Minute) }
	add := func(ev *cot.Event, min int, groups uint64) {
		t.Helper()
		if !h.Add(ev, nil, at(min), "s", 0, groups) {
			t.Fatal("Add refused")
		}
	}
	typed := func(ev *cot.Event, typ string) *cot.Event { ev.Type = typ; return ev }
	add(testEvent("A", "Alpha", 1, 1, t0), 1, AnonGroup)
	add(testEvent("A", "Alpha", 2, 2, t0), 5, AnonGroup)
	add(testEvent("S", "Still", 3, 3, t0), 2, AnonGroup)
	add(testEvent("S", "Still", 3, 3, t0), 9, AnonGroup) // a repeat: stored once, its row refreshed
	add(testEvent("R", "Red", 4, 4, t0), 3, redGroup)
	add(testEvent("R", "Red", 5, 5, t0), 7, blueGroup) // R's user moved to Blue
	add(typed(testEvent("D", "", 6, 6, t0), "t-x-d-d"), 4, AnonGroup)
	add(typed(testEvent("C", "", 7, 7, t0), "b-t-f"), 6, AnonGroup)
	add(typed(testEvent("H", "", 8, 8, t0), "a-h-G"), 8, AnonGroup)
	add(typed(testEvent("E", "", 9, 9, t0), "b-a-o-tbl"), 8, AnonGroup)
	if err := h.Flush(ctx); err != nil {
		t.Fatal(err)
	}
	ev := s.Events()
	every := AnonGroup | redGroup | blueGroup
	tests := []struct {
		name     string
		from, to time.Time
		box      *Box
		groups   uint64
		limit    int
		want     string // uid:lat@minute, newest first
		more     bool
	}{
		{"everything, repeats count", time.Time{}, time.Time{}, nil, every, 100, "[S:3@9 H:8@8 R:5@7 C:7@6 A:2@5]", false},
		{"a window ending before latest rows", at(1), at(4), nil, every, 100, "[R:4@3 S:3@2 A:1@1]", false},
		{"the window's start", at(6), time.Time{}, nil, every, 100, "[S:3@9 H:8@8 R:5@7 C:7@6]", false},
		{"Red sees R's event before the move", time.Time{}, time.Time{}, nil, redGroup, 100, "[R:4@3]", false},
		{"Blue sees R's latest only", time.Time{}, time.Time{}, nil, blueGroup, 100, "[R:5@7]", false},
		{"limit", time.Time{}, time.Time{}, nil, every, 2, "[S:3@9 H:8@8]", true},
		{"box", time.Time{}, time.Time{}, &Box{MinLat: 1.5, MinLon: 1.5, MaxLat: 4.5, MaxLon: 4.5}, every, 100, "[S:3@9 A:2@5]", false},
		{"box with A's old position only", at(0), at(2), &Box{MinLat: 0.5, MinLon: 0.5, MaxLat: 1.5, MaxLon: 1.5}, every, 100, "[A:1@1]", false},
		{"nothing", at(20), time.Time{}, nil, every, 100, "[]", false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, more, err := ev.LatestInWindow(ctx, tt.from, tt.to, tt.box, tt.groups, tt.limit, 1<<20)
			if err != nil {
				t.Fatal(err)
			}
			var desc []string
			for _, e := range got {
				desc = append(desc, fmt.Sprintf("%s:%v@%d", e.UID, e.Lat, int(e.ReceivedAt.Sub(t0)/time.Minute)))
			}
			if fmt.Sprint(desc) != tt.want || more != tt.more {
				t.Errorf("got %v (more %v), want %s (more %v)", desc, more, tt.want, tt.more)
			}
		})
	}
	if got, more, err := ev.LatestInWindow(ctx, time.Time{}, time.Time{}, nil, every, 100, 1); err != nil || len(got) != 1 || got[0].UID != "S" || !more {
		t.Errorf("byte bound: %d events %v %v", len(got), more, err)
	}
	for _, bad := range []struct {
		box   *Box
		limit int
	}{{nil, 0}, {nil, MaxBoxLimit + 1}, {&Box{MinLat: 5, MaxLat: 1}, 10}, {&Box{MaxLat: 91}, 10}} {
		if _, _, err := ev.LatestInWindow(ctx, time.Time{}, time.Time{}, bad.box, every, bad.limit, 0); !errors.Is(err, ErrInvalid) {
			t.Errorf("%+v: %v", bad, err)
		}
	}
}

// TestLatestReceived: when the history last received a uid's event
// (repeats count) and its latest stored XML.
func TestLatestReceived(t *testing.T) {
	s := openTest(t, Options{})
	ctx := context.Background()
	h := s.StartHistory(HistoryOptions{FlushInterval: time.Hour})
	t0 := time.Date(2026, 11, 22, 10, 0, 0, 0, time.UTC)
	h.Add(testEvent("A", "Alpha", 1, 1, t0), nil, t0, "s", 0, redGroup)
	h.Add(testEvent("A", "Alpha", 1, 1, t0), nil, t0.Add(time.Minute), "s", 0, redGroup) // a repeat
	if err := h.Flush(ctx); err != nil {
		t.Fatal(err)
	}
	at, xml, err := s.Events().LatestReceived(ctx, "A")
	if err != nil || !at.Equal(t0.Add(time.Minute)) || !strings.Contains(string(xml), `uid="A"`) {
		t.Errorf("A: %v %s %v", at, xml, err)
	}
	if _, _, err := s.Events().LatestReceived(ctx, "nobody"); !errors.Is(err, ErrNotFound) {
		t.Errorf("unknown uid: %v", err)
	}
}

// TestDeleteGroupClearsStoredEvents: a deleted group's bit leaves the
// stored events too, so a group made later on the same bit reads none of
// them (access.md "Groups").
func TestDeleteGroupClearsStoredEvents(t *testing.T) {
	s := openTest(t, Options{})
	ctx := context.Background()
	g, err := s.Accounts().CreateGroup(ctx, "Red", "")
	if err != nil {
		t.Fatal(err)
	}
	h := s.StartHistory(HistoryOptions{FlushInterval: time.Hour})
	t0 := timeNow()
	h.Add(testEvent("A", "Alpha", 1, 1, t0), nil, t0, "s", 0, g.Mask())
	h.Add(testEvent("A", "Alpha", 2, 2, t0), nil, t0.Add(time.Second), "s", 0, AnonGroup)
	if err := h.Flush(ctx); err != nil {
		t.Fatal(err)
	}
	if err := s.Accounts().DeleteGroup(ctx, "Red"); err != nil {
		t.Fatal(err)
	}
	again, err := s.Accounts().CreateGroup(ctx, "Again", "")
	if err != nil || again.Bit != g.Bit {
		t.Fatalf("the new group took bit %d (%v), want %d", again.Bit, err, g.Bit)
	}
	got, _, err := s.Events().EventsOfUID(ctx, "A", time.Time{}, time.Time{}, again.Mask(), Page{Limit: 10})
	if err != nil || len(got) != 0 {
		t.Errorf("the new group reads the deleted group's events: %s %v", latsOf(got), err)
	}
}
