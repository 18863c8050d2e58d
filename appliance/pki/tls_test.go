package pki

import (
	"context"
	"crypto/tls"
	"errors"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"outpost/internal/testkit"
)

func TestServerTLSConfigHandshakes(t *testing.T) {
	a := newTestAuthority(t)
	other := newTestAuthority(t)
	good := issue(t, a, "alice")
	foreign := issue(t, other, "mallory")
	expired := signWithValidity(t, a, "old", time.Now().Add(-72*time.Hour), time.Now().Add(-24*time.Hour))
	revoked := issue(t, a, "revoked-user")
	if err := a.Revoke(revoked.Cert.SerialNumber, "key_compromise"); err != nil {
		t.Fatal(err)
	}
	// An authority whose clock is 3 years ahead sees the 2-year client
	// certificates as expired (Config.Now drives tls.Config.Time).
	futureCfg := a.cfg
	futureCfg.Now = func() time.Time { return time.Now().Add(3 * 365 * 24 * time.Hour) }
	future := openTest(t, futureCfg)

	tests := []struct {
		name    string
		server  *Authority
		cert    *ClientCert
		accept  bool
		errPart string // in the server-side error when refused
	}{
		{"own client certificate", a, good, true, ""},
		{"certificate from another CA", a, foreign, false, "unknown authority"},
		{"expired certificate", a, expired, false, "expired"},
		{"expired by the authority's clock", future, good, false, "expired"},
		{"revoked certificate", a, revoked, false, "revoked"},
		{"no certificate", a, nil, false, "certificate"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var cert *tls.Certificate
			if tc.cert != nil {
				cert = tlsCert(tc.cert)
			}
			res := tryHandshake(t, tc.server.ServerTLSConfig(), cert, poolOf(tc.server))
			if tc.accept {
				if res.serverErr != nil || res.clientErr != nil {
					t.Fatalf("refused: server %v, client %v", res.serverErr, res.clientErr)
				}
				name, serial, ok := tc.server.Identity(res.state)
				if !ok || name != tc.cert.Name || serial.Cmp(tc.cert.Cert.SerialNumber) != 0 {
					t.Fatalf("Identity = %q %v %v", name, serial, ok)
				}
				if res.state.Version < tls.VersionTLS12 {
					t.Errorf("negotiated %x", res.state.Version)
				}
				return
			}
			if res.serverErr == nil {
				t.Fatal("server accepted the handshake")
			}
			if res.clientErr == nil {
				t.Error("client did not notice the refusal")
			}
			if !strings.Contains(res.serverErr.Error(), tc.errPart) {
				t.Errorf("server error %q does not mention %q", res.serverErr, tc.errPart)
			}
		})
	}
}

func TestServerTLSConfigRefusesTLS11(t *testing.T) {
	a := newTestAuthority(t)
	for _, cfg := range []*tls.Config{a.ServerTLSConfig(), a.EnrollmentTLSConfig()} {
		if cfg.MinVersion != tls.VersionTLS12 {
			t.Errorf("MinVersion %x", cfg.MinVersion)
		}
	}
	cfg := a.ServerTLSConfig()
	cfg.NextProtos = []string{"h2"} // a copy: must not leak into the next call
	if len(a.ServerTLSConfig().NextProtos) != 0 {
		t.Error("ServerTLSConfig returned a shared config")
	}
}

func TestEnrollmentTLSConfigNeedsNoClientCert(t *testing.T) {
	a := newTestAuthority(t)
	res := tryHandshake(t, a.EnrollmentTLSConfig(), nil, poolOf(a))
	if res.serverErr != nil || res.clientErr != nil {
		t.Fatalf("server %v, client %v", res.serverErr, res.clientErr)
	}
	if _, _, ok := a.Identity(res.state); ok {
		t.Error("Identity reported a user on a connection without a client certificate")
	}
}

// A second Authority on the same directory stands for the `outpost cert` CLI:
// its revocation reaches the server through the JSON file.
func TestRevocationBySecondInstance(t *testing.T) {
	cfg := testConfig(t, "")
	server := openTest(t, cfg)
	cli := openTest(t, cfg)
	cc := issue(t, server, "bob")

	var fired atomic.Int32
	cancel := server.OnRevocation(func() { fired.Add(1) })
	defer cancel()

	if res := tryHandshake(t, server.ServerTLSConfig(), tlsCert(cc), poolOf(server)); res.serverErr != nil {
		t.Fatalf("before revocation: %v", res.serverErr)
	}
	n, err := cli.RevokeName("bob", "privilege_withdrawn")
	if err != nil || n != 1 {
		t.Fatalf("RevokeName = %d, %v", n, err)
	}
	if !cli.IsRevoked(cc.Cert.SerialNumber) {
		t.Fatal("the revoking instance does not see its own revocation")
	}
	if server.IsRevoked(cc.Cert.SerialNumber) || fired.Load() != 0 {
		t.Fatal("server saw the revocation before reloading")
	}
	changed, err := server.ReloadCRL()
	if err != nil || !changed {
		t.Fatalf("ReloadCRL = %v, %v", changed, err)
	}
	if fired.Load() != 1 {
		t.Errorf("OnRevocation fired %d times, want 1", fired.Load())
	}
	res := tryHandshake(t, server.ServerTLSConfig(), tlsCert(cc), poolOf(server))
	if res.serverErr == nil || !errors.Is(res.serverErr, ErrRevoked) {
		t.Fatalf("revoked certificate: server error %v", res.serverErr)
	}
	if changed, err := server.ReloadCRL(); changed || err != nil {
		t.Errorf("second ReloadCRL = %v, %v; want no change", changed, err)
	}
	cancel()
	if err := server.Revoke(issue(t, server, "carol").Cert.SerialNumber, "superseded"); err != nil {
		t.Fatal(err)
	}
	if fired.Load() != 1 {
		t.Error("a cancelled OnRevocation callback still fired")
	}
}

func TestWatchCRLPicksUpOtherProcess(t *testing.T) {
	cfg := testConfig(t, "")
	server := openTest(t, cfg)
	cli := openTest(t, cfg)
	cc := issue(t, cli, "dave")
	fired := make(chan struct{}, 1)
	defer server.OnRevocation(func() {
		select {
		case fired <- struct{}{}:
		default:
		}
	})()
	ctx, stop := context.WithCancel(t.Context())
	done := make(chan struct{})
	go func() { server.WatchCRL(ctx, 10*time.Millisecond); close(done) }()
	if err := cli.Revoke(cc.Cert.SerialNumber, "key_compromise"); err != nil {
		t.Fatal(err)
	}
	testkit.WaitFor(t, "the watcher to load the revocation", func() bool { return server.IsRevoked(cc.Cert.SerialNumber) })
	select {
	case <-fired:
	case <-time.After(15 * time.Second):
		t.Fatal("OnRevocation did not fire")
	}
	stop()
	select {
	case <-done:
	case <-time.After(15 * time.Second):
		t.Fatal("WatchCRL did not return after cancel")
	}
}
