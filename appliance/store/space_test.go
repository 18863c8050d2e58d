package store

import (
	"bytes"
	"context"
	"errors"
	"sync/atomic"
	"testing"
	"time"

	"outpost/appliance/diskspace"
	"outpost/appliance/fault"
	"outpost/internal/testkit"
)

// fakeFree is a filesystem whose free space the test sets.
type fakeFree struct{ free atomic.Int64 }

func (f *fakeFree) stat(string) (diskspace.Usage, error) {
	return diskspace.Usage{Free: f.free.Load(), Total: 1 << 30}, nil
}

func TestBelowTheFloorWritesAreRefusedDeletionsRun(t *testing.T) {
	disk := &fakeFree{}
	disk.free.Store(100 << 20)
	g := diskspace.New("/data", diskspace.Options{Reserve: diskspace.Amount{Set: true, Bytes: 32 << 20},
		Floor: diskspace.Amount{Set: true, Bytes: 8 << 20}, MaxAge: time.Nanosecond, Logger: testkit.Logger(t), Stat: disk.stat})
	s := openTest(t, Options{Space: g})
	ctx := context.Background()
	p, err := s.Files().PutDataPackage(ctx, DataPackageInput{Name: "a.zip", Groups: AnonGroup}, bytes.NewReader([]byte("content")))
	if err != nil {
		t.Fatal(err)
	}
	// Between the reserve and the floor small writes still work.
	disk.free.Store(16 << 20)
	if _, _, _, err := s.Missions().PutMission(ctx, "ops", MissionInput{CreatorUID: "owner"}); err != nil {
		t.Fatalf("mission above the floor: %v", err)
	}
	disk.free.Store(4 << 20)
	writes := map[string]error{}
	_, _, _, writes["mission"] = s.Missions().PutMission(ctx, "ops2", MissionInput{CreatorUID: "owner"})
	writes["audit"] = s.Accounts().AddAudit(ctx, AuditEntry{UserName: "admin", Method: "GET", Endpoint: "/x", Status: 200})
	_, writes["blob"] = s.Files().CreateBlob(ctx)
	for what, err := range writes {
		if !errors.Is(err, ErrNoSpace) || fault.KindOf(err) != fault.NoSpace {
			t.Errorf("%s below the floor: %v (kind %v), want ErrNoSpace", what, err, fault.KindOf(err))
		}
	}
	if _, err := s.Missions().MissionByName(ctx, "ops2"); !errors.Is(err, ErrNotFound) {
		t.Fatalf("the refused mission exists: %v", err)
	}
	if err := s.Files().DeleteDataPackageByHash(ctx, p.Hash); err != nil {
		t.Fatalf("a deletion below the floor: %v", err)
	}
	disk.free.Store(64 << 20)
	if _, _, _, err := s.Missions().PutMission(ctx, "ops2", MissionInput{CreatorUID: "owner"}); err != nil {
		t.Fatalf("after space came back: %v", err)
	}
}

func TestHistoryPausesAndCounts(t *testing.T) {
	s := openTest(t, Options{})
	ctx := context.Background()
	var paused atomic.Bool
	h := s.StartHistory(HistoryOptions{Paused: paused.Load})
	now := timeNow()
	if !h.Add(testEvent("a", "A", 1, 1, now), nil, now, "s", 1, AnonGroup) {
		t.Fatal("refused while not paused")
	}
	paused.Store(true)
	for i := range 5 {
		if h.Add(testEvent("b", "B", float64(i), 1, now), nil, now, "s", 1, AnonGroup) {
			t.Fatal("stored while paused")
		}
	}
	paused.Store(false)
	if !h.Add(testEvent("c", "C", 1, 1, now), nil, now, "s", 1, AnonGroup) {
		t.Fatal("refused after the pause")
	}
	if err := h.Flush(ctx); err != nil {
		t.Fatal(err)
	}
	if st := h.Stats(); st.DroppedDisk != 5 || st.Written != 2 || st.Dropped != 0 || st.DroppedBudget != 0 {
		t.Fatalf("stats %+v", st)
	}
}

// TestFullDiskIsErrNoSpace: without a gauge, SQLite's own "database or disk
// is full" is ErrNoSpace (a 507), and nothing becomes visible. (On a disk
// that is really full even removing the pending chunks can fail, leaving
// them to the next start's sweep: what the reserve is there to avoid.)
func TestFullDiskIsErrNoSpace(t *testing.T) {
	dir := testkit.SmallFS(t, 8<<20)
	s := openAt(t, dir+"/outpost.db", Options{})
	ctx := context.Background()
	_, err := s.Files().PutDataPackage(ctx, DataPackageInput{Name: "big.bin", Groups: AnonGroup}, newPattern(16<<20, 7))
	if !errors.Is(err, ErrNoSpace) || fault.KindOf(err) != fault.NoSpace || fault.Detail(err) != "no space left on the data filesystem; nothing was stored" {
		t.Fatalf("16 MiB into 8: %v (kind %v, detail %q)", err, fault.KindOf(err), fault.Detail(err))
	}
	c, err := s.Files().CountBlobs(ctx)
	if err != nil || c.Complete != 0 {
		t.Fatalf("blobs after the failed upload: %+v %v", c, err)
	}
	if ps, err := s.Files().DataPackages(ctx); err != nil || len(ps) != 0 {
		t.Fatalf("data packages after the failed upload: %v %v", ps, err)
	}
}
