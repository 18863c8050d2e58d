package e2e

import (
	"archive/zip"
	"bufio"
	"bytes"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/base64"
	"encoding/json"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"outpost/appliance/netx"
	"outpost/appliance/takclient"
	"outpost/internal/testkit"
)

// caPool is what a client trusts: the CA that `outpost` created in dataDir.
func caPool(t *testing.T, dataDir string) *x509.CertPool {
	t.Helper()
	caPEM, err := os.ReadFile(filepath.Join(dataDir, "certs", "ca.pem"))
	if err != nil {
		t.Fatal(err)
	}
	pool := x509.NewCertPool()
	if !pool.AppendCertsFromPEM(caPEM) {
		t.Fatalf("no certificate in %s", filepath.Join(dataDir, "certs", "ca.pem"))
	}
	return pool
}

func runOutpost(t *testing.T, args ...string) string {
	t.Helper()
	out, err := exec.Command(testkit.Binary(t), args...).CombinedOutput()
	if err != nil {
		t.Fatalf("outpost %v: %v\n%s", args, err, out)
	}
	return string(out)
}

// TestBinaryTLSInterop: certificates issued by `outpost cert issue`, the
// real binary on free ports, and two @tak-ps/node-tak clients over mutual
// TLS: both get pongs, one's position report reaches the other, and every
// event the server sends parses with @tak-ps/node-cot. Then `outpost cert
// revoke` cuts a connected client off.
func TestBinaryTLSInterop(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs the binary")
	}
	testkit.RequireInterop(t, "@tak-ps/node-tak")
	dataDir := t.TempDir()
	out := t.TempDir()
	for _, name := range []string{"alice", "bob"} {
		runOutpost(t, "cert", "issue", name, "--data-dir", dataDir, "--out", filepath.Join(out, name), "--log-level", "warn")
	}
	p := testkit.Start(t, dataDir, "--ssl-cot-port", "0", "--https-port", "0")
	cotTLS := p.Addrs[netx.ListenerCoTTLS]
	if cotTLS == "" {
		t.Fatalf("no cot-tls address: %v", p.Addrs)
	}

	cmd := exec.Command("node", "tls-clients.mjs")
	cmd.Dir = testkit.InteropDir(t)
	cmd.Env = append(os.Environ(),
		"OUTPOST_COT_URL=ssl://"+cotTLS,
		"CERT_A="+filepath.Join(out, "alice", "alice.pem"), "KEY_A="+filepath.Join(out, "alice", "alice.key"),
		"CERT_B="+filepath.Join(out, "bob", "bob.pem"), "KEY_B="+filepath.Join(out, "bob", "bob.key"),
		"TIMEOUT_MS=20000")
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err := cmd.Run()
	steps := map[string]bool{}
	sc := bufio.NewScanner(&stdout)
	for sc.Scan() {
		var m map[string]any
		if json.Unmarshal(sc.Bytes(), &m) == nil {
			steps[m["step"].(string)] = true
			t.Logf("node-tak: %s", sc.Text())
		}
	}
	if err != nil || !steps["done"] {
		t.Fatalf("node-tak interop failed: %v\nstdout:\n%s\nstderr:\n%s", err, stdout.String(), stderr.String())
	}
	for _, s := range []string{"connected", "pong", "relayed", "pong-again"} {
		if !steps[s] {
			t.Fatalf("step %q missing", s)
		}
	}

	// Revocation through the command line while connected.
	pair, err := tls.LoadX509KeyPair(filepath.Join(out, "bob", "bob.pem"), filepath.Join(out, "bob", "bob.key"))
	if err != nil {
		t.Fatal(err)
	}
	pool := caPool(t, dataDir)
	c, err := takclient.Dial(cotTLS, &tls.Config{Certificates: []tls.Certificate{pair}, RootCAs: pool, ServerName: "127.0.0.1"})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	c.Send(takclient.SA("BOB-GO", "BOB", 1, 1))
	if _, err := c.WaitFor(takclient.Type("t-x-takp-v"), 10*time.Second); err != nil {
		t.Fatal(err)
	}
	outp := runOutpost(t, "cert", "revoke", "bob", "--reason", "key_compromise", "--data-dir", dataDir, "--log-level", "warn")
	if !strings.Contains(outp, "revoked 1") {
		t.Fatalf("revoke said %q", outp)
	}
	select {
	case <-c.Done():
	case <-time.After(15 * time.Second):
		t.Fatal("the running server did not disconnect the revoked client")
	}
	var crl struct {
		Revoked []map[string]string `json:"revoked_certificates"`
	}
	data, err := os.ReadFile(filepath.Join(dataDir, "certs", "crl.json"))
	if err != nil || json.Unmarshal(data, &crl) != nil || len(crl.Revoked) != 1 || crl.Revoked[0]["reason"] != "key_compromise" {
		t.Fatalf("crl.json %s %v", data, err)
	}
	if err, _ := p.Stop(t, 15*time.Second); err != nil {
		t.Fatalf("outpost exited with %v after SIGTERM", err)
	}
}

// TestBinaryEnrollment is certificate enrollment as ATAK's quick connect
// does it, against the real binary: a user made with `outpost user add`,
// the enrollment package from `outpost cert enrollment-package`, a CSR
// signed over 8446 with HTTP Basic auth (signClient/v2), and the returned
// certificate connecting to 8089.
func TestBinaryEnrollment(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs the binary")
	}
	dataDir := t.TempDir()
	add := exec.Command(testkit.Binary(t), "user", "add", "frank", "--password-stdin", "--data-dir", dataDir, "--log-level", "warn")
	add.Stdin = strings.NewReader("correct horse battery\n")
	if out, err := add.CombinedOutput(); err != nil {
		t.Fatalf("user add: %v %s", err, out)
	}
	pkgOut := runOutpost(t, "cert", "enrollment-package", "--device", "atak", "--data-dir", dataDir, "--out", t.TempDir(), "--log-level", "warn")
	pkgPath := strings.TrimSpace(strings.TrimPrefix(pkgOut, "wrote "))
	zr, err := zip.OpenReader(pkgPath)
	if err != nil {
		t.Fatalf("enrollment package %q: %v", pkgPath, err)
	}
	var pref string
	for _, f := range zr.File {
		if strings.HasSuffix(f.Name, ".pref") {
			rc, _ := f.Open()
			b, _ := io.ReadAll(rc)
			rc.Close()
			pref = string(b)
		}
		if strings.Contains(f.Name, "alice") || (strings.HasSuffix(f.Name, ".p12") && !strings.Contains(f.Name, "truststore")) {
			t.Fatalf("enrollment package carries a client certificate: %s", f.Name)
		}
	}
	zr.Close()
	if !strings.Contains(pref, `key="enrollForCertificateWithTrust0"`) {
		t.Fatalf("enrollment .pref lacks enrollForCertificateWithTrust0:\n%s", pref)
	}

	p := testkit.Start(t, dataDir, "--ssl-cot-port", "0", "--enroll-port", "0")
	pool := caPool(t, dataDir)
	hc := &http.Client{Timeout: 30 * time.Second, Transport: &http.Transport{TLSClientConfig: &tls.Config{RootCAs: pool, ServerName: "127.0.0.1"}}}

	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	csrDER, err := x509.CreateCertificateRequest(rand.Reader, &x509.CertificateRequest{Subject: pkix.Name{CommonName: "frank"}}, key)
	if err != nil {
		t.Fatal(err)
	}
	url := "https://" + p.Addrs[netx.ListenerEnroll] + "/Marti/api/tls/signClient/v2?clientUid=ANDROID-frank&version=5.2"
	post := func(user, pass string) *http.Response {
		req, _ := http.NewRequest("POST", url, strings.NewReader(base64.StdEncoding.EncodeToString(csrDER)))
		req.SetBasicAuth(user, pass)
		req.Header.Set("Accept", "application/json")
		resp, err := hc.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		return resp
	}
	if resp := post("frank", "wrong"); resp.StatusCode != http.StatusUnauthorized {
		t.Fatalf("wrong password: %d", resp.StatusCode)
	} else {
		resp.Body.Close()
	}
	resp := post("frank", "correct horse battery")
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != 200 {
		t.Fatalf("signClient/v2: %d %s", resp.StatusCode, body)
	}
	var signed map[string]string
	if err := json.Unmarshal(body, &signed); err != nil {
		t.Fatal(err)
	}
	der, err := base64.StdEncoding.DecodeString(strings.ReplaceAll(signed["signedCert"], "\n", ""))
	if err != nil {
		t.Fatal(err)
	}
	leaf, err := x509.ParseCertificate(der)
	if err != nil || leaf.Subject.CommonName != "frank" {
		t.Fatalf("signed certificate: %v %v", leaf, err)
	}

	// The enrolled certificate connects to 8089 and relays.
	c, err := takclient.Dial(p.Addrs[netx.ListenerCoTTLS], &tls.Config{
		Certificates: []tls.Certificate{{Certificate: [][]byte{der}, PrivateKey: key}},
		RootCAs:      pool, ServerName: "127.0.0.1",
	})
	if err != nil {
		t.Fatalf("enrolled certificate refused on 8089: %v", err)
	}
	defer c.Close()
	if _, err := c.WaitFor(takclient.Type("t-x-takp-v"), 10*time.Second); err != nil {
		t.Fatal(err)
	}
	// And deleting the user revokes it: the running server cuts it off.
	out := runOutpost(t, "user", "delete", "frank", "--data-dir", dataDir, "--log-level", "warn")
	if !strings.Contains(out, "revoked 1") {
		t.Fatalf("user delete said %q", out)
	}
	select {
	case <-c.Done():
	case <-time.After(15 * time.Second):
		t.Fatal("deleted user's certificate still connected")
	}
	if err, _ := p.Stop(t, 15*time.Second); err != nil {
		t.Fatalf("outpost exited with %v after SIGTERM", err)
	}
}
