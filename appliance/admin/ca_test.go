package admin

import (
	"context"
	"errors"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"outpost/appliance/config"
	"outpost/appliance/store"
	"outpost/internal/testkit"
)

// testConfig is an appliance configuration on a fresh data directory.
func testConfig(t *testing.T, publicHost string) config.Config {
	t.Helper()
	cfg := config.Defaults()
	cfg.DataDir = t.TempDir()
	cfg.PublicHost = publicHost
	cfg.KeyType = "ecdsa-p256"
	cfg.Finish()
	if err := cfg.Validate(); err != nil {
		t.Fatal(err)
	}
	return cfg
}

// TestCAImport: an intermediate and its root, given as separate files,
// become the appliance's CA; the authority the server opens next carries
// the chain.
func TestCAImport(t *testing.T) {
	cfg := testConfig(t, "tak.example.org")
	if _, err := authorityFor(&cfg, testkit.Discard()); err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	root := testkit.MakeCA(t, "Example Root", nil, testkit.CAOptions{})
	inter := testkit.MakeCA(t, "Example Issuing CA", &root, testkit.CAOptions{})
	rootFile, _ := root.WriteFiles(t, dir, "root")
	certFile, keyFile := inter.WriteFiles(t, dir, "issuing")
	res, err := CAImport(cfg, testkit.Discard(), certFile, keyFile, []string{rootFile}, false)
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Chain) != 2 || len(res.Backups) != 2 {
		t.Fatalf("result: %d in the chain, backups %v", len(res.Chain), res.Backups)
	}
	a, err := OpenAuthority(&cfg, testkit.Discard())
	if err != nil {
		t.Fatal(err)
	}
	if ch := a.CAChain(); len(ch) != 2 || !ch[0].Equal(inter.Cert) || !ch[1].Equal(root.Cert) {
		t.Fatalf("the opened authority's chain: %d certificates", len(ch))
	}
	if err := a.ServerCertificate().Leaf.VerifyHostname("tak.example.org"); err != nil {
		t.Fatal(err)
	}
}

// TestCAImportRefusesWhileRunning: while a server holds the database, the
// import is refused with ErrDatabaseInUse and changes nothing.
func TestCAImportRefusesWhileRunning(t *testing.T) {
	cfg := testConfig(t, "tak.example.org")
	if _, err := authorityFor(&cfg, testkit.Discard()); err != nil {
		t.Fatal(err)
	}
	caFile := filepath.Join(cfg.CertsPath, "ca.pem")
	before, err := os.ReadFile(caFile)
	if err != nil {
		t.Fatal(err)
	}
	st, err := store.Open(context.Background(), cfg.DBPath(), store.Options{Logger: testkit.Discard()})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	root := testkit.MakeCA(t, "Example Root", nil, testkit.CAOptions{})
	certFile, keyFile := root.WriteFiles(t, t.TempDir(), "root")
	_, err = CAImport(cfg, testkit.Discard(), certFile, keyFile, nil, false)
	if !errors.Is(err, ErrDatabaseInUse) {
		t.Fatalf("err = %v, want ErrDatabaseInUse", err)
	}
	if after, _ := os.ReadFile(caFile); string(after) != string(before) {
		t.Fatal("ca.pem changed")
	}
}

// TestCAImportBadFiles: missing and oversized input files are named.
func TestCAImportBadFiles(t *testing.T) {
	cfg := testConfig(t, "tak.example.org")
	dir := t.TempDir()
	root := testkit.MakeCA(t, "Example Root", nil, testkit.CAOptions{})
	certFile, keyFile := root.WriteFiles(t, dir, "root")
	big := filepath.Join(dir, "big.pem")
	if err := os.WriteFile(big, make([]byte, maxCAInput+1), 0o600); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		cert, key string
		chain     []string
		want      string
	}{
		{filepath.Join(dir, "missing.pem"), keyFile, nil, "missing.pem"},
		{certFile, big, nil, "larger than"},
		{certFile, keyFile, []string{""}, "empty"},
		{certFile, certFile, nil, "no PEM private key"},
	} {
		if _, err := CAImport(cfg, testkit.Discard(), tc.cert, tc.key, tc.chain, false); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s/%s: err = %v, want %q", filepath.Base(tc.cert), filepath.Base(tc.key), err, tc.want)
		}
	}
}

// TestPublicHostChangeReissues: a new publicHost gets a server certificate
// naming it, from the same CA, with a log line naming what was missing.
func TestPublicHostChangeReissues(t *testing.T) {
	cfg := testConfig(t, "old.example.org")
	a, err := authorityFor(&cfg, testkit.Discard())
	if err != nil {
		t.Fatal(err)
	}
	cfg.PublicHost = "new.example.org"
	var logs testkit.Buffer
	b, err := OpenAuthority(&cfg, slog.New(slog.NewTextHandler(&logs, nil)))
	if err != nil {
		t.Fatal(err)
	}
	if !b.CACert().Equal(a.CACert()) {
		t.Fatal("the CA changed")
	}
	leaf := b.ServerCertificate().Leaf
	if leaf.Equal(a.ServerCertificate().Leaf) {
		t.Fatal("the server certificate was not reissued")
	}
	if err := leaf.VerifyHostname("new.example.org"); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(logs.String(), "does not cover the configured names") || !strings.Contains(logs.String(), "new.example.org") {
		t.Fatalf("no log line names the new host:\n%s", logs.String())
	}
}
