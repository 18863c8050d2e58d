// Package apptest runs a real appliance in-process for end-to-end tests: a
// real data directory (SQLite file, certificates), every listener on a free
// port of 127.0.0.1, and the clients a test needs to reach it (HTTP, HTTPS
// with a client certificate, TAK clients over TCP and TLS).
//
// It is imported by test files only (the import-rule test enforces that).
// Tests of package appliance itself cannot import it (a cycle); they live in
// the external test package appliance_test, or beside the transport they
// exercise (package mgmt_test, marti_test, ...).
package apptest

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"log/slog"
	"net/http"
	"testing"
	"time"

	"outpost/appliance"
	"outpost/appliance/config"
	"outpost/appliance/netx"
	"outpost/appliance/takclient"
	"outpost/internal/testkit"
)

// App is a running appliance and the configuration it runs with.
type App struct {
	*appliance.Appliance
	Cfg config.Config
}

// Start opens an appliance on free ports of 127.0.0.1 with a fresh data
// directory; mutate may change the configuration first. ECDSA keys keep
// certificate generation fast (the binary tests use the RSA default). The
// appliance is closed when the test ends, and a close error fails it.
func Start(t testing.TB, mutate func(*config.Config)) *App {
	t.Helper()
	return StartWithLog(t, mutate, testkit.Discard())
}

// StartWithLog is Start with the appliance's log lines going to log (tests
// that check what is logged, e.g. that a credential never is).
func StartWithLog(t testing.TB, mutate func(*config.Config), log *slog.Logger) *App {
	t.Helper()
	cfg := config.Defaults()
	cfg.DataDir = t.TempDir()
	cfg.Bind = "127.0.0.1"
	cfg.PublicHost = "127.0.0.1"
	cfg.KeyType = "ecdsa-p256"
	cfg.RESTPort, cfg.HTTPPort, cfg.HTTPSPort, cfg.CoTPort, cfg.SSLCoTPort, cfg.EnrollPort = 0, 0, 0, 0, 0, 0
	if mutate != nil {
		mutate(&cfg)
	}
	cfg.Finish()
	if err := cfg.Validate(); err != nil {
		t.Fatal(err)
	}
	a := appliance.New(cfg, log)
	if err := a.Open(context.Background()); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		if err := a.Close(ctx); err != nil {
			t.Errorf("close: %v", err)
		}
	})
	// Open filled in the generated secrets: keep the configuration it runs with.
	return &App{Appliance: a, Cfg: a.Config()}
}

// Addr is a listener's bound address ("rest", "http", "https", "cot-tcp",
// "cot-tls", "enroll"), or fails the test.
func (a *App) Addr(t testing.TB, listener string) string {
	t.Helper()
	addr := a.Addrs()[listener]
	if addr == nil {
		t.Fatalf("listener %s not bound: %v", listener, a.Addrs())
	}
	return addr.String()
}

// URL is "http://<addr of listener><path>" (https for the TLS listeners).
func (a *App) URL(t testing.TB, listener, path string) string {
	t.Helper()
	scheme := "http"
	if listener == netx.ListenerHTTPS || listener == netx.ListenerEnroll {
		scheme = "https"
	}
	return scheme + "://" + a.Addr(t, listener) + path
}

// Issue issues a client certificate for name.
func (a *App) Issue(t testing.TB, name string) *tls.Certificate {
	t.Helper()
	cc, err := a.Authority().IssueClient(name)
	if err != nil {
		t.Fatal(err)
	}
	c, err := tls.X509KeyPair(cc.CertPEM, cc.KeyPEM)
	if err != nil {
		t.Fatal(err)
	}
	return &c
}

// ClientTLS is what a TAK client holds: its certificate (may be nil) and our CA.
func (a *App) ClientTLS(cert *tls.Certificate) *tls.Config {
	pool := x509.NewCertPool()
	pool.AddCert(a.Authority().CACert())
	c := &tls.Config{RootCAs: pool, ServerName: "127.0.0.1"}
	if cert != nil {
		c.Certificates = []tls.Certificate{*cert}
	}
	return c
}

// HTTPSClient is an HTTP client presenting cert on 8443.
func (a *App) HTTPSClient(cert *tls.Certificate) *http.Client {
	return &http.Client{Timeout: 30 * time.Second, Transport: &http.Transport{TLSClientConfig: a.ClientTLS(cert)}}
}

// DialTCP connects a TAK client to the CoT TCP listener; it is closed when
// the test ends.
func (a *App) DialTCP(t testing.TB) *takclient.Client {
	t.Helper()
	c, err := takclient.Dial(a.Addr(t, netx.ListenerCoTTCP), nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	return c
}

// DialTLS connects a TAK client with cert to the CoT TLS listener; it is
// closed when the test ends.
func (a *App) DialTLS(t testing.TB, cert *tls.Certificate) *takclient.Client {
	t.Helper()
	c, err := takclient.Dial(a.Addr(t, netx.ListenerCoTTLS), a.ClientTLS(cert))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	return c
}
