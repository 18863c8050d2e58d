package pki

import (
	"math/big"
	"os"
	"path/filepath"
	"testing"
	"time"
)

func TestStaleLockIsBroken(t *testing.T) {
	a := newTestAuthority(t)
	lock := a.cfg.CRLFile + ".lock"
	if err := os.WriteFile(lock, []byte("12345"), 0o600); err != nil {
		t.Fatal(err)
	}
	old := time.Now().Add(-2 * lockStale)
	if err := os.Chtimes(lock, old, old); err != nil {
		t.Fatal(err)
	}
	if err := a.Revoke(big.NewInt(99), "unspecified"); err != nil {
		t.Fatalf("Revoke behind a stale lock: %v", err)
	}
	if _, err := os.Stat(lock); !os.IsNotExist(err) {
		t.Error("lock file left behind")
	}
}

func TestReadFileLimited(t *testing.T) {
	p := filepath.Join(t.TempDir(), "big")
	if err := os.WriteFile(p, make([]byte, 101), 0o600); err != nil {
		t.Fatal(err)
	}
	if _, err := readFileLimited(p, 100); err == nil {
		t.Error("oversized file accepted")
	}
	if b, err := readFileLimited(p, 101); err != nil || len(b) != 101 {
		t.Errorf("exact-size file: %d, %v", len(b), err)
	}
}
