package e2e

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/base64"
	"encoding/json"
	"io"
	"net"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"outpost/appliance/takclient"
	"outpost/internal/testkit"
)

// TestBinaryInvitation is an invitation on the real binary, from the
// outside: `outpost invite` run beside the running server writes the ATAK
// code as a PNG, zbarimg reads it, and a client that knows only what the
// code said (and the enrollment port, which ATAK assumes) enrolls with the
// token, connects to the TLS streaming port with its new certificate, and
// cannot enroll a second time with the spent token.
func TestBinaryInvitation(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs the binary")
	}
	dataDir := t.TempDir()
	// The code names the ports: fixed ones, on an address of this test's
	// own where nothing else can hold them.
	home := testkit.OwnLoopback(t)
	sslPort, enrollPort := "18089", "18446" // not the defaults: the code names a port only when it is not 8089
	ports := []string{"--bind", home, "--public-host", home, "--ssl-cot-port", sslPort, "--enroll-port", enrollPort}
	add := outpostOut(t, append([]string{"user", "add", "frank", "--data-dir", dataDir, "--log-level", "warn"}, ports...)...)
	if !strings.Contains(add, "created user frank") {
		t.Fatalf("user add: %s", add)
	}
	p := testkit.Start(t, dataDir, ports...)

	png := filepath.Join(t.TempDir(), "frank.png")
	out := outpostOut(t, append([]string{"invite", "frank", "--png", png, "--json", "--data-dir", dataDir, "--log-level", "warn"}, ports...)...)
	var inv struct{ Token string }
	if err := json.Unmarshal([]byte(out), &inv); err != nil {
		t.Fatalf("invite --json: %v\n%s", err, out)
	}
	img, err := os.ReadFile(png)
	if err != nil {
		t.Fatal(err)
	}
	code := testkit.DecodeQR(t, img)
	u, err := url.Parse(code)
	if err != nil || !strings.HasPrefix(code, "tak://com.atakmap.app/enroll?") {
		t.Fatalf("the code reads %q (%v)", code, err)
	}
	q := u.Query()
	host, port, err := net.SplitHostPort(q.Get("host"))
	if err != nil || host != home || port != sslPort || q.Get("username") != "frank" || q.Get("token") != inv.Token {
		t.Fatalf("the code's fields %v (host %q port %q)", q, host, port)
	}
	if logs := p.LogText(); strings.Contains(logs, inv.Token) {
		t.Fatal("the token is in the server's log")
	}

	pool := caPool(t, dataDir)
	hc := &http.Client{Timeout: 30 * time.Second, Transport: &http.Transport{TLSClientConfig: &tls.Config{RootCAs: pool, ServerName: host}}}
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	csr, err := x509.CreateCertificateRequest(rand.Reader, &x509.CertificateRequest{Subject: pkix.Name{CommonName: "frank"}}, key)
	if err != nil {
		t.Fatal(err)
	}
	enroll := func() (int, []byte) {
		req, _ := http.NewRequest("POST", "https://"+net.JoinHostPort(host, enrollPort)+"/Marti/api/tls/signClient/v2?clientUid=ANDROID-frank",
			strings.NewReader(base64.StdEncoding.EncodeToString(csr)))
		req.SetBasicAuth(q.Get("username"), q.Get("token"))
		req.Header.Set("Accept", "application/json")
		res, err := hc.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer res.Body.Close()
		b, _ := io.ReadAll(res.Body)
		return res.StatusCode, b
	}
	status, body := enroll()
	if status != http.StatusOK {
		t.Fatalf("enrollment with the code's token: %d %s", status, body)
	}
	var signed map[string]string
	if err := json.Unmarshal(body, &signed); err != nil {
		t.Fatal(err)
	}
	der, err := base64.StdEncoding.DecodeString(strings.ReplaceAll(signed["signedCert"], "\n", ""))
	if err != nil {
		t.Fatal(err)
	}
	if status, _ := enroll(); status != http.StatusUnauthorized {
		t.Fatalf("second enrollment with the spent token: %d", status)
	}
	c, err := takclient.Dial(net.JoinHostPort(host, port), &tls.Config{
		Certificates: []tls.Certificate{{Certificate: [][]byte{der}, PrivateKey: key}},
		RootCAs:      pool, ServerName: host,
	})
	if err != nil {
		t.Fatalf("the enrolled certificate is refused on the streaming port: %v", err)
	}
	defer c.Close()
	if _, err := c.WaitFor(takclient.Type("t-x-takp-v"), 10*time.Second); err != nil {
		t.Fatal(err)
	}
	if logs := p.LogText(); strings.Contains(logs, inv.Token) || !strings.Contains(logs, "client certificate enrolled") {
		t.Fatalf("server log: token present or no enrollment line")
	}
	if err, _ := p.Stop(t, 15*time.Second); err != nil {
		t.Fatalf("outpost exited with %v after SIGTERM", err)
	}
}

// outpostOut runs the binary and returns its standard output; a failure ends the
// test with its standard error.
func outpostOut(t *testing.T, args ...string) string {
	t.Helper()
	cmd := exec.Command(testkit.Binary(t), args...)
	var stderr strings.Builder
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("outpost %v: %v\n%s", args, err, stderr.String())
	}
	return string(out)
}
