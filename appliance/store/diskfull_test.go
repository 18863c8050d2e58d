package store

import (
	"context"
	"errors"
	"strconv"
	"testing"

	"outpost/appliance/fault"
)

// tryBlob stores n bytes as one blob and returns what the store said.
func tryBlob(s *Store, n int64, seed uint64) (BlobInfo, error) {
	ctx := context.Background()
	w, err := s.Files().CreateBlob(ctx)
	if err != nil {
		return BlobInfo{}, err
	}
	defer w.Abort()
	if _, err := w.ReadFrom(newPattern(n, seed)); err != nil {
		return BlobInfo{}, err
	}
	return w.Commit(ctx)
}

// wantDiskFull checks err is ErrNoSpace, of kind NoSpace, and tells a
// client so in words.
func wantDiskFull(t *testing.T, err error) {
	t.Helper()
	if !errors.Is(err, ErrNoSpace) || fault.KindOf(err) != fault.NoSpace {
		t.Fatalf("err = %v; want ErrNoSpace", err)
	}
	if d := fault.Detail(err); d != "no space left on the data filesystem; nothing was stored" {
		t.Fatalf("a client reads %q", d)
	}
}

// TestDiskFullIsErrNoSpace: SQLite's "database or disk is full" (here the
// database's page limit) is ErrNoSpace, and the same connection takes the
// write once there is room again.
func TestDiskFullIsErrNoSpace(t *testing.T) {
	s := openTest(t, Options{})
	var pages int64
	if err := s.w.QueryRow(`PRAGMA page_count`).Scan(&pages); err != nil {
		t.Fatal(err)
	}
	if _, err := s.w.Exec(`PRAGMA max_page_count = ` + strconv.FormatInt(pages+8, 10)); err != nil {
		t.Fatal(err)
	}
	_, err := tryBlob(s, 3*ChunkSize, 1)
	wantDiskFull(t, err)
	if _, err := s.w.Exec(`PRAGMA max_page_count = 1073741823`); err != nil {
		t.Fatal(err)
	}
	if _, err := tryBlob(s, 3*ChunkSize, 1); err != nil {
		t.Fatalf("a blob once there is room again: %v", err)
	}
}
