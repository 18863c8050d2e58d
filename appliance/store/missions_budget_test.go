package store

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"
)

// TestMissionLogBudgets: one entry's size, a mission's entries and bytes;
// a refused entry writes nothing, and an update replaces its own bytes
// rather than adding to them.
func TestMissionLogBudgets(t *testing.T) {
	s := openTest(t, Options{Budgets: Budgets{Missions: MissionBudgets{LogEntryBytes: 100, LogEntries: 3, LogBytes: 250}}})
	ctx := context.Background()
	ms := s.Missions()
	ms.PutMission(ctx, "m", MissionInput{})
	ms.PutMission(ctx, "other", MissionInput{})
	put := func(id, content string, missions ...string) (LogEntry, error) {
		e, _, err := ms.PutLogEntry(ctx, LogEntry{ID: id, Content: content, Missions: missions})
		return e, err
	}
	refused := func(what string, err error, want string) {
		t.Helper()
		if !errors.Is(err, ErrOverBudget) || !strings.Contains(err.Error(), want) {
			t.Fatalf("%s: %v, want ErrOverBudget %q", what, err, want)
		}
	}
	_, err := put("", strings.Repeat("x", 101), "m")
	refused("101 bytes", err, "content is 101 bytes, a log entry may hold at most 100")
	a, err := put("", strings.Repeat("a", 100), "m")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := put("", strings.Repeat("b", 100), "m"); err != nil {
		t.Fatal(err)
	}
	before := countRows(t, s, "mission_logs")
	changes := countRows(t, s, "mission_changes")
	_, err = put("", strings.Repeat("c", 51), "other", "m") // 251 bytes in m
	refused("bytes", err, `mission "m"'s log entries hold 200 bytes; 51 more would pass its budget of 250`)
	if countRows(t, s, "mission_logs") != before || countRows(t, s, "mission_changes") != changes {
		t.Fatal("a refused entry wrote something")
	}
	if _, err := put(a.ID, strings.Repeat("A", 100), "m"); err != nil {
		t.Fatalf("an update of the same size: %v", err)
	}
	if _, err := put("", strings.Repeat("c", 50), "m"); err != nil {
		t.Fatal(err)
	}
	_, err = put("", "d", "m")
	refused("entries", err, `mission "m" holds 3 log entries, the most it may hold`)
	if _, err := put("", "d", "other"); err != nil {
		t.Fatalf("another mission has room: %v", err)
	}
}

// TestMissionContentBudget: adding past a mission's files and uids is
// refused whole; the recorder skips a full mission.
func TestMissionContentBudget(t *testing.T) {
	s := openTest(t, Options{Budgets: Budgets{Missions: MissionBudgets{Contents: 3}}})
	ctx := context.Background()
	ms := s.Missions()
	ms.PutMission(ctx, "m", MissionInput{})
	if _, err := ms.AddMissionContents(ctx, "m", nil, []string{"a", "b"}, ""); err != nil {
		t.Fatal(err)
	}
	_, err := ms.AddMissionContents(ctx, "m", nil, []string{"a", "c", "d"}, "") // a is there already
	if !errors.Is(err, ErrOverBudget) || !strings.Contains(err.Error(), "at most 3 files and uids") {
		t.Fatalf("past the budget: %v", err)
	}
	if n := countRows(t, s, "mission_uids"); n != 2 {
		t.Fatalf("a refused batch left %d uids, want 2", n)
	}
	n, err := ms.RecordMissionUIDs(ctx, []UIDRecord{{Mission: "m", UID: "c"}, {Mission: "m", UID: "d"}, {Mission: "m", UID: "e"}})
	if err != nil || n != 1 {
		t.Fatalf("recorder added %d (%v), want 1", n, err)
	}
	if n := countRows(t, s, "mission_uids"); n != 3 {
		t.Fatalf("%d uids, want 3", n)
	}
}

// TestMissionChangesPruned: the history keeps each mission's newest
// records within its count and byte budgets; the newest always stays.
func TestMissionChangesPruned(t *testing.T) {
	s := openTest(t, Options{Budgets: Budgets{Missions: MissionBudgets{Changes: 5, ChangeBytes: 2000}}})
	ctx := context.Background()
	ms := s.Missions()
	ms.PutMission(ctx, "m", MissionInput{})
	ms.PutMission(ctx, "other", MissionInput{})
	for i := range 8 {
		if _, err := ms.AddMissionContents(ctx, "m", nil, []string{fmt.Sprintf("u%d", i)}, ""); err != nil {
			t.Fatal(err)
		}
	}
	all := Page{Limit: 100}
	cs, _, err := ms.MissionChanges(ctx, "m", time.Time{}, time.Time{}, all)
	if err != nil || len(cs) != 5 || cs[0].ContentUID != "u3" || cs[4].ContentUID != "u7" {
		t.Fatalf("count budget: %d records %+v %v", len(cs), cs, err)
	}
	if o, _, _ := ms.MissionChanges(ctx, "other", time.Time{}, time.Time{}, all); len(o) != 1 {
		t.Fatalf("another mission's history was pruned: %+v", o)
	}
	// Log entries of 600 bytes (about 850 as change records): two fit in
	// 2000 bytes of history.
	for i := range 3 {
		if _, _, err := ms.PutLogEntry(ctx, LogEntry{Content: strings.Repeat(fmt.Sprint(i), 600), Missions: []string{"m"}}); err != nil {
			t.Fatal(err)
		}
	}
	cs, _, _ = ms.MissionChanges(ctx, "m", time.Time{}, time.Time{}, all)
	if len(cs) != 2 || cs[0].LogEntry == nil || cs[0].LogEntry.Content[0] != '1' || cs[1].LogEntry.Content[0] != '2' {
		t.Fatalf("byte budget: %d records", len(cs))
	}
	// One record larger than the budget stays, alone.
	if _, _, err := ms.PutLogEntry(ctx, LogEntry{Content: strings.Repeat("z", 2500), Missions: []string{"m"}}); err != nil {
		t.Fatal(err)
	}
	if cs, _, _ = ms.MissionChanges(ctx, "m", time.Time{}, time.Time{}, all); len(cs) != 1 || cs[0].LogEntry.Content[0] != 'z' {
		t.Fatalf("the newest record alone: %d records", len(cs))
	}
}

// TestMissionPages: the change history and the log in pages, newest first,
// bounded by count and bytes, each page oldest first, cursors that follow
// on without gaps or repeats.
func TestMissionPages(t *testing.T) {
	s := openTest(t, Options{})
	ctx := context.Background()
	ms := s.Missions()
	ms.PutMission(ctx, "m", MissionInput{})
	t0 := time.Now().Add(-time.Hour).Truncate(time.Millisecond)
	for i := range 10 {
		// Two entries share each dtg: the id orders them.
		e := LogEntry{Content: strings.Repeat("x", 100), Missions: []string{"m"}, DTG: t0.Add(time.Duration(i/2) * time.Second)}
		if _, _, err := ms.PutLogEntry(ctx, e); err != nil {
			t.Fatal(err)
		}
	}
	var logs []LogEntry
	p := Page{Limit: 3}
	for pages := 0; ; pages++ {
		page, next, err := ms.MissionLogs(ctx, "m", time.Time{}, time.Time{}, p)
		if err != nil || pages > 4 {
			t.Fatalf("page %d: %v", pages, err)
		}
		if len(page) > 3 {
			t.Fatalf("page of %d entries, limit 3", len(page))
		}
		for i := 1; i < len(page); i++ {
			if page[i].DTG.Before(page[i-1].DTG) {
				t.Fatal("a page is not oldest first")
			}
		}
		logs = append(page, logs...)
		if next.IsZero() {
			break
		}
		if p.Before, err = ParseCursor(next.String()); err != nil {
			t.Fatal(err)
		}
	}
	seen := map[string]bool{}
	for _, e := range logs {
		seen[e.ID] = true
	}
	if len(logs) != 10 || len(seen) != 10 {
		t.Fatalf("pages gave %d entries, %d different, want 10", len(logs), len(seen))
	}
	// Bytes: 250 bytes hold two entries of 100; a page holds at least one.
	if page, next, _ := ms.MissionLogs(ctx, "m", time.Time{}, time.Time{}, Page{Limit: 10, MaxBytes: 250}); len(page) != 2 || next.IsZero() {
		t.Fatalf("byte-bounded page: %d entries, next %q", len(page), next)
	}
	if page, _, _ := ms.MissionLogs(ctx, "", time.Time{}, time.Time{}, Page{Limit: 10, MaxBytes: 1}); len(page) != 1 {
		t.Fatalf("a page smaller than one entry: %d entries", len(page))
	}
	cs, next, err := ms.MissionChanges(ctx, "m", time.Time{}, time.Time{}, Page{Limit: 4})
	if err != nil || len(cs) != 4 || next.IsZero() || cs[3].LogEntry == nil {
		t.Fatalf("newest changes: %d %v", len(cs), err)
	}
	rest, last, err := ms.MissionChanges(ctx, "m", time.Time{}, time.Time{}, Page{Limit: 100, Before: next})
	if err != nil || len(rest) != 7 || !last.IsZero() || rest[0].Type != ChangeCreateMission || rest[6].ID >= cs[0].ID {
		t.Fatalf("older changes: %d %v", len(rest), err)
	}
	for _, bad := range []string{"", "x", "12", "12_", "a_b"} {
		if _, err := ParseCursor(bad); !errors.Is(err, ErrInvalid) {
			t.Errorf("cursor %q: %v", bad, err)
		}
	}
	if _, _, err := ms.MissionChanges(ctx, "m", time.Time{}, time.Time{}, Page{Limit: 1, Before: Cursor{At: 1, ID: "x"}}); !errors.Is(err, ErrInvalid) {
		t.Errorf("a log cursor for changes: %v", err)
	}
	if _, _, err := ms.MissionChanges(ctx, "m", time.Time{}, time.Time{}, Page{}); !errors.Is(err, ErrInvalid) {
		t.Errorf("limit 0: %v", err)
	}
}
