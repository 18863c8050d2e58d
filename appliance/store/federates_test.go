package store

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"errors"
	"math/big"
	"strings"
	"testing"
	"time"
)

func testCAPEM(t *testing.T, isCA bool) string {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{SerialNumber: big.NewInt(7), Subject: pkix.Name{CommonName: "fed ca"},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour), BasicConstraintsValid: true, IsCA: isCA}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	return string(pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}))
}

func TestFederates(t *testing.T) {
	s := openTest(t, Options{})
	ctx := context.Background()
	fs := s.Federates()
	if list, err := fs.List(ctx); err != nil || len(list) != 0 {
		t.Fatalf("empty table: %v %v", list, err)
	}
	ca := testCAPEM(t, true)
	if err := fs.Add(ctx, Federate{Name: "bravo", Address: "10.0.0.2:9001", Enabled: true}); err != nil {
		t.Fatal(err)
	}
	if err := fs.Add(ctx, Federate{Name: "bravo"}); !errors.Is(err, ErrConflict) {
		t.Fatalf("second bravo: %v", err)
	}
	if err := fs.Trust(ctx, "bravo", ca); err != nil {
		t.Fatal(err)
	}
	if err := fs.Add(ctx, Federate{Name: "alpha", CAPEM: ca, Enabled: true}); err != nil {
		t.Fatal(err)
	}
	list, err := fs.List(ctx)
	if err != nil || len(list) != 2 || list[0].Name != "alpha" || list[1].Address != "10.0.0.2:9001" || list[1].CAPEM != ca || !list[1].Enabled || list[1].Created.IsZero() {
		t.Fatalf("list %+v %v", list, err)
	}
	if err := fs.Delete(ctx, "alpha"); err != nil {
		t.Fatal(err)
	}
	if err := fs.Delete(ctx, "alpha"); !errors.Is(err, ErrNotFound) {
		t.Fatalf("second delete: %v", err)
	}
	if err := fs.Trust(ctx, "nobody", ca); !errors.Is(err, ErrNotFound) {
		t.Fatalf("trust of nobody: %v", err)
	}
	for name, f := range map[string]Federate{
		"no name":     {},
		"bad name":    {Name: "a b"},
		"long name":   {Name: string(make([]byte, 65))},
		"no port":     {Name: "x", Address: "10.0.0.2"},
		"bad port":    {Name: "x", Address: "10.0.0.2:99999"},
		"not pem":     {Name: "x", CAPEM: "hello"},
		"not a CA":    {Name: "x", CAPEM: testCAPEM(t, false)},
		"private key": {Name: "x", CAPEM: "-----BEGIN PRIVATE KEY-----\nAAAA\n-----END PRIVATE KEY-----\n"},
	} {
		if err := fs.Add(ctx, f); !errors.Is(err, ErrInvalid) {
			t.Errorf("%s: %v", name, err)
		}
	}
	if err := fs.Trust(ctx, "bravo", "junk"); !errors.Is(err, ErrInvalid) {
		t.Fatalf("junk trust: %v", err)
	}
	if list, _ := fs.List(ctx); len(list) != 1 || list[0].CAPEM != ca {
		t.Fatalf("bad input changed the table: %+v", list)
	}
}

// TestFederateUpdate: a federate's address, enabled flag, pin and back-off
// change in place; a bad value or an unknown name changes nothing.
func TestFederateUpdate(t *testing.T) {
	s := openTest(t, Options{})
	ctx := context.Background()
	fs := s.Federates()
	pin := "ab" + strings.Repeat(":cd", 31)
	if err := fs.Add(ctx, Federate{Name: "bravo", Address: "10.0.0.2:9001", Enabled: true, Pin: strings.ReplaceAll(pin, ":", ""),
		BackoffMin: 2 * time.Second, BackoffMax: time.Minute}); err != nil {
		t.Fatal(err)
	}
	list, err := fs.List(ctx)
	if err != nil || len(list) != 1 || list[0].Pin != strings.ToUpper(pin) || list[0].BackoffMin != 2*time.Second || list[0].BackoffMax != time.Minute {
		t.Fatalf("stored %+v %v", list, err)
	}
	off, addr, none, lo, hi := false, "bravo.example:9101", "", 500*time.Millisecond, 10*time.Second
	got, err := fs.Update(ctx, "bravo", FederatePatch{Enabled: &off, Address: &addr, Pin: &none, BackoffMin: &lo, BackoffMax: &hi})
	if err != nil || got.Enabled || got.Address != addr || got.Pin != "" || got.BackoffMin != lo || got.BackoffMax != hi {
		t.Fatalf("update: %+v %v", got, err)
	}
	bad, short, long, zero := "zz", time.Millisecond, 48*time.Hour, time.Duration(0)
	badAddr := "no-port"
	for _, tc := range []struct {
		what string
		name string
		p    FederatePatch
		want error
	}{
		{"bad pin", "bravo", FederatePatch{Pin: &bad}, ErrInvalid},
		{"back-off too short", "bravo", FederatePatch{BackoffMin: &short}, ErrInvalid},
		{"back-off too long", "bravo", FederatePatch{BackoffMax: &long}, ErrInvalid},
		{"max below min", "bravo", FederatePatch{BackoffMin: &hi, BackoffMax: &lo}, ErrInvalid},
		{"bad address", "bravo", FederatePatch{Address: &badAddr, Enabled: &off}, ErrInvalid},
		{"nobody", "nobody", FederatePatch{BackoffMax: &zero}, ErrNotFound},
	} {
		if _, err := fs.Update(ctx, tc.name, tc.p); !errors.Is(err, tc.want) {
			t.Errorf("%s: %v, want %v", tc.what, err, tc.want)
		}
	}
	if list, _ := fs.List(ctx); len(list) != 1 || list[0].Address != addr || list[0].BackoffMin != lo || list[0].BackoffMax != hi || list[0].Enabled {
		t.Fatalf("refused updates changed %+v", list)
	}
	if err := fs.Add(ctx, Federate{Name: "charlie", Pin: "12"}); !errors.Is(err, ErrInvalid) {
		t.Fatalf("add with a bad pin: %v", err)
	}
}

// TestFederateProtocol: a federate's protocol is v2 unless set to v1, kept
// through Add, Update and List; any other value is refused and changes
// nothing.
func TestFederateProtocol(t *testing.T) {
	s := openTest(t, Options{})
	ctx := context.Background()
	fs := s.Federates()
	if err := fs.Add(ctx, Federate{Name: "alpha", Address: "10.0.0.1:9001", Enabled: true}); err != nil {
		t.Fatal(err)
	}
	if err := fs.Add(ctx, Federate{Name: "bravo", Address: "10.0.0.2:9000", Enabled: true, Protocol: FederateV1}); err != nil {
		t.Fatal(err)
	}
	for _, bad := range []string{"v3", "V1", "grpc", " v1", strings.Repeat("v", 300)} {
		if err := fs.Add(ctx, Federate{Name: "charlie", Protocol: bad}); !errors.Is(err, ErrInvalid) {
			t.Errorf("add with protocol %.10q: %v", bad, err)
		}
		if _, err := fs.Update(ctx, "bravo", FederatePatch{Protocol: &bad}); !errors.Is(err, ErrInvalid) {
			t.Errorf("update to protocol %.10q: %v", bad, err)
		}
	}
	list, err := fs.List(ctx)
	if err != nil || len(list) != 2 || list[0].Protocol != FederateV2 || list[1].Protocol != FederateV1 {
		t.Fatalf("stored %+v %v", list, err)
	}
	v2, empty := FederateV2, ""
	got, err := fs.Update(ctx, "bravo", FederatePatch{Protocol: &v2})
	if err != nil || got.Protocol != FederateV2 || got.Address != "10.0.0.2:9000" {
		t.Fatalf("update to v2: %+v %v", got, err)
	}
	v1 := FederateV1
	if got, err := fs.Update(ctx, "alpha", FederatePatch{Protocol: &v1}); err != nil || got.Protocol != FederateV1 {
		t.Fatalf("update to v1: %+v %v", got, err)
	}
	if got, err := fs.Update(ctx, "alpha", FederatePatch{Protocol: &empty}); err != nil || got.Protocol != FederateV2 {
		t.Fatalf("update to the default: %+v %v", got, err)
	}
	if _, err := fs.Update(ctx, "bravo", FederatePatch{Protocol: &v1}); err != nil {
		t.Fatal(err)
	}
	list, err = fs.List(ctx)
	if err != nil || len(list) != 2 || list[0].Protocol != FederateV2 || list[1].Protocol != FederateV1 {
		t.Fatalf("after updates %+v %v", list, err)
	}
}
