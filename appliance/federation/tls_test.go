package federation

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"math/big"
	"strings"
	"testing"
	"time"

	"outpost/appliance/broker"
)

// testCert makes a certificate signed by parent (self-signed, a CA, when
// parent is nil).
func testCert(t *testing.T, name string, parent *x509.Certificate, parentKey *ecdsa.PrivateKey) (*x509.Certificate, *ecdsa.PrivateKey) {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	serial, _ := rand.Int(rand.Reader, big.NewInt(1<<62))
	tmpl := &x509.Certificate{SerialNumber: serial, Subject: pkix.Name{CommonName: name},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour)}
	signer, signKey := tmpl, key
	if parent == nil {
		tmpl.IsCA, tmpl.BasicConstraintsValid, tmpl.KeyUsage = true, true, x509.KeyUsageCertSign
	} else {
		signer, signKey = parent, parentKey
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, signer, &key.PublicKey, signKey)
	if err != nil {
		t.Fatal(err)
	}
	c, err := x509.ParseCertificate(der)
	if err != nil {
		t.Fatal(err)
	}
	return c, key
}

func caPEM(c *x509.Certificate) string {
	return string(pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: c.Raw}))
}

// A peer's certificate: chained to a trusted CA, and to the pin when there
// is one; a revoked one is refused whatever trusts it; a managed
// federate's CA admits it only with the federate's pin.
func TestPeerCheck(t *testing.T) {
	ca, caKey := testCert(t, "CA", nil, nil)
	other, otherKey := testCert(t, "Other CA", nil, nil)
	good, _ := testCert(t, "good", ca, caKey)
	second, _ := testCert(t, "second", ca, caKey)
	stranger, _ := testCert(t, "stranger", other, otherKey)
	trusted := x509.NewCertPool()
	trusted.AddCert(ca)
	revokedSerial := second.SerialNumber
	revoked := func(c *x509.Certificate) bool { return c.SerialNumber.Cmp(revokedSerial) == 0 }
	raw := func(c *x509.Certificate) [][]byte { return [][]byte{c.Raw} }

	for _, tc := range []struct {
		what string
		pc   peerCheck
		cert *x509.Certificate
		want string // "" let in, else a part of the refusal
	}{
		{"trusted", peerCheck{trusted: trusted, now: time.Now}, good, ""},
		{"untrusted", peerCheck{trusted: trusted, now: time.Now}, stranger, "not trusted"},
		{"pinned", peerCheck{trusted: trusted, now: time.Now, pin: Fingerprint(good.Raw)}, good, ""},
		{"another of the pinned CA", peerCheck{trusted: trusted, now: time.Now, pin: Fingerprint(good.Raw)}, second, "not the pinned one"},
		{"revoked", peerCheck{trusted: trusted, now: time.Now, revoked: revoked}, second, "revoked"},
		{"not revoked", peerCheck{trusted: trusted, now: time.Now, revoked: revoked}, good, ""},
		{"revoked, though a managed CA trusts it", peerCheck{trusted: x509.NewCertPool(), now: time.Now, revoked: revoked,
			managed: func(*x509.Certificate, *x509.CertPool) string { return "m" }}, second, "revoked"},
	} {
		err := tc.pc.verify(raw(tc.cert), nil)
		if (tc.want == "") != (err == nil) || (err != nil && !strings.Contains(err.Error(), tc.want)) {
			t.Errorf("%s: %v, want %q", tc.what, err, tc.want)
		}
	}
	if err := (peerCheck{trusted: trusted, now: time.Now}).verify(nil, nil); err == nil {
		t.Error("no certificate let in")
	}

	// A managed federate with a pin: only the pinned certificate of its CA.
	b := broker.New(broker.Options{})
	t.Cleanup(b.Close)
	f := New(Config{ServerID: "me", Name: "me", Broker: b})
	f.SetManaged([]Managed{{Name: "partner", CAPEM: caPEM(ca), Enabled: true, Pin: Fingerprint(good.Raw)}})
	if got := f.managedFor(good, x509.NewCertPool()); got != "partner" {
		t.Errorf("the pinned certificate: managed %q", got)
	}
	if got := f.managedFor(second, x509.NewCertPool()); got != "" {
		t.Errorf("another certificate of the pinned federate's CA: managed %q", got)
	}
	f.SetManaged([]Managed{{Name: "partner", CAPEM: caPEM(ca), Enabled: true}})
	if got := f.managedFor(second, x509.NewCertPool()); got != "partner" {
		t.Errorf("unpinned: managed %q", got)
	}
	f.SetManaged([]Managed{{Name: "partner", CAPEM: caPEM(ca), Enabled: false}})
	if got := f.managedFor(good, x509.NewCertPool()); got != "" {
		t.Errorf("disabled: managed %q", got)
	}
}

// The on-demand listener opens with the first enabled managed federate
// that has a CA and closes when none is left; without OnDemand, managed
// federates do not move it.
func TestListenerOnDemand(t *testing.T) {
	ca, caKey := testCert(t, "CA", nil, nil)
	leaf, leafKey := testCert(t, "me", ca, caKey)
	cert := tls.Certificate{Certificate: [][]byte{leaf.Raw}, PrivateKey: leafKey}
	b := broker.New(broker.Options{})
	t.Cleanup(b.Close)
	f := New(Config{ServerID: "me", Name: "me", Broker: b, Addr: "127.0.0.1:0", OnDemand: true, Certificate: cert})
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		f.Shutdown(ctx)
	})
	if err := f.Listen(); err != nil {
		t.Fatal(err)
	}
	f.Serve()
	if f.Addr() != nil {
		t.Fatal("on demand: a listener before any federate")
	}
	f.SetManaged([]Managed{{Name: "no-ca", Enabled: true}, {Name: "off", CAPEM: caPEM(ca)}})
	if addr, _ := f.Listening(); addr != "" {
		t.Fatalf("a listener for federates without a CA or disabled: %s", addr)
	}
	f.SetManaged([]Managed{{Name: "partner", CAPEM: caPEM(ca), Enabled: true}})
	addr, _ := f.Listening()
	if addr == "" || f.Addr() == nil {
		t.Fatal("no listener with a trusted managed federate")
	}
	conn, err := tls.Dial("tcp", addr, &tls.Config{InsecureSkipVerify: true, NextProtos: []string{"h2"}, Certificates: []tls.Certificate{cert}})
	if err != nil {
		t.Fatalf("the on-demand listener: %v", err)
	}
	conn.Close()
	f.SetManaged(nil)
	if addr, _ := f.Listening(); addr != "" || f.Addr() != nil {
		t.Fatalf("still listening on %s without a managed federate", addr)
	}
}

// A federate's own back-off replaces the default bounds it sets; the
// longest is never below the first.
func TestBackoffOfFederate(t *testing.T) {
	f := New(Config{ServerID: "me", Name: "me", BackoffMin: time.Second, BackoffMax: time.Minute})
	for _, tc := range []struct {
		o           Outbound
		first, long time.Duration
	}{
		{Outbound{}, time.Second, time.Minute},
		{Outbound{BackoffMin: 5 * time.Second}, 5 * time.Second, time.Minute},
		{Outbound{BackoffMax: 10 * time.Minute}, time.Second, 10 * time.Minute},
		{Outbound{BackoffMin: 200 * time.Millisecond, BackoffMax: 2 * time.Second}, 200 * time.Millisecond, 2 * time.Second},
		{Outbound{BackoffMin: 5 * time.Minute}, 5 * time.Minute, 5 * time.Minute},
	} {
		if first, long := f.backoff(tc.o); first != tc.first || long != tc.long {
			t.Errorf("%+v: %v, %v; want %v, %v", tc.o, first, long, tc.first, tc.long)
		}
	}
}
