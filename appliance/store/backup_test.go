package store

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"outpost/internal/testkit"
)

// checkBackup opens a backup copy directly and runs integrity_check, then
// opens it as a Store and returns it.
func checkBackup(t *testing.T, path string) *Store {
	t.Helper()
	dsn, err := backupDSN(path) // read-only, path escaped
	if err != nil {
		t.Fatal(err)
	}
	db, err := sql.Open("sqlite", dsn)
	if err != nil {
		t.Fatal(err)
	}
	var res string
	if err := db.QueryRow(`PRAGMA integrity_check`).Scan(&res); err != nil {
		t.Fatal(err)
	}
	var tables int
	if err := db.QueryRow(`SELECT COUNT(*) FROM sqlite_master WHERE type = 'table' AND name = 'data_packages'`).Scan(&tables); err != nil || tables != 1 {
		t.Fatalf("backup has no data_packages table (%v): not a copy of the store", err)
	}
	db.Close()
	if res != "ok" {
		t.Fatalf("integrity_check of the backup: %s", res)
	}
	return openAt(t, path, Options{})
}

// TestBackupWhileWriting takes backups while a history writer and a blob
// uploader are busy; each copy is consistent and complete up to its moment.
func TestBackupWhileWriting(t *testing.T) {
	s := openTest(t, Options{})
	ctx := context.Background()
	content := patternBytes(2*ChunkSize+3, 1)
	p, err := s.Files().PutDataPackage(ctx, DataPackageInput{Name: "before.zip"}, strings.NewReader(string(content)))
	if err != nil {
		t.Fatal(err)
	}
	h := s.StartHistory(HistoryOptions{BatchSize: 50})
	stop := make(chan struct{})
	var wg sync.WaitGroup
	var uploads atomic.Int64
	wg.Add(2)
	go func() { // CoT traffic, paced by its own commits
		defer wg.Done()
		for i := 0; ; i++ {
			select {
			case <-stop:
				return
			default:
			}
			h.Add(testEvent(fmt.Sprint("u", i%50), "c", 1, 1, timeNow()), nil, timeNow(), "s", 0, AnonGroup)
			if i%50 == 49 {
				if err := h.Flush(ctx); err != nil {
					t.Error(err)
					return
				}
			}
		}
	}()
	go func() { // uploads
		defer wg.Done()
		for i := 0; ; i++ {
			select {
			case <-stop:
				return
			default:
			}
			if _, err := s.Files().PutDataPackage(ctx, DataPackageInput{Name: "x.bin"}, newPattern(ChunkSize+int64(i), uint64(i+100))); err != nil {
				t.Error(err)
				return
			}
			uploads.Add(1)
		}
	}()
	testkit.WaitFor(t, "traffic", func() bool { return h.Stats().Written > 200 && uploads.Load() > 2 })
	dir := t.TempDir()
	var dests []string
	for i := range 3 {
		dest := filepath.Join(dir, fmt.Sprintf("backup %d?.db", i))
		if err := s.Backup(ctx, dest); err != nil {
			t.Fatal(err)
		}
		dests = append(dests, dest)
	}
	close(stop)
	wg.Wait()
	if err := h.Close(ctx); err != nil {
		t.Fatal(err)
	}
	for _, dest := range dests {
		b := checkBackup(t, dest)
		got, err := b.Files().DataPackageByHash(ctx, p.Hash)
		if err != nil {
			t.Fatal(err)
		}
		r, err := b.Files().OpenBlob(ctx, got.BlobID)
		if err != nil {
			t.Fatal(err)
		}
		if data, _ := io.ReadAll(r); sha256Hex(data) != p.Hash {
			t.Error("package content in the backup is wrong")
		}
		// Every package in the copy has its whole blob; no pending blobs.
		pkgs, err := b.Files().DataPackages(ctx)
		if err != nil {
			t.Fatal(err)
		}
		for _, pk := range pkgs {
			r, err := b.Files().OpenBlob(ctx, pk.BlobID)
			if err != nil {
				t.Fatalf("package %d: %v", pk.PrimaryKey, err)
			}
			if data, _ := io.ReadAll(r); sha256Hex(data) != pk.Hash {
				t.Errorf("package %d content does not match its hash", pk.PrimaryKey)
			}
		}
		if countRows(t, b, "cot_events") == 0 {
			t.Error("backup has no CoT events")
		}
		b.Close()
	}
	ents, _ := os.ReadDir(dir)
	for _, e := range ents {
		if strings.Contains(e.Name(), ".tmp-") || !strings.HasPrefix(e.Name(), "backup ") {
			t.Errorf("unexpected file %q in the backup directory", e.Name())
		}
	}
}

// TestBackupFileBesideRunningStore backs up through a separate read-only
// connection while the Store is open, and after it is closed.
func TestBackupFileBesideRunningStore(t *testing.T) {
	path := filepath.Join(t.TempDir(), "o.db")
	s := openAt(t, path, Options{})
	ctx := context.Background()
	if _, err := s.Accounts().CreateUser(ctx, UserInput{Name: "alice", Password: "pw"}); err != nil {
		t.Fatal(err)
	}
	dest := filepath.Join(t.TempDir(), "live.db")
	if err := BackupFile(ctx, path, dest); err != nil {
		t.Fatal(err)
	}
	b := checkBackup(t, dest)
	if _, err := b.Accounts().VerifyPassword(ctx, "alice", "pw"); err != nil {
		t.Errorf("user missing from the backup: %v", err)
	}
	s.Close()
	dest2 := filepath.Join(t.TempDir(), "offline.db")
	if err := BackupFile(ctx, path, dest2); err != nil {
		t.Fatal(err)
	}
	checkBackup(t, dest2)
}

func TestBackupErrors(t *testing.T) {
	s := openTest(t, Options{})
	ctx := context.Background()
	dir := t.TempDir()
	existing := filepath.Join(dir, "exists.db")
	if err := os.WriteFile(existing, []byte("keep me"), 0o600); err != nil {
		t.Fatal(err)
	}
	canceled, cancel := context.WithCancel(ctx)
	cancel()
	tests := []struct {
		name string
		err  error
		is   error
	}{
		{"existing dest", s.Backup(ctx, existing), fs.ErrExist},
		{"existing dest, BackupFile", BackupFile(ctx, s.path, existing), fs.ErrExist},
		{"empty dest", s.Backup(ctx, ""), ErrInvalid},
		{"missing dest directory", s.Backup(ctx, filepath.Join(dir, "no", "x.db")), nil},
		{"missing database", BackupFile(ctx, filepath.Join(dir, "none.db"), filepath.Join(dir, "a.db")), fs.ErrNotExist},
		{"database is a directory", BackupFile(ctx, dir, filepath.Join(dir, "b.db")), ErrInvalid},
		{"canceled", s.Backup(canceled, filepath.Join(dir, "c.db")), context.Canceled},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if tt.err == nil {
				t.Fatal("succeeded")
			}
			if tt.is != nil && !errors.Is(tt.err, tt.is) {
				t.Errorf("err = %v, want %v", tt.err, tt.is)
			}
		})
	}
	if b, _ := os.ReadFile(existing); string(b) != "keep me" {
		t.Error("an existing destination was overwritten")
	}
	ents, _ := os.ReadDir(dir)
	if len(ents) != 1 {
		var names []string
		for _, e := range ents {
			names = append(names, e.Name())
		}
		t.Errorf("failed backups left files: %v", names)
	}
}
