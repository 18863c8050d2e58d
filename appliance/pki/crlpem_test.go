package pki

import (
	"bytes"
	"context"
	"crypto/x509"
	"encoding/pem"
	"math/big"
	"os"
	"path/filepath"
	"sync/atomic"
	"testing"
	"time"

	"outpost/internal/testkit"
)

// readCRLPEM reads and verifies crl.pem.
func readCRLPEM(t *testing.T, a *Authority) ([]byte, *x509.RevocationList) {
	t.Helper()
	data, err := os.ReadFile(a.CRLPEMFile())
	if err != nil {
		t.Fatal(err)
	}
	block, _ := pem.Decode(data)
	if block == nil || block.Type != "X509 CRL" {
		t.Fatalf("crl.pem holds no X509 CRL block")
	}
	rl, err := x509.ParseRevocationList(block.Bytes)
	if err != nil {
		t.Fatal(err)
	}
	if err := rl.CheckSignatureFrom(a.CACert()); err != nil {
		t.Fatalf("crl.pem: %v", err)
	}
	return data, rl
}

func serials(rl *x509.RevocationList) map[int64]bool {
	m := map[int64]bool{}
	for _, e := range rl.RevokedCertificateEntries {
		m[e.SerialNumber.Int64()] = true
	}
	return m
}

// TestOpenKeepsCurrentCRLPEM: a start reads crl.pem and writes it only when
// it is not current (architecture.md "A full disk"): a second
// Open of an unchanged directory leaves the very bytes (each signing gives
// new ones), and each reason to sign again does.
func TestOpenKeepsCurrentCRLPEM(t *testing.T) {
	cfg := testConfig(t, "")
	a := openTest(t, cfg)
	if err := a.Revoke(big.NewInt(1001), "key_compromise"); err != nil {
		t.Fatal(err)
	}
	before, _ := readCRLPEM(t, a)

	if after, _ := readCRLPEM(t, openTest(t, cfg)); !bytes.Equal(before, after) {
		t.Fatal("a start rewrote a current crl.pem")
	}

	t.Run("missing", func(t *testing.T) {
		if err := os.Remove(a.CRLPEMFile()); err != nil {
			t.Fatal(err)
		}
		if _, rl := readCRLPEM(t, openTest(t, cfg)); !serials(rl)[1001] {
			t.Fatal("the rewritten crl.pem lacks the revoked serial")
		}
	})
	t.Run("differs from crl.json", func(t *testing.T) {
		json := []byte(`{"revoked_certificates": [{"serial_number": "1001", "revocation_date": "2026-01-02T03:04:05Z", "reason": "key_compromise"},
			{"serial_number": "77", "revocation_date": "2026-01-02T03:04:05Z", "reason": "superseded"}]}`)
		if err := os.WriteFile(a.cfg.CRLFile, json, 0o644); err != nil {
			t.Fatal(err)
		}
		if _, rl := readCRLPEM(t, openTest(t, cfg)); !serials(rl)[77] || !serials(rl)[1001] || len(serials(rl)) != 2 {
			t.Fatalf("crl.pem lists %v; want 77 and 1001", serials(rl))
		}
		// The dates differ from the file's too.
		json = bytes.ReplaceAll(json, []byte("2026-01-02T03:04:05Z"), []byte("2026-01-03T03:04:05Z"))
		if err := os.WriteFile(a.cfg.CRLFile, json, 0o644); err != nil {
			t.Fatal(err)
		}
		_, rl := readCRLPEM(t, openTest(t, cfg))
		if want := time.Date(2026, 1, 3, 3, 4, 5, 0, time.UTC); !rl.RevokedCertificateEntries[0].RevocationTime.Equal(want) {
			t.Fatalf("crl.pem dates %v; want %v", rl.RevokedCertificateEntries[0].RevocationTime, want)
		}
	})
	t.Run("due to expire", func(t *testing.T) {
		before, _ := readCRLPEM(t, a)
		later := cfg
		later.Now = func() time.Time { return time.Now().Add(crlNextUpdate - crlRenewBefore + time.Hour) }
		after, rl := readCRLPEM(t, openTest(t, later))
		if bytes.Equal(before, after) || rl.NextUpdate.Before(later.Now().Add(crlNextUpdate-time.Minute)) {
			t.Fatalf("crl.pem due to expire was not signed again (next update %v)", rl.NextUpdate)
		}
	})
	t.Run("signed by another CA", func(t *testing.T) {
		other := newTestAuthority(t)
		data, err := os.ReadFile(other.CRLPEMFile())
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(a.CRLPEMFile(), data, 0o644); err != nil {
			t.Fatal(err)
		}
		readCRLPEM(t, openTest(t, cfg)) // verifies against our CA
	})
	t.Run("a write that fails does not stop the start", func(t *testing.T) {
		// A directory in its place: unreadable, and no file can be
		// renamed over it.
		if err := os.Remove(a.CRLPEMFile()); err != nil {
			t.Fatal(err)
		}
		if err := os.Mkdir(a.CRLPEMFile(), 0o700); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(a.CRLPEMFile(), "keep"), nil, 0o600); err != nil {
			t.Fatal(err)
		}
		b := openTest(t, cfg)
		if !b.IsRevoked(big.NewInt(1001)) {
			t.Fatal("the revocation list is not enforced")
		}
	})
}

// TestWatchCRLRenewsCRLPEM: a server that runs past half of crl.pem's
// validity without a revocation signs it again, so it never expires.
func TestWatchCRLRenewsCRLPEM(t *testing.T) {
	cfg := testConfig(t, "")
	var offset atomic.Int64
	cfg.Now = func() time.Time { return time.Now().Add(time.Duration(offset.Load())) }
	a := openTest(t, cfg)
	_, first := readCRLPEM(t, a)
	old := crlRenewCheck
	crlRenewCheck = 10 * time.Millisecond
	t.Cleanup(func() { crlRenewCheck = old })
	offset.Store(int64(5 * 24 * time.Hour)) // past crlRenewBefore
	ctx, stop := context.WithCancel(t.Context())
	done := make(chan struct{})
	go func() { a.WatchCRL(ctx, 10*time.Millisecond); close(done) }()
	testkit.WaitFor(t, "crl.pem signed again", func() bool {
		_, crl := readCRLPEM(t, a)
		return crl.NextUpdate.After(first.NextUpdate)
	})
	stop()
	<-done
}
