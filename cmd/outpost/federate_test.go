package main

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/sha256"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/hex"
	"encoding/pem"
	"math/big"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// `outpost federate list` prints the federation identity with its
// fingerprint, the trusted CAs and the configured federates; bad usage and
// a missing trust file are errors.
func TestFederateList(t *testing.T) {
	dir := t.TempDir()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "Partner CA"},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour), IsCA: true, BasicConstraintsValid: true}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	trust := filepath.Join(dir, "trust.pem")
	if err := os.WriteFile(trust, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}), 0o600); err != nil {
		t.Fatal(err)
	}
	sum := sha256.Sum256(der)
	caPrint := strings.ToUpper(hex.EncodeToString(sum[:2])) // the fingerprint's first two bytes
	data := []string{"--data-dir", filepath.Join(dir, "data"), "--log-level", "warn", "--key-type", "ecdsa-p256"}
	code, out, errs := outpost(t, append([]string{"federate", "list", "--federation-trust", trust, "--federates", "bravo=10.0.0.2:9001,legacy=10.0.0.3:9000/v1", "--server-name", "alpha"}, data...)...)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errs)
	}
	for _, want := range []string{"name:        alpha", "server id:   outpost-", "fingerprint: ", "CN=Partner CA", caPrint[:2] + ":" + caPrint[2:4], "bravo", "10.0.0.2:9001", "legacy", "10.0.0.3:9000/v1"} {
		if !strings.Contains(out, want) {
			t.Errorf("output lacks %q:\n%s", want, out)
		}
	}
	if code, _, errs := outpost(t, append([]string{"federate", "add"}, data...)...); code != 2 || !strings.Contains(errs, "usage:") {
		t.Errorf("federate add: exit %d %s", code, errs)
	}
	// Managed federates: add, trust, list, remove, and their errors.
	notCA := filepath.Join(dir, "notca.pem")
	if err := os.WriteFile(notCA, []byte("hello"), 0o600); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		args []string
		code int
		want string
	}{
		{[]string{"federate", "add", "charlie", "--address", "10.0.0.3:9001", "--ca", trust}, 0, "charlie: add done"},
		{[]string{"federate", "add", "delta"}, 0, "delta: add done"},
		{[]string{"federate", "add", "charlie"}, 1, "exists"},
		{[]string{"federate", "add", "echo", "--address", "10.0.0.3"}, 1, "host:port"},
		{[]string{"federate", "add", "echo", "--ca", notCA}, 1, "no PEM certificate"},
		{[]string{"federate", "trust", "delta", trust}, 0, "delta: trust done"},
		{[]string{"federate", "trust", "nobody", trust}, 1, "no federate named"},
		{[]string{"federate", "disable", "delta"}, 0, "delta: disable done"},
		{[]string{"federate", "enable", "delta"}, 0, "delta: enable done"},
		{[]string{"federate", "enable", "nobody"}, 1, "no federate named"},
		{[]string{"federate", "edit", "charlie", "--pin", strings.Repeat("ab", 32), "--backoff-min", "2s", "--backoff-max", "30s"}, 0, "charlie: edit done"},
		{[]string{"federate", "edit", "charlie"}, 2, "nothing to change"},
		{[]string{"federate", "edit", "charlie", "--pin", "12"}, 1, "pin"},
		{[]string{"federate", "edit", "charlie", "--backoff-min", "1m", "--backoff-max", "1s"}, 1, "backoffMax"},
		{[]string{"federate", "edit", "nobody", "--address", "10.0.0.9:9001"}, 1, "no federate named"},
		{[]string{"federate", "add", "foxtrot", "--pin", "nope"}, 1, "pin"},
		{[]string{"federate", "add", "golf", "--address", "10.0.0.7:9000", "--protocol", "v1"}, 0, "golf: add done"},
		{[]string{"federate", "add", "hotel", "--protocol", "v3"}, 1, "protocol"},
		{[]string{"federate", "edit", "golf", "--protocol", "tcp"}, 1, "protocol"},
		{[]string{"federate", "edit", "charlie", "--protocol", "v1"}, 0, "charlie: edit done"},
		{[]string{"federate", "edit", "charlie", "--protocol", "v2"}, 0, "charlie: edit done"},
		{[]string{"federate", "disable", "delta"}, 0, "delta: disable done"},
		{[]string{"federate", "remove", "delta"}, 0, "delta: remove done"},
		{[]string{"federate", "remove", "delta"}, 1, "no federate named"},
	} {
		code, out, errs := outpost(t, append(tc.args, data...)...)
		if code != tc.code || !strings.Contains(out+errs, tc.want) {
			t.Errorf("%v: exit %d %q %q; want %d %q", tc.args, code, out, errs, tc.code, tc.want)
		}
	}
	code, out, errs = outpost(t, append([]string{"federate", "list", "--federation-trust", trust}, data...)...)
	if code != 0 || !strings.Contains(out, "charlie") || !strings.Contains(out, "10.0.0.3:9001") || !strings.Contains(out, "managed") ||
		!strings.Contains(out, "AB:AB:AB") || !strings.Contains(out, "10.0.0.7:9000/v1") || strings.Contains(out, "10.0.0.3:9001/v1") ||
		strings.Contains(out, "hotel") ||
		!strings.Contains(out, "Partner CA "+caPrint[:2]) || strings.Contains(out, "delta") {
		t.Errorf("list after add/remove: exit %d %s %s", code, out, errs)
	}
	if code, _, errs := outpost(t, append([]string{"federate", "list", "--federation-trust", filepath.Join(dir, "missing.pem")}, data...)...); code != 1 || !strings.Contains(errs, "federationTrust") {
		t.Errorf("missing trust file: exit %d %s", code, errs)
	}
}
