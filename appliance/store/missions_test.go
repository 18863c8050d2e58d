package store

import (
	"context"
	"errors"
	"fmt"
	"regexp"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"
)

func ptr[T any](v T) *T { return &v }

// TestMissionSubscriberCache: the relay's subscriber lists follow every
// committed change (subscribe, disconnectOnly, unsubscribe, a new mission's
// creator) and survive a reopen.
func TestMissionSubscriberCache(t *testing.T) {
	s := openTest(t, Options{})
	ctx := context.Background()
	if got := s.Missions().MissionSubscribers("ops"); got != nil {
		t.Fatalf("unknown mission: %v", got)
	}
	if _, _, _, err := s.Missions().PutMission(ctx, "ops", MissionInput{CreatorUID: "owner"}); err != nil {
		t.Fatal(err)
	}
	want := func(uids ...string) {
		t.Helper()
		got := slices.Sorted(slices.Values(s.Missions().MissionSubscribers("ops")))
		slices.Sort(uids)
		if strings.Join(got, ",") != strings.Join(uids, ",") {
			t.Fatalf("subscribers %q, want %q", got, strings.Join(uids, ","))
		}
	}
	want("owner")
	sub, err := s.Missions().Subscribe(ctx, "ops", "a", "alice", "")
	if err != nil || sub.Role != RoleMember || sub.Token == "" {
		t.Fatalf("subscribe: %+v %v", sub, err)
	}
	want("owner", "a")
	if err := s.Missions().Unsubscribe(ctx, "ops", "a", true); err != nil {
		t.Fatal(err)
	}
	want("owner")
	again, _ := s.Missions().Subscribe(ctx, "ops", "a", "", "")
	if again.Token != sub.Token || again.Username != "alice" {
		t.Fatalf("disconnectOnly lost the subscription: %+v", again)
	}
	if err := s.Missions().Unsubscribe(ctx, "ops", "a", false); err != nil {
		t.Fatal(err)
	}
	if err := s.Missions().Unsubscribe(ctx, "ops", "a", false); !errors.Is(err, ErrNotFound) {
		t.Fatalf("second unsubscribe: %v", err)
	}
	want("owner")
	path := s.Path()
	s.Close()
	s2 := openAt(t, path, Options{})
	if got := s2.Missions().MissionSubscribers("ops"); len(got) != 1 || got[0] != "owner" {
		t.Fatalf("after reopen: %v", got)
	}
}

// TestMissionAllOrNothing: a contents change naming one unknown hash adds
// nothing and records nothing; roles and passwords are enforced.
func TestMissionAllOrNothing(t *testing.T) {
	s := openTest(t, Options{})
	s.passwordIter = 1000
	ctx := context.Background()
	p, err := s.Files().PutDataPackage(ctx, DataPackageInput{Name: "a.txt"}, strings.NewReader("a"))
	if err != nil {
		t.Fatal(err)
	}
	if _, _, _, err := s.Missions().PutMission(ctx, "m", MissionInput{CreatorUID: "o", DefaultRole: ptr(RoleReadOnly), Password: ptr("pw")}); err != nil {
		t.Fatal(err)
	}
	before := countRows(t, s, "mission_changes")
	_, err = s.Missions().AddMissionContents(ctx, "m", []string{p.Hash, strings.Repeat("0", 64)}, []string{"u1"}, "o")
	if !errors.Is(err, ErrNotFound) {
		t.Fatalf("unknown hash: %v", err)
	}
	if countRows(t, s, "mission_contents") != 0 || countRows(t, s, "mission_uids") != 0 || countRows(t, s, "mission_changes") != before {
		t.Fatal("a failed contents change left rows behind")
	}
	if _, err := s.Missions().AddMissionContents(ctx, "m", nil, []string{"u1"}, "reader"); !errors.Is(err, ErrForbidden) {
		t.Fatalf("read-only writer: %v", err)
	}
	if _, err := s.Missions().Subscribe(ctx, "m", "reader", "", "wrong"); !errors.Is(err, ErrBadCredentials) {
		t.Fatalf("wrong password: %v", err)
	}
	if sub, err := s.Missions().Subscribe(ctx, "m", "reader", "", "pw"); err != nil || sub.Role != RoleReadOnly {
		t.Fatalf("right password: %+v %v", sub, err)
	}
	added, err := s.Missions().AddMissionContents(ctx, "m", []string{p.Hash}, []string{"u1", "u1"}, "o")
	if err != nil || len(added) != 2 {
		t.Fatalf("owner adds: %d %v", len(added), err)
	}
	// Deleting the file removes it from the mission.
	if err := s.Files().DeleteDataPackageByHash(ctx, p.Hash); err != nil {
		t.Fatal(err)
	}
	if countRows(t, s, "mission_contents") != 0 {
		t.Fatal("a deleted file stayed in the mission")
	}
}

// TestRecordMissionUIDs: the recorder's batches skip unknown missions and
// uids already there.
func TestRecordMissionUIDs(t *testing.T) {
	s := openTest(t, Options{})
	ctx := context.Background()
	s.Missions().PutMission(ctx, "m", MissionInput{})
	n, err := s.Missions().RecordMissionUIDs(ctx, []UIDRecord{{Mission: "m", UID: "a"}, {Mission: "nope", UID: "b"}, {Mission: "m", UID: "a"}, {Mission: "m", UID: "c"}})
	if err != nil || n != 2 {
		t.Fatalf("recorded %d: %v", n, err)
	}
	cs, _, err := s.Missions().MissionChanges(ctx, "m", time.Time{}, time.Time{}, Page{Limit: 100})
	if err != nil || len(cs) != 3 || cs[1].ContentUID != "a" || cs[2].ContentUID != "c" {
		t.Fatalf("changes: %+v %v", cs, err)
	}
}

// TestChecklistConcurrentUpdates: task edits are read-modify-write in one
// transaction each, so concurrent edits all land.
func TestChecklistConcurrentUpdates(t *testing.T) {
	s := openTest(t, Options{})
	ctx := context.Background()
	if _, err := s.Checklists().CreateChecklist(ctx, ExCheckDoc{UID: "c1", Name: "n", CreatorUID: "o", XML: []byte("")}, "d", nil); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Checklists().CreateChecklist(ctx, ExCheckDoc{UID: "c1", Name: "n", XML: []byte("x")}, "", nil); !errors.Is(err, ErrConflict) {
		t.Fatalf("same uid again: %v", err)
	}
	var wg sync.WaitGroup
	for i := range 20 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			err := s.Checklists().UpdateChecklist(ctx, "c1", "o", func(b []byte) ([]byte, error) { return append(b, fmt.Sprintf("<%d/>", i)...), nil })
			if err != nil {
				t.Error(err)
			}
		}()
	}
	wg.Wait()
	c, err := s.Checklists().Checklist(ctx, "c1")
	if err != nil || strings.Count(string(c.XML), "/>") != 20 {
		t.Fatalf("after 20 concurrent edits: %q %v", c.XML, err)
	}
	if err := s.Checklists().UpdateChecklist(ctx, "c1", "o", func([]byte) ([]byte, error) { return nil, fmt.Errorf("%w: no", ErrNotFound) }); !errors.Is(err, ErrNotFound) {
		t.Fatalf("failed edit: %v", err)
	}
	if c2, _ := s.Checklists().Checklist(ctx, "c1"); string(c2.XML) != string(c.XML) {
		t.Fatal("a failed edit changed the checklist")
	}
	if m, err := s.Missions().MissionByName(ctx, "c1"); err != nil || m.Tool != ToolExCheck || m.CreatorUID != "o" {
		t.Fatalf("checklist mission: %+v %v", m, err)
	}
}

// TestTemplatesMission: a template is content of exchecktemplates,
// findable by the hash of its XML, which follows every edit.
func TestTemplatesMission(t *testing.T) {
	s := openTest(t, Options{})
	ctx := context.Background()
	pre, err := s.Missions().MissionByName(ctx, TemplatesMission)
	if err != nil || pre.Tool != ToolExCheck || !regexp.MustCompile(`^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$`).MatchString(pre.GUID) {
		t.Fatalf("the templates' mission before any template: %+v %v", pre, err)
	}
	m, cr, err := s.Checklists().PutTemplate(ctx, ExCheckDoc{UID: "t1", Name: "Pre-flight", Description: "d", CreatorUID: "w", XML: []byte("<a/>")})
	if err != nil || m.Name != TemplatesMission || m.Tool != ToolExCheck || cr.Hash != hexSHA256([]byte("<a/>")) || cr.Filename != "t1.xml" {
		t.Fatalf("put: %+v %+v %v", m, cr, err)
	}
	if err := s.Checklists().UpdateTemplate(ctx, "t1", func([]byte) ([]byte, error) { return []byte("<b/>"), nil }); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Checklists().TemplateByHash(ctx, cr.Hash); !errors.Is(err, ErrNotFound) {
		t.Fatalf("old hash still found: %v", err)
	}
	tpl, err := s.Checklists().TemplateByHash(ctx, hexSHA256([]byte("<b/>")))
	if err != nil || tpl.UID != "t1" || tpl.Description != "d" {
		t.Fatalf("by new hash: %+v %v", tpl, err)
	}
	n := 0
	if err := s.Checklists().EachTemplate(ctx, func(ExCheckDoc) error { n++; return nil }); err != nil || n != 1 {
		t.Fatalf("templates: %d, %v", n, err)
	}
}
