package pki

import (
	"bytes"
	"crypto/x509"
	"encoding/json"
	"encoding/pem"
	"math/big"
	"os"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

func readCRLFile(t *testing.T, a *Authority) crlJSON {
	t.Helper()
	data, err := os.ReadFile(a.cfg.CRLFile)
	if err != nil {
		t.Fatal(err)
	}
	var f crlJSON
	if err := json.Unmarshal(data, &f); err != nil {
		t.Fatalf("crl.json: %v\n%s", err, data)
	}
	return f
}

func TestCRLJSONRoundTrip(t *testing.T) {
	cfg := testConfig(t, "")
	now := time.Date(2026, 3, 4, 5, 6, 7, 0, time.UTC)
	cfg.Now = func() time.Time { return now }
	a := openTest(t, cfg)
	if f := readCRLFile(t, a); len(f.Revoked) != 0 {
		t.Fatalf("fresh list has %d entries", len(f.Revoked))
	}
	serial, _ := new(big.Int).SetString("123456789012345678901234567890", 10)
	if err := a.Revoke(serial, "key_compromise"); err != nil {
		t.Fatal(err)
	}
	if err := a.Revoke(serial, "superseded"); err != nil { // again: no change, no error
		t.Fatal(err)
	}
	f := readCRLFile(t, a)
	want := crlJSONEntry{SerialNumber: "123456789012345678901234567890", RevocationDate: "2026-03-04T05:06:07Z", Reason: "key_compromise"}
	if len(f.Revoked) != 1 || f.Revoked[0] != want {
		t.Fatalf("file entries %+v, want [%+v]", f.Revoked, want)
	}
	b := openTest(t, cfg)
	if !b.IsRevoked(serial) || b.IsRevoked(big.NewInt(7)) {
		t.Fatal("a new Authority does not load the revocation")
	}
	revs := b.Revocations()
	if len(revs) != 1 || revs[0].Reason != "key_compromise" || !revs[0].Date.Equal(now) {
		t.Fatalf("Revocations = %+v", revs)
	}
}

func TestCRLSerialFormats(t *testing.T) {
	a := newTestAuthority(t)
	body := `{"revoked_certificates":[
	  {"serial_number":"4096","revocation_date":"2025-01-01T00:00:00Z","reason":"unspecified"},
	  {"serial_number":"0x1F2e","revocation_date":"2025-01-01T00:00:00.123Z","reason":"superseded"},
	  {"serial_number":"01:00:ff","revocation_date":"2025-01-01 00:00:00","reason":"affiliation_changed"},
	  {"serial_number":"abc","revocation_date":"2025-01-01T00:00:00+02:00","reason":"privilege_withdrawn"},
	  {"serial_number":"77","revocation_date":"yesterday","reason":"made_up_reason"}
	], "extra": true}`
	if err := os.WriteFile(a.cfg.CRLFile, []byte(body), 0o644); err != nil {
		t.Fatal(err)
	}
	changed, err := a.ReloadCRL()
	if err != nil || !changed {
		t.Fatalf("ReloadCRL = %v, %v", changed, err)
	}
	for _, tc := range []struct {
		name   string
		serial int64
		want   bool
	}{
		{"decimal", 4096, true},
		{"0x hex", 0x1f2e, true},
		{"colon hex", 0x0100ff, true},
		{"bare hex with letters", 0xabc, true},
		{"unknown reason and bad date still enforced", 77, true},
		{"decimal 4096 is not read as hex", 0x4096, false},
	} {
		if got := a.IsRevoked(big.NewInt(tc.serial)); got != tc.want {
			t.Errorf("%s: IsRevoked(%d) = %v", tc.name, tc.serial, got)
		}
	}
	// Revoking on top keeps the operator's entries as written.
	if err := a.Revoke(big.NewInt(5), "unspecified"); err != nil {
		t.Fatal(err)
	}
	f := readCRLFile(t, a)
	if len(f.Revoked) != 6 || f.Revoked[1].SerialNumber != "0x1F2e" || f.Revoked[5].SerialNumber != "5" {
		t.Fatalf("entries after Revoke: %+v", f.Revoked)
	}
}

func TestRevokeRejectsBadInput(t *testing.T) {
	a := newTestAuthority(t)
	before, _ := os.ReadFile(a.cfg.CRLFile)
	tests := []struct {
		name   string
		serial *big.Int
		reason string
	}{
		{"unknown reason", big.NewInt(10), "because"},
		{"empty reason", big.NewInt(10), ""},
		{"reason in wrong case", big.NewInt(10), "Key_Compromise"},
		{"zero serial", big.NewInt(0), "unspecified"},
		{"negative serial", big.NewInt(-3), "unspecified"},
		{"nil serial", nil, "unspecified"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if err := a.Revoke(tc.serial, tc.reason); err == nil {
				t.Fatal("no error")
			}
			after, _ := os.ReadFile(a.cfg.CRLFile)
			if !bytes.Equal(before, after) {
				t.Fatal("the file changed")
			}
		})
	}
	if _, err := a.RevokeName("x", "nope"); err == nil {
		t.Error("RevokeName accepted an unknown reason")
	}
	for _, r := range Reasons {
		if err := checkReason(r); err != nil {
			t.Errorf("spec reason %q refused: %v", r, err)
		}
	}
}

func TestReloadMalformedKeepsPrevious(t *testing.T) {
	tests := []struct{ name, body string }{
		{"not JSON", "{oops"},
		{"empty", ""},
		{"array", "[]"},
		{"bad serial", `{"revoked_certificates":[{"serial_number":"-5","revocation_date":"2025-01-01T00:00:00Z","reason":"unspecified"}]}`},
		{"serial not a string", `{"revoked_certificates":[{"serial_number":5}]}`},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			a := newTestAuthority(t)
			if err := a.Revoke(big.NewInt(42), "key_compromise"); err != nil {
				t.Fatal(err)
			}
			var fired atomic.Int32
			defer a.OnRevocation(func() { fired.Add(1) })()
			if err := os.WriteFile(a.cfg.CRLFile, []byte(tc.body), 0o644); err != nil {
				t.Fatal(err)
			}
			changed, err := a.ReloadCRL()
			if err == nil || changed {
				t.Fatalf("ReloadCRL = %v, %v; want an error and no change", changed, err)
			}
			if !a.IsRevoked(big.NewInt(42)) {
				t.Fatal("the previous revocation was dropped")
			}
			if err := a.Revoke(big.NewInt(43), "unspecified"); err == nil || !strings.Contains(err.Error(), "malformed") {
				t.Fatalf("Revoke over a malformed file: %v", err)
			}
			if got, _ := os.ReadFile(a.cfg.CRLFile); string(got) != tc.body {
				t.Fatal("Revoke overwrote the malformed file")
			}
			if fired.Load() != 0 {
				t.Error("OnRevocation fired")
			}
		})
	}
}

func TestCRLPEMVerifies(t *testing.T) {
	for _, kt := range []string{KeyTypeRSA, KeyTypeECDSAP256} {
		t.Run(kt, func(t *testing.T) {
			cfg := testConfig(t, "")
			cfg.KeyType = kt
			a := openTest(t, cfg)
			if err := a.Revoke(big.NewInt(1001), "key_compromise"); err != nil {
				t.Fatal(err)
			}
			if err := a.Revoke(big.NewInt(1002), "privilege_withdrawn"); err != nil {
				t.Fatal(err)
			}
			fromCall, err := a.CRLPEM()
			if err != nil {
				t.Fatal(err)
			}
			onDisk, err := os.ReadFile(a.CRLPEMFile())
			if err != nil {
				t.Fatal(err)
			}
			for name, data := range map[string][]byte{"CRLPEM": fromCall, "crl.pem": onDisk} {
				block, _ := pem.Decode(data)
				if block == nil || block.Type != "X509 CRL" {
					t.Fatalf("%s: no X509 CRL block", name)
				}
				rl, err := x509.ParseRevocationList(block.Bytes)
				if err != nil {
					t.Fatalf("%s: %v", name, err)
				}
				if err := rl.CheckSignatureFrom(a.CACert()); err != nil {
					t.Fatalf("%s: signature: %v", name, err)
				}
				codes := map[int64]int{}
				for _, e := range rl.RevokedCertificateEntries {
					codes[e.SerialNumber.Int64()] = e.ReasonCode
				}
				if len(codes) != 2 || codes[1001] != 1 || codes[1002] != 9 {
					t.Fatalf("%s: entries %v", name, codes)
				}
			}
		})
	}
}

func TestRevokeName(t *testing.T) {
	a := newTestAuthority(t)
	a1 := issue(t, a, "alice")
	a2 := issue(t, a, "alice")
	csr := makeCSR(t, "anything")
	a3, err := a.SignCSR(csr, "alice")
	if err != nil {
		t.Fatal(err)
	}
	bob := issue(t, a, "bob")
	n, err := a.RevokeName("alice", "affiliation_changed")
	if err != nil || n != 3 {
		t.Fatalf("RevokeName = %d, %v; want 3", n, err)
	}
	for _, s := range []*big.Int{a1.Cert.SerialNumber, a2.Cert.SerialNumber, a3.SerialNumber} {
		if !a.IsRevoked(s) {
			t.Errorf("serial %s not revoked", s)
		}
	}
	if a.IsRevoked(bob.Cert.SerialNumber) {
		t.Error("bob was revoked too")
	}
	if n, err := a.RevokeName("alice", "affiliation_changed"); n != 0 || err != nil {
		t.Errorf("second RevokeName = %d, %v", n, err)
	}
	if n, err := a.RevokeName("nobody", "unspecified"); n != 0 || err != nil {
		t.Errorf("RevokeName(nobody) = %d, %v", n, err)
	}
	if n, err := a.RevokeName(a.ServerName(), "unspecified"); n != 0 || err != nil || a.IsRevoked(a.ServerCertificate().Leaf.SerialNumber) {
		t.Errorf("revoking the server's name touched the server certificate (%d, %v)", n, err)
	}
	list, err := a.Issued("alice")
	if err != nil || len(list) != 3 {
		t.Fatalf("Issued(alice) = %d entries, %v", len(list), err)
	}
	for _, ic := range list {
		if !ic.Revoked || ic.Name != "alice" || ic.NotAfter.IsZero() {
			t.Errorf("Issued entry %+v", ic)
		}
	}
}

func TestParseSerial(t *testing.T) {
	tests := []struct {
		in   string
		want int64
		ok   bool
	}{
		{"10", 10, true}, {" 10 ", 10, true}, {"0x10", 16, true}, {"0X10", 16, true},
		{"0a", 10, true}, {"01:02", 258, true}, {"", 0, false}, {"0", 0, false},
		{"-1", 0, false}, {"xyz", 0, false}, {"0x", 0, false}, {strings.Repeat("9", 200), 0, false},
	}
	for _, tc := range tests {
		n, err := parseSerial(tc.in)
		if (err == nil) != tc.ok || (tc.ok && n.Int64() != tc.want) {
			t.Errorf("parseSerial(%q) = %v, %v", tc.in, n, err)
		}
	}
}

// Two instances on one directory (server and CLI) revoking and issuing at the
// same time lose nothing: the lock file plus re-read-modify-write keeps both.
func TestConcurrentInstancesKeepEveryChange(t *testing.T) {
	cfg := testConfig(t, "")
	insts := []*Authority{openTest(t, cfg), openTest(t, cfg)}
	const perInstance = 10
	var wg sync.WaitGroup
	errs := make(chan error, 2*2*perInstance)
	for i, a := range insts {
		for j := range perInstance {
			wg.Go(func() {
				errs <- a.Revoke(big.NewInt(int64(1000*(i+1)+j)), "superseded")
			})
			wg.Go(func() {
				_, err := a.IssueClient("user" + strconv.Itoa(i))
				errs <- err
			})
		}
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		if err != nil {
			t.Fatal(err)
		}
	}
	if f := readCRLFile(t, insts[0]); len(f.Revoked) != 2*perInstance {
		t.Fatalf("crl.json holds %d entries, want %d", len(f.Revoked), 2*perInstance)
	}
	if list, err := insts[0].Issued(""); err != nil || len(list) != 2*perInstance {
		t.Fatalf("issued.json holds %d entries (%v), want %d", len(list), err, 2*perInstance)
	}
	fresh := openTest(t, cfg)
	for i := range 2 {
		for j := range perInstance {
			if !fresh.IsRevoked(big.NewInt(int64(1000*(i+1) + j))) {
				t.Fatalf("serial %d lost", 1000*(i+1)+j)
			}
		}
	}
}
