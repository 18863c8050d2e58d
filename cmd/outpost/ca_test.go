package main

import (
	"bytes"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/base64"
	"encoding/json"
	"encoding/pem"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"outpost/internal/testkit"
)

// TestCAImportCommand: usage errors, a refused CA, and an import that
// reports what happened to the old client certificates.
func TestCAImportCommand(t *testing.T) {
	dir := t.TempDir()
	data := []string{"--data-dir", dir, "--log-level", "warn", "--key-type", "ecdsa-p256"}
	root := testkit.MakeCA(t, "Example Root", nil, testkit.CAOptions{})
	inter := testkit.MakeCA(t, "Example Issuing CA", &root, testkit.CAOptions{})
	rootCert, rootKey := root.WriteFiles(t, dir, "root")
	interCert, interKey := inter.WriteFiles(t, dir, "issuing")

	for _, tc := range []struct {
		name string
		args []string
		code int
		msg  string
	}{
		{"no subcommand", []string{"ca"}, exitUsage, "usage:"},
		{"no key", []string{"ca", "import", "--cert", rootCert}, exitUsage, "usage:"},
		{"unknown subcommand", []string{"ca", "export", "--cert", rootCert, "--key", rootKey}, exitUsage, "usage:"},
		{"key of another CA", []string{"ca", "import", "--cert", rootCert, "--key", interKey}, exitFailure, "does not belong"},
		{"intermediate without its root", []string{"ca", "import", "--cert", interCert, "--key", interKey}, exitFailure, "--chain"},
	} {
		r := outpostIn(t, "", append(tc.args, data...)...)
		if r.code != tc.code || !strings.Contains(r.stderr+r.stdout, tc.msg) {
			t.Errorf("%s: exit %d, output %q; want exit %d mentioning %q", tc.name, r.code, r.stderr+r.stdout, tc.code, tc.msg)
		}
	}
	r := outpostIn(t, "", append([]string{"ca", "import", "--cert", interCert, "--key", interKey, "--chain", rootCert}, data...)...)
	if r.code != exitOK {
		t.Fatalf("import: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	for _, want := range []string{`imported the CA "Example Issuing CA"`, `"Example Root"`, "reissued the server certificate", "are refused from the next start"} {
		if !strings.Contains(r.stdout, want) {
			t.Errorf("output lacks %q:\n%s", want, r.stdout)
		}
	}
	r = outpostIn(t, "", append([]string{"ca", "import", "--cert", rootCert, "--key", rootKey, "--trust-previous"}, data...)...)
	if r.code != exitOK || !strings.Contains(r.stdout, "stay accepted until you delete") || !strings.Contains(r.stdout, "ca.key.replaced-") {
		t.Fatalf("import --trust-previous: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
}

// TestCAImportEndToEnd: an organisation's intermediate is imported, the
// real binary starts on it, a device trusting only the organisation's root
// enrolls on the enrollment port (the answer carries the chain as ca0, ca1)
// and connects to the CoT TLS and HTTPS ports with the certificate it got,
// verifying the server through the chain the server sends.
func TestCAImportEndToEnd(t *testing.T) {
	dir := t.TempDir()
	data := []string{"--data-dir", dir, "--log-level", "warn", "--key-type", "ecdsa-p256", "--public-host", "127.0.0.1"}
	root := testkit.MakeCA(t, "Example Root", nil, testkit.CAOptions{})
	inter := testkit.MakeCA(t, "Example Issuing CA", &root, testkit.CAOptions{})
	rootCert, _ := root.WriteFiles(t, t.TempDir(), "root")
	interCert, interKey := inter.WriteFiles(t, t.TempDir(), "issuing")
	if r := outpostIn(t, "s3cret pass\n", append([]string{"user", "add", "dana", "--password-stdin"}, data...)...); r.code != exitOK {
		t.Fatalf("user add: %s%s", r.stdout, r.stderr)
	}
	if r := outpostIn(t, "", append([]string{"ca", "import", "--cert", interCert, "--key", interKey, "--chain", rootCert}, data...)...); r.code != exitOK {
		t.Fatalf("ca import: %s%s", r.stdout, r.stderr)
	}
	p := testkit.Start(t, dir, "--key-type", "ecdsa-p256", "--https-port", "0", "--ssl-cot-port", "0", "--enroll-port", "0")
	rootOnly := x509.NewCertPool()
	rootOnly.AddCert(root.Cert)

	// Enrollment: a CSR for dana, answered with the certificate and the chain.
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	csr, err := x509.CreateCertificateRequest(rand.Reader, &x509.CertificateRequest{Subject: pkix.Name{CommonName: "dana"}}, key)
	if err != nil {
		t.Fatal(err)
	}
	enroll := &http.Client{Timeout: 20 * time.Second, Transport: &http.Transport{TLSClientConfig: &tls.Config{RootCAs: rootOnly, ServerName: "127.0.0.1"}}}
	req, err := http.NewRequest(http.MethodPost, "https://"+p.Addr(t, "enroll")+"/Marti/api/tls/signClient/v2?clientUid=ANDROID-e2e",
		bytes.NewReader(pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE REQUEST", Bytes: csr})))
	if err != nil {
		t.Fatal(err)
	}
	req.SetBasicAuth("dana", "s3cret pass")
	req.Header.Set("Accept", "application/json")
	resp, err := enroll.Do(req)
	if err != nil {
		t.Fatalf("enrollment with only the root trusted: %v", err)
	}
	body, _ := io.ReadAll(io.LimitReader(resp.Body, 1<<20))
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("enrollment: %s %s", resp.Status, body)
	}
	var ans map[string]string
	if err := json.Unmarshal(body, &ans); err != nil {
		t.Fatal(err)
	}
	parse := func(k string) *x509.Certificate {
		der, err := base64.StdEncoding.DecodeString(strings.ReplaceAll(ans[k], "\n", ""))
		if err != nil {
			t.Fatalf("%s: %v", k, err)
		}
		c, err := x509.ParseCertificate(der)
		if err != nil {
			t.Fatalf("%s: %v", k, err)
		}
		return c
	}
	signed, ca0, ca1 := parse("signedCert"), parse("ca0"), parse("ca1")
	if !ca0.Equal(inter.Cert) || !ca1.Equal(root.Cert) {
		t.Fatalf("ca0 %q, ca1 %q: want the issuing CA, then the root", ca0.Subject.CommonName, ca1.Subject.CommonName)
	}
	if err := signed.CheckSignatureFrom(inter.Cert); err != nil {
		t.Fatal(err)
	}
	clientCert := tls.Certificate{Certificate: [][]byte{signed.Raw}, PrivateKey: key, Leaf: signed}

	for _, l := range []string{"cot-tls", "https"} {
		conn, err := tls.Dial("tcp", p.Addr(t, l), &tls.Config{RootCAs: rootOnly, ServerName: "127.0.0.1",
			Certificates: []tls.Certificate{clientCert}})
		if err != nil {
			t.Fatalf("%s: a client trusting only the root: %v", l, err)
		}
		st := conn.ConnectionState()
		conn.Close()
		if len(st.PeerCertificates) != 2 || !st.PeerCertificates[1].Equal(inter.Cert) {
			t.Fatalf("%s: the server sent %d certificates, want the server's and the issuing CA", l, len(st.PeerCertificates))
		}
		if ch := st.VerifiedChains[0]; len(ch) != 3 || !ch[2].Equal(root.Cert) {
			t.Fatalf("%s: verified chain of %d certificates", l, len(ch))
		}
	}
	// The HTTPS API answers the enrolled device.
	api := &http.Client{Timeout: 20 * time.Second, Transport: &http.Transport{TLSClientConfig: &tls.Config{RootCAs: rootOnly,
		ServerName: "127.0.0.1", Certificates: []tls.Certificate{clientCert}}}}
	res := testkit.Do(t, api, http.MethodGet, "https://"+p.Addr(t, "https")+"/Marti/api/version", nil)
	if res.Status != http.StatusOK {
		t.Fatalf("GET /Marti/api/version over 8443: %d %s", res.Status, res.Body)
	}
	if _, err := os.Stat(filepath.Join(dir, "certs", "ca.pem")); err != nil {
		t.Fatal(err)
	}
}
