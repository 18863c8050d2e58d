//go:build linux

package pki

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"

	"outpost/internal/testkit"
)

// TestOpenOnFullDisk: the authority opens from a certificate directory on
// a full filesystem, and writes nothing: not crl.pem, and not the server
// certificate a new name asks for, which it cannot write (the old one,
// still valid, serves, and the files stay a matching set).
func TestOpenOnFullDisk(t *testing.T) {
	dir := testkit.SmallFS(t, 1<<20)
	cfg := testConfig(t, filepath.Join(dir, "certs"))
	a := openTest(t, cfg)
	files := map[string][]byte{}
	for _, name := range []string{"ca.pem", "ca.key", "server.pem", "server.key", "server.key.unencrypted", "server.p12", "crl.json", "crl.pem"} {
		b, err := os.ReadFile(filepath.Join(cfg.CertsDir, name))
		if err != nil {
			t.Fatal(err)
		}
		files[name] = b
	}
	testkit.Fill(t, dir, "filler", 0)

	cfg.SANs = append(cfg.SANs, "new.example.org")
	b := openTest(t, cfg)
	if !bytes.Equal(b.ServerCertificate().Leaf.Raw, a.ServerCertificate().Leaf.Raw) {
		t.Fatal("a new server certificate in memory that could not be written")
	}
	for name, want := range files {
		if got, _ := os.ReadFile(filepath.Join(cfg.CertsDir, name)); !bytes.Equal(got, want) {
			t.Errorf("%s changed on the full disk", name)
		}
	}
	entries, _ := os.ReadDir(cfg.CertsDir)
	for _, e := range entries {
		if _, ok := files[e.Name()]; !ok && e.Name() != "clientpackages" {
			t.Errorf("%s left in the certificate directory", e.Name())
		}
	}
}
