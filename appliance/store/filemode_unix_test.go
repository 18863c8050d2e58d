//go:build unix

package store

import (
	"context"
	"os"
	"path/filepath"
	"syscall"
	"testing"
)

// TestFilesArePrivate: the database, its -wal and -shm, and backups are
// 0600 whatever the umask; a database left with a looser mode is tightened.
func TestFilesArePrivate(t *testing.T) {
	old := syscall.Umask(0o022)
	defer syscall.Umask(old)
	dir := t.TempDir()
	path := filepath.Join(dir, "outpost.db")
	s := openAt(t, path, Options{})
	h := s.StartHistory(HistoryOptions{})
	h.Add(testEvent("u", "c", 1, 1, timeNow()), nil, timeNow(), "s", 0, AnonGroup)
	h.Flush(context.Background())
	backup := filepath.Join(dir, "backup.db")
	if err := s.Backup(context.Background(), backup); err != nil {
		t.Fatal(err)
	}
	for _, p := range []string{path, path + "-wal", path + "-shm", backup} {
		fi, err := os.Stat(p)
		if err != nil {
			t.Fatal(err)
		}
		if fi.Mode().Perm() != 0o600 {
			t.Errorf("%s has mode %v, want 0600", filepath.Base(p), fi.Mode().Perm())
		}
	}
	s.Close()
	os.Chmod(path, 0o644)
	s2 := openAt(t, path, Options{})
	defer s2.Close()
	if fi, _ := os.Stat(path); fi.Mode().Perm() != 0o600 {
		t.Fatalf("a database with mode 0644 was not tightened: %v", fi.Mode().Perm())
	}
}
