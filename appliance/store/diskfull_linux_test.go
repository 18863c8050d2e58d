//go:build linux

package store

import (
	"context"
	"database/sql"
	"errors"
	"io"
	"os"
	"path/filepath"
	"testing"

	"outpost/internal/testkit"
)

// The tests on a real full filesystem (testkit.SmallFS: Linux, as root).

// TestOpenOnFullDisk: on a filesystem with no byte free, a database with no
// pending migration opens, reads, refuses a blob with ErrNoSpace and takes
// it once space is freed, without being opened again.
func TestOpenOnFullDisk(t *testing.T) {
	dir := testkit.SmallFS(t, 16<<20)
	path := filepath.Join(dir, "outpost.db")
	s := openAt(t, path, Options{})
	kept, err := tryBlob(s, 2*ChunkSize, 1)
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	filler := testkit.Fill(t, dir, "filler", 0)
	s = openAt(t, path, Options{})
	r, err := s.Files().OpenBlob(context.Background(), kept.ID)
	if err != nil {
		t.Fatalf("a read on the full disk: %v", err)
	}
	n, err := io.Copy(io.Discard, r)
	r.Close()
	if err != nil || n != kept.Size {
		t.Fatalf("a read on the full disk: %d of %d bytes, %v", n, kept.Size, err)
	}
	_, err = tryBlob(s, 4<<20, 2)
	wantDiskFull(t, err)
	if err := os.Remove(filler); err != nil {
		t.Fatal(err)
	}
	if _, err := tryBlob(s, 4<<20, 2); err != nil {
		t.Fatalf("a blob once space is freed: %v", err)
	}
}

// TestMigrationOnFullDisk: a migration that cannot be written for lack of
// space ends Open with one sentence saying what to do, and changes nothing.
func TestMigrationOnFullDisk(t *testing.T) {
	dir := testkit.SmallFS(t, 16<<20)
	path := filepath.Join(dir, "outpost.db")
	if err := openAt(t, path, Options{}).Close(); err != nil {
		t.Fatal(err)
	}
	testkit.Fill(t, dir, "filler", 0)
	ms, err := loadMigrations(migrationFS)
	if err != nil {
		t.Fatal(err)
	}
	next := migration{version: len(ms) + 1, name: "9999_full_disk_test.sql", sql: `CREATE TABLE full_disk_test(x TEXT)`}
	dsn, err := writerDSN(path)
	if err != nil {
		t.Fatal(err)
	}
	w, err := sql.Open("sqlite", dsn)
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close()
	_, err = migrate(context.Background(), w, append(ms, next))
	s := &db{log: testkit.Logger(t)}
	err = s.noSpaceAtOpen(path, err)
	if !errors.Is(err, ErrNoSpace) || err.Error() != "store: no space left on the data filesystem ("+dir+"): free some and start again" {
		t.Fatalf("Open would fail with %v", err)
	}
	if v, err := schemaVersion(context.Background(), w); err != nil || v != len(ms) {
		t.Fatalf("schema version %d, %v; want %d, unchanged", v, err, len(ms))
	}
}

// TestOpenWithoutShmOnFullDisk: a database whose -shm file is gone (closed
// by an older Outpost, restored) needs 32 KiB to open; on a full disk Open
// says so in one sentence.
func TestOpenWithoutShmOnFullDisk(t *testing.T) {
	dir := testkit.SmallFS(t, 16<<20)
	path := filepath.Join(dir, "outpost.db")
	if err := openAt(t, path, Options{}).Close(); err != nil {
		t.Fatal(err)
	}
	for _, f := range []string{path + "-wal", path + "-shm"} {
		if err := os.Remove(f); err != nil {
			t.Fatal(err)
		}
	}
	testkit.Fill(t, dir, "filler", 0)
	_, err := Open(context.Background(), path, Options{Logger: testkit.Logger(t)})
	if !errors.Is(err, ErrNoSpace) || err.Error() != "store: no space left on the data filesystem ("+dir+"): free some and start again" {
		t.Fatalf("Open on a full disk without a -shm file: %v", err)
	}
}
