package store

import (
	"context"
	"errors"
	"testing"
)

// TestMissionSummaries: counts of each part (active subscribers only),
// name order, the limit and its truncated flag, and ErrNotFound / ErrInvalid.
func TestMissionSummaries(t *testing.T) {
	s := openTest(t, Options{})
	ctx := context.Background()
	for _, name := range []string{"charlie", "alpha", "bravo"} {
		if _, _, _, err := s.Missions().PutMission(ctx, name, MissionInput{CreatorUID: "owner"}); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := s.Missions().AddMissionContents(ctx, "alpha", nil, []string{"u1", "u2"}, "owner"); err != nil {
		t.Fatal(err)
	}
	for _, uid := range []string{"a", "b"} {
		if _, err := s.Missions().Subscribe(ctx, "alpha", uid, "", ""); err != nil {
			t.Fatal(err)
		}
	}
	if err := s.Missions().Unsubscribe(ctx, "alpha", "b", true); err != nil { // inactive: not counted
		t.Fatal(err)
	}
	if _, _, err := s.Missions().PutLogEntry(ctx, LogEntry{Content: "x", CreatorUID: "owner", Missions: []string{"alpha", "bravo"}}); err != nil {
		t.Fatal(err)
	}

	all, truncated, err := s.Missions().MissionSummaries(ctx, 10)
	if err != nil || truncated || len(all) != 4 { // with the migration's exchecktemplates
		t.Fatalf("summaries: %d %v %v", len(all), truncated, err)
	}
	a := all[0]
	if a.Name != "alpha" || a.Contents != 0 || a.UIDs != 2 || a.Subscribers != 2 || a.Logs != 1 || all[1].Logs != 1 || all[2].UIDs != 0 {
		t.Fatalf("alpha %+v, bravo %+v", a, all[1])
	}
	two, truncated, err := s.Missions().MissionSummaries(ctx, 2)
	if err != nil || !truncated || len(two) != 2 || two[1].Name != "bravo" {
		t.Fatalf("limit 2: %+v %v %v", two, truncated, err)
	}
	one, err := s.Missions().MissionSummaryByName(ctx, "alpha")
	if err != nil || one.UIDs != 2 || one.Subscribers != 2 || one.Logs != 1 || one.GUID != a.GUID {
		t.Fatalf("by name: %+v %v", one, err)
	}
	if _, err := s.Missions().MissionSummaryByName(ctx, "zulu"); !errors.Is(err, ErrNotFound) {
		t.Fatalf("unknown: %v", err)
	}
	if _, _, err := s.Missions().MissionSummaries(ctx, 0); !errors.Is(err, ErrInvalid) {
		t.Fatalf("limit 0: %v", err)
	}
	m, _ := s.Missions().MissionByName(ctx, "alpha")
	changes, truncated, err := s.Missions().RecentMissionChanges(ctx, m, 2)
	// create, uid, uid, log: the newest two are the log entry and u2.
	if err != nil || !truncated || len(changes) != 2 || changes[0].LogEntry == nil || changes[1].ContentUID != "u2" {
		t.Fatalf("changes: %+v %v %v", changes, truncated, err)
	}
	logs, truncated, err := s.Missions().RecentMissionLogs(ctx, m, 1)
	if err != nil || truncated || len(logs) != 1 || logs[0].Content != "x" {
		t.Fatalf("logs: %+v %v %v", logs, truncated, err)
	}
}
