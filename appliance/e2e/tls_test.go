package e2e

import (
	"archive/zip"
	"bytes"
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"errors"
	"io"
	"math/big"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"outpost/appliance/admin"
	"outpost/appliance/apptest"
	"outpost/appliance/broker"
	"outpost/appliance/config"
	"outpost/appliance/cot"
	"outpost/appliance/netx"
	"outpost/appliance/pki"
	"outpost/appliance/takclient"
	"outpost/internal/testkit"
)

func clientByUID(b *broker.Broker, uid string) (broker.ClientInfo, bool) {
	for _, c := range b.Clients() {
		if c.UID == uid {
			return c, true
		}
	}
	return broker.ClientInfo{}, false
}

func TestMutualTLSAccepted(t *testing.T) {
	a := apptest.Start(t, nil)
	alice := a.Issue(t, "alice")

	tlsClient, err := takclient.Dial(a.Addr(t, netx.ListenerCoTTLS), a.ClientTLS(alice))
	if err != nil {
		t.Fatalf("valid certificate refused on 8089: %v", err)
	}
	defer tlsClient.Close()
	tcpClient, err := takclient.Dial(a.Addr(t, netx.ListenerCoTTCP), nil)
	if err != nil {
		t.Fatal(err)
	}
	defer tcpClient.Close()

	if err := tlsClient.Send(takclient.SA("ALICE-1", "ALICE", 1, 2)); err != nil {
		t.Fatal(err)
	}
	// One relay for both listeners, and the certificate's CN is the user.
	if _, err := tcpClient.WaitFor(func(ev *cot.Event) bool { return ev.UID == "ALICE-1" }, 10*time.Second); err != nil {
		t.Fatalf("TCP client did not receive the TLS client's SA: %v", err)
	}
	ci, ok := clientByUID(a.Broker(), "ALICE-1")
	if !ok || ci.User != "alice" || ci.Listener != netx.ListenerCoTTLS {
		t.Fatalf("registry row %+v, want user alice on cot-tls", ci)
	}
	// The TLS client gets pongs too.
	tlsClient.Ping("ALICE-1")
	if _, err := tlsClient.WaitFor(takclient.Type("t-x-c-t-r"), 10*time.Second); err != nil {
		t.Fatal(err)
	}

	resp, err := a.HTTPSClient(alice).Get("https://" + a.Addr(t, netx.ListenerHTTPS) + "/Marti/api/version/config")
	if err != nil {
		t.Fatalf("valid certificate refused on 8443: %v", err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != 200 || !strings.Contains(string(body), "ServerConfig") {
		t.Fatalf("8443: %d %s", resp.StatusCode, body)
	}
	// The HTTPS client list shows the user name from the certificate.
	resp, err = a.HTTPSClient(alice).Get("https://" + a.Addr(t, netx.ListenerHTTPS) + "/Marti/api/clientEndPoints")
	if err != nil {
		t.Fatal(err)
	}
	body, _ = io.ReadAll(resp.Body)
	resp.Body.Close()
	if !strings.Contains(string(body), `"username":"alice"`) {
		t.Fatalf("clientEndPoints %s", body)
	}
	// And so does the management API's /Clients (127.0.0.1 is allowed by default).
	resp, err = http.Get("http://" + a.Addr(t, netx.ListenerREST) + "/Clients")
	if err != nil {
		t.Fatal(err)
	}
	body, _ = io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != 200 || !strings.Contains(string(body), `"uid":"ALICE-1"`) || !strings.Contains(string(body), `"user":"alice"`) {
		t.Fatalf("/Clients: %d %s", resp.StatusCode, body)
	}
}

// expiredCert signs a client certificate with our CA key (read from disk, as
// an attacker holding an old certificate would present it) whose validity
// ended yesterday.
func expiredCert(t *testing.T, cfg config.Config) *tls.Certificate {
	t.Helper()
	caPEM, err := os.ReadFile(filepath.Join(cfg.CertsPath, "ca.pem"))
	if err != nil {
		t.Fatal(err)
	}
	keyPEM, err := os.ReadFile(filepath.Join(cfg.CertsPath, "ca.key"))
	if err != nil {
		t.Fatal(err)
	}
	cb, _ := pem.Decode(caPEM)
	ca, err := x509.ParseCertificate(cb.Bytes)
	if err != nil {
		t.Fatal(err)
	}
	kb, _ := pem.Decode(keyPEM)
	caKey, err := x509.ParsePKCS8PrivateKey(kb.Bytes)
	if err != nil {
		if k, err2 := x509.ParseECPrivateKey(kb.Bytes); err2 == nil {
			caKey = k
		} else {
			t.Fatalf("CA key: %v / %v", err, err2)
		}
	}
	return signedBy(t, ca, caKey, "old-timer", time.Now().Add(-48*time.Hour), time.Now().Add(-24*time.Hour))
}

func signedBy(t *testing.T, ca *x509.Certificate, caKey any, cn string, from, until time.Time) *tls.Certificate {
	t.Helper()
	key, _ := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	tmpl := &x509.Certificate{
		SerialNumber: big.NewInt(time.Now().UnixNano()),
		Subject:      pkix.Name{CommonName: cn},
		NotBefore:    from, NotAfter: until,
		KeyUsage:    x509.KeyUsageDigitalSignature,
		ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageClientAuth},
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, ca, &key.PublicKey, caKey)
	if err != nil {
		t.Fatal(err)
	}
	return &tls.Certificate{Certificate: [][]byte{der}, PrivateKey: key}
}

// foreignCert is a client certificate from a CA that is not ours.
func foreignCert(t *testing.T) *tls.Certificate {
	t.Helper()
	caKey, _ := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	caTmpl := &x509.Certificate{
		SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "Not Our CA"},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour),
		IsCA: true, BasicConstraintsValid: true, KeyUsage: x509.KeyUsageCertSign,
	}
	der, _ := x509.CreateCertificate(rand.Reader, caTmpl, caTmpl, &caKey.PublicKey, caKey)
	ca, _ := x509.ParseCertificate(der)
	// Same common name as a real user: the name alone must not be enough.
	return signedBy(t, ca, caKey, "alice", time.Now().Add(-time.Hour), time.Now().Add(time.Hour))
}

// refusedOnCoT reports whether the 8089 listener refused the certificate:
// the handshake fails, or (TLS 1.3, where the client finishes first) the
// connection is closed before anything is relayed.
func refusedOnCoT(t *testing.T, a *apptest.App, cert *tls.Certificate) bool {
	t.Helper()
	conn, err := tls.DialWithDialer(&net.Dialer{Timeout: 5 * time.Second}, "tcp", a.Addr(t, netx.ListenerCoTTLS), a.ClientTLS(cert))
	if err != nil {
		return true
	}
	defer conn.Close()
	conn.SetReadDeadline(time.Now().Add(5 * time.Second))
	_, err = conn.Read(make([]byte, 1))
	if err == nil {
		return false // the server sent data: we are in
	}
	var ne net.Error
	if errors.As(err, &ne) && ne.Timeout() {
		return false // connection open and idle: accepted
	}
	return true
}

func TestMutualTLSRefused(t *testing.T) {
	a := apptest.Start(t, nil)
	cfg := a.Cfg
	revoked := a.Issue(t, "mallory")
	if _, err := a.Authority().RevokeName("mallory", "key_compromise"); err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		name string
		cert *tls.Certificate
	}{
		{"no certificate", nil},
		{"untrusted CA", foreignCert(t)},
		{"expired", expiredCert(t, cfg)},
		{"revoked", revoked},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			if !refusedOnCoT(t, a, tc.cert) {
				t.Fatal("8089 accepted the connection")
			}
			resp, err := a.HTTPSClient(tc.cert).Get("https://" + a.Addr(t, netx.ListenerHTTPS) + "/Marti/api/version")
			if err == nil {
				resp.Body.Close()
				t.Fatalf("8443 answered %d", resp.StatusCode)
			}
		})
	}
	if n := len(a.Broker().Sessions()); n != 0 {
		t.Fatalf("%d refused connections reached the broker", n)
	}
}

func TestRevokedWhileConnected(t *testing.T) {
	a := apptest.Start(t, nil)
	cfg := a.Cfg
	carol := a.Issue(t, "carol")
	dave := a.Issue(t, "dave")
	cc, err := takclient.Dial(a.Addr(t, netx.ListenerCoTTLS), a.ClientTLS(carol))
	if err != nil {
		t.Fatal(err)
	}
	defer cc.Close()
	dc, err := takclient.Dial(a.Addr(t, netx.ListenerCoTTLS), a.ClientTLS(dave))
	if err != nil {
		t.Fatal(err)
	}
	defer dc.Close()
	cc.Send(takclient.SA("CAROL", "CAROL", 1, 1))
	dc.Send(takclient.SA("DAVE", "DAVE", 1, 1))
	testkit.WaitFor(t, "both identified", func() bool {
		_, c := clientByUID(a.Broker(), "CAROL")
		_, d := clientByUID(a.Broker(), "DAVE")
		return c && d
	})
	hc := a.HTTPSClient(carol)
	url := "https://" + a.Addr(t, netx.ListenerHTTPS) + "/Marti/api/version"
	resp, err := hc.Get(url) // keeps a connection alive in hc's pool
	if err != nil {
		t.Fatal(err)
	}
	io.Copy(io.Discard, resp.Body)
	resp.Body.Close()

	// Revoke the way an operator does: another process rewrites the CRL
	// file (outpost cert revoke); the server notices and cuts carol off.
	if n, err := admin.CertRevoke(cfg, testkit.Discard(), "carol", "privilege_withdrawn"); err != nil || n != 1 {
		t.Fatalf("revoke: %d %v", n, err)
	}
	select {
	case <-cc.Done():
	case <-time.After(15 * time.Second):
		t.Fatal("revoked client still connected to 8089")
	}
	testkit.WaitFor(t, "close reason", func() bool { return a.Broker().Stats().Closed[broker.ReasonRevoked] == 1 })
	// dave is untouched and sees carol leave.
	if _, err := dc.WaitFor(takclient.Type("t-x-d-d"), 10*time.Second); err != nil {
		t.Fatalf("other client: %v", err)
	}
	select {
	case <-dc.Done():
		t.Fatal("an unrevoked client was disconnected")
	default:
	}
	// 8443: a request on the kept-alive connection is refused — the
	// connection is closed, or (if the request wins the race with the
	// revocation callback) answered 403 by the revocation check — and a new
	// connection fails its handshake.
	if resp, err := hc.Get(url); err == nil {
		resp.Body.Close()
		if resp.StatusCode != http.StatusForbidden {
			t.Fatalf("revoked certificate still served on 8443: %d", resp.StatusCode)
		}
	}
	fresh := a.HTTPSClient(carol)
	if resp, err := fresh.Get(url); err == nil {
		resp.Body.Close()
		t.Fatalf("revoked certificate completed a new handshake on 8443: %d", resp.StatusCode)
	}
	if !refusedOnCoT(t, a, carol) {
		t.Fatal("revoked certificate reconnected to 8089")
	}
}

// TestSilentClientCutAtHandshakeTimeout: a client that opens TCP and never
// sends a ClientHello is closed after WRAP_SSL_TIMEOUT (1 s), and does not
// hold up other clients' handshakes meanwhile. The silent ones come from
// another address (127.0.0.2), more of them than its share of handshakes
// in flight: the surplus is refused at once.
func TestSilentClientCutAtHandshakeTimeout(t *testing.T) {
	a := apptest.Start(t, nil)
	alice := a.Issue(t, "alice")
	for _, name := range []string{netx.ListenerCoTTLS, netx.ListenerHTTPS} {
		t.Run(name, func(t *testing.T) {
			var silent []net.Conn
			for i := 0; i < 20; i++ {
				c, err := testkit.DialFrom("127.0.0.2", a.Addr(t, name))
				if err != nil {
					t.Fatal(err)
				}
				defer c.Close()
				silent = append(silent, c)
			}
			start := time.Now()
			// Meanwhile a real client completes its handshake at once.
			good, err := tls.Dial("tcp", a.Addr(t, name), a.ClientTLS(alice))
			if err != nil {
				t.Fatalf("handshake blocked by silent clients: %v", err)
			}
			goodTook := time.Since(start)
			good.Close()
			for _, c := range silent {
				c.SetReadDeadline(time.Now().Add(10 * time.Second))
				if _, err := c.Read(make([]byte, 1)); err == nil {
					t.Fatal("silent client received data")
				} else if ne, ok := err.(net.Error); ok && ne.Timeout() {
					t.Fatal("silent client was not cut off")
				}
			}
			cut := time.Since(start)
			t.Logf("good handshake took %v among 20 silent clients; silent clients cut after %v", goodTook, cut)
			if cut < 500*time.Millisecond || cut > 5*time.Second {
				t.Fatalf("silent clients cut after %v, want about WRAP_SSL_TIMEOUT (1 s)", cut)
			}
		})
	}
}

func TestIssueUserPackageIntoStore(t *testing.T) {
	a := apptest.Start(t, nil)
	ctx := context.Background()
	up, err := a.Authority().IssueUserPackage(ctx, "erin", pki.DeviceATAK, a.Store().Files())
	if err != nil {
		t.Fatal(err)
	}
	p, err := a.Store().Files().DataPackageByHash(ctx, up.Hash)
	if err != nil {
		t.Fatalf("package not stored as a data package: %v", err)
	}
	if p.Privacy != 1 || p.Name != up.FileName {
		t.Fatalf("stored package %+v: a package holding a private key must be private", p)
	}
	br, err := a.Store().Files().OpenBlob(ctx, p.BlobID)
	if err != nil {
		t.Fatal(err)
	}
	data, _ := io.ReadAll(br)
	br.Close()
	zr, err := zip.NewReader(bytes.NewReader(data), int64(len(data)))
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, f := range zr.File {
		names = append(names, f.Name)
	}
	joined := strings.Join(names, " ")
	if !strings.Contains(joined, "MANIFEST/manifest.xml") || !strings.Contains(joined, ".pref") || strings.Count(joined, ".p12") != 2 {
		t.Fatalf("ATAK package entries %v", names)
	}
	// The certificate is live: it connects.
	c, err := tls.X509KeyPair(up.Cert.CertPEM, up.Cert.KeyPEM)
	if err != nil {
		t.Fatal(err)
	}
	if refusedOnCoT(t, a, &c) {
		t.Fatal("the package's certificate is refused")
	}
}
