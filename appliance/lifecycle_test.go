package appliance_test

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"go.uber.org/goleak"

	"outpost/appliance"
	"outpost/appliance/admin"
	"outpost/appliance/config"
	"outpost/appliance/cot"
	"outpost/appliance/mesh"
	"outpost/appliance/netx"
	"outpost/appliance/takclient"
	"outpost/internal/testkit"
)

// TestLifecycleLeavesNoGoroutine opens the whole appliance with every
// listener that can run here (federation on demand, the UDP input), uses
// each, closes it, and fails if a goroutine is left (architecture.md "The
// root composes": every goroutine has an owner, and Close waits for it).
func TestLifecycleLeavesNoGoroutine(t *testing.T) {
	before := goleak.IgnoreCurrent()
	cfg := config.Defaults()
	cfg.DataDir = t.TempDir()
	cfg.Bind, cfg.PublicHost, cfg.KeyType = "127.0.0.1", "127.0.0.1", "ecdsa-p256"
	cfg.RESTPort, cfg.HTTPPort, cfg.HTTPSPort, cfg.CoTPort, cfg.SSLCoTPort, cfg.EnrollPort = 0, 0, 0, 0, 0, 0
	cfg.UDPPort, cfg.FederationPort = 0, 0 // federation with no trust: opened on demand, never here
	cfg.Finish()
	a := appliance.New(cfg, testkit.Discard())
	if err := a.Open(context.Background()); err != nil {
		t.Fatal(err)
	}
	addr := func(name string) string {
		if l := a.Addrs()[name]; l != nil {
			return l.String()
		}
		t.Fatalf("%s not bound: %v", name, a.Addrs())
		return ""
	}
	token, err := os.ReadFile(filepath.Join(cfg.DataDir, admin.AdminTokenFile))
	if err != nil {
		t.Fatal(err)
	}
	pool := x509.NewCertPool()
	pool.AddCert(a.Authority().CACert())
	cc, err := a.Authority().IssueClient("leaky")
	if err != nil {
		t.Fatal(err)
	}
	cert, err := tls.X509KeyPair(cc.CertPEM, cc.KeyPEM)
	if err != nil {
		t.Fatal(err)
	}
	withCert := &tls.Config{RootCAs: pool, ServerName: "127.0.0.1", Certificates: []tls.Certificate{cert}}

	// The HTTP listeners: management (with a token), client API on 8080
	// and on 8443, enrollment (a refusal is enough: it was served).
	tr := &http.Transport{TLSClientConfig: withCert}
	hc := &http.Client{Timeout: 10 * time.Second, Transport: tr}
	for _, c := range []struct{ url, token string }{
		{"http://" + addr(netx.ListenerREST) + "/api/server", strings.TrimSpace(string(token))},
		{"http://" + addr(netx.ListenerHTTP) + "/Marti/api/version", ""},
		{"https://" + addr(netx.ListenerHTTPS) + "/Marti/api/version", ""},
		{"https://" + addr(netx.ListenerEnroll) + "/Marti/api/tls/config", ""},
	} {
		req, _ := http.NewRequest(http.MethodGet, c.url, nil)
		if c.token != "" {
			req.Header.Set("Authorization", "Bearer "+c.token)
		}
		resp, err := hc.Do(req)
		if err != nil {
			t.Fatalf("GET %s: %v", c.url, err)
		}
		resp.Body.Close()
	}
	tr.CloseIdleConnections()

	// The CoT listeners: a TCP and a TLS client see each other, and a
	// datagram on the UDP input reaches them.
	tcp, err := takclient.Dial(addr(netx.ListenerCoTTCP), nil)
	if err != nil {
		t.Fatal(err)
	}
	tlsc, err := takclient.Dial(addr(netx.ListenerCoTTLS), withCert)
	if err != nil {
		t.Fatal(err)
	}
	if err := tcp.Send(takclient.SA("leak-tcp", "TCP", 1, 2)); err != nil {
		t.Fatal(err)
	}
	if _, err := tlsc.WaitFor(func(e *cot.Event) bool { return e.UID == "leak-tcp" }, 10*time.Second); err != nil {
		t.Fatalf("TLS client: %v", err)
	}
	udp, err := net.Dial("udp", addr(mesh.InputListenerName))
	if err != nil {
		t.Fatal(err)
	}
	xml := takclient.SA("leak-udp", "UDP", 3, 4).AppendXML(nil)
	if _, err := udp.Write(xml); err != nil {
		t.Fatal(err)
	}
	udp.Close()
	if _, err := tcp.WaitFor(func(e *cot.Event) bool { return e.UID == "leak-udp" }, 10*time.Second); err != nil {
		t.Fatalf("TCP client: %v", err)
	}

	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	if err := a.Close(ctx); err != nil {
		t.Fatal(err)
	}
	tcp.Close()
	tlsc.Close()
	<-tcp.Done()
	<-tlsc.Done()
	goleak.VerifyNone(t, before)
}
