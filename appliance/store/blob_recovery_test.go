package store

// Crash recovery of unfinished uploads and the primary lock that guards
// the startup sweep.

import (
	"context"
	"errors"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
)

// TestBlobCloseWithoutCommit closes the store under an unfinished upload;
// the next Open sweeps it.
func TestBlobCloseWithoutCommit(t *testing.T) {
	path := filepath.Join(t.TempDir(), "o.db")
	s := openAt(t, path, Options{})
	keep := putBlob(t, s, []byte("complete"))
	w, err := s.Files().CreateBlob(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if _, err := w.Write(patternBytes(5*ChunkSize, 1)); err != nil {
		t.Fatal(err)
	}
	s.Close()
	s2 := openAt(t, path, Options{})
	if c := countRows(t, s2, "blob_chunks"); c != 1 {
		t.Errorf("%d chunk rows after reopen, want 1 (the complete blob's)", c)
	}
	if b := countRows(t, s2, "blobs"); b != 1 {
		t.Errorf("%d blobs after reopen, want 1", b)
	}
	if _, err := s2.Files().OpenBlob(context.Background(), keep.ID); err != nil {
		t.Errorf("the complete blob is gone: %v", err)
	}
}

// TestBlobCrashRecovery kills a process in the middle of an upload and
// checks the next Open removes what it left.
func TestBlobCrashRecovery(t *testing.T) {
	path := filepath.Join(t.TempDir(), "o.db")
	cmd := exec.Command(os.Args[0], "-test.run=^TestHelperCrashMidUpload$")
	cmd.Env = append(os.Environ(), "OUTPOST_STORE_CRASH_DB="+path)
	out, err := cmd.CombinedOutput()
	var ee *exec.ExitError
	if !errors.As(err, &ee) || ee.ExitCode() != 3 {
		t.Fatalf("helper process: %v\n%s", err, out)
	}
	s := openAt(t, path, Options{})
	if c, b := countRows(t, s, "blob_chunks"), countRows(t, s, "blobs"); c != 0 || b != 0 {
		t.Errorf("after crash and reopen: %d chunks, %d blobs; want none", c, b)
	}
}

// TestHelperCrashMidUpload is the crashing process of TestBlobCrashRecovery.
func TestHelperCrashMidUpload(t *testing.T) {
	path := os.Getenv("OUTPOST_STORE_CRASH_DB")
	if path == "" {
		t.Skip("helper process only")
	}
	s, err := Open(context.Background(), path, Options{})
	if err != nil {
		t.Fatal(err)
	}
	w, err := s.Files().CreateBlob(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if _, err := w.Write(patternBytes(4*ChunkSize, 1)); err != nil {
		t.Fatal(err)
	}
	var n int
	s.r.QueryRow(`SELECT COUNT(*) FROM blob_chunks`).Scan(&n)
	if n != 3 {
		t.Fatalf("%d chunks written before the crash, want 3", n)
	}
	os.Exit(3) // no Close, no Commit: a crash
}

// TestSecondProcessDoesNotSweep: a second Store on the same file (a CLI
// command beside a running server) must not delete the first one's upload.
func TestSecondProcessDoesNotSweep(t *testing.T) {
	path := filepath.Join(t.TempDir(), "o.db")
	s := openAt(t, path, Options{})
	ctx := context.Background()
	w, err := s.Files().CreateBlob(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := w.Write(patternBytes(2*ChunkSize+1, 1)); err != nil {
		t.Fatal(err)
	}
	second := openAt(t, path, Options{})
	if second.primary != nil {
		t.Fatal("the second store took the primary lock")
	}
	second.Close()
	info, err := w.Commit(ctx)
	if err != nil {
		t.Fatalf("upload broken by a second Open: %v", err)
	}
	r, err := s.Files().OpenBlob(ctx, info.ID)
	if err != nil {
		t.Fatal(err)
	}
	if got, _ := io.ReadAll(r); sha256Hex(got) != sha256Hex(patternBytes(2*ChunkSize+1, 1)) {
		t.Error("blob content damaged")
	}
}
