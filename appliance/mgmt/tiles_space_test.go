package mgmt

import (
	"context"
	"os"
	"path/filepath"
	"sync/atomic"
	"testing"
	"time"

	"outpost/appliance/diskspace"
	"outpost/appliance/store"
	"outpost/internal/testkit"
)

// TestBasemapCopyKeepsTheReserve: an uploaded basemap is not copied out of
// the database while the copy would cross the disk reserve, and is copied
// once space is back, without a restart.
func TestBasemapCopyKeepsTheReserve(t *testing.T) {
	ctx := context.Background()
	s, err := store.Open(ctx, filepath.Join(t.TempDir(), "outpost.db"), store.Options{Logger: testkit.Discard()})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	src := filepath.Join(t.TempDir(), "area.mbtiles")
	testkit.WriteMBTiles(t, src, testkit.MBTilesMeta("Area", 0, 1), []testkit.Tile{{Z: 0, X: 0, Y: 0, Data: []byte("png")}})
	fh, err := os.Open(src)
	if err != nil {
		t.Fatal(err)
	}
	p, err := s.Files().PutDataPackage(ctx, store.DataPackageInput{Name: "area.mbtiles", Keywords: []string{BasemapKeyword}, Groups: store.AnonGroup}, fh)
	fh.Close()
	if err != nil {
		t.Fatal(err)
	}
	var free atomic.Int64
	free.Store(1 << 20) // 1 MiB free, 1 MiB in reserve
	g := diskspace.New("/data", diskspace.Options{Reserve: diskspace.Amount{Set: true, Bytes: 1 << 20}, MaxAge: time.Nanosecond,
		Logger: testkit.Discard(), Stat: func(string) (diskspace.Usage, error) { return diskspace.Usage{Free: free.Load(), Total: 1 << 30}, nil }})
	b := &basemap{dir: filepath.Join(t.TempDir(), "basemaps"), files: s.Files(), space: g, log: testkit.Discard()}
	t.Cleanup(b.close)
	copied := filepath.Join(b.dir, p.Hash+".mbtiles")
	settled := func() bool {
		b.mu.Lock()
		defer b.mu.Unlock()
		b.checked = time.Time{}
		return b.preparing == ""
	}
	b.current(ctx)
	testkit.WaitFor(t, "the copy to be refused", func() bool { return settled() && !b.noRoom.IsZero() })
	if _, err := os.Stat(copied); !os.IsNotExist(err) || b.current(ctx) != nil {
		t.Fatalf("copied below the reserve: %v", err)
	}
	free.Store(1 << 30)
	b.mu.Lock()
	b.noRoom = time.Now().Add(-basemapNoRoomRetry) // the minute has passed
	b.mu.Unlock()
	testkit.WaitFor(t, "the basemap served once space is back", func() bool { settled(); return b.current(ctx) != nil })
	if _, err := os.Stat(copied); err != nil {
		t.Fatal(err)
	}
}
