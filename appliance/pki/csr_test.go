package pki

import (
	"crypto"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/rsa"
	"crypto/x509"
	"crypto/x509/pkix"
	"slices"
	"testing"
)

func makeCSRWithKey(t *testing.T, cn string, key crypto.Signer) *x509.CertificateRequest {
	t.Helper()
	der, err := x509.CreateCertificateRequest(rand.Reader, &x509.CertificateRequest{
		Subject: pkix.Name{CommonName: cn, Organization: []string{"TAK"}, OrganizationalUnit: []string{"Unit"}},
	}, key)
	if err != nil {
		t.Fatal(err)
	}
	csr, err := x509.ParseCertificateRequest(der)
	if err != nil {
		t.Fatal(err)
	}
	return csr
}

func makeCSR(t *testing.T, cn string) *x509.CertificateRequest {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	return makeCSRWithKey(t, cn, key)
}

func TestSignCSR(t *testing.T) {
	a := newTestAuthority(t)
	rsaKey, err := rsa.GenerateKey(rand.Reader, 2048)
	if err != nil {
		t.Fatal(err)
	}
	weakKey, err := rsa.GenerateKey(rand.Reader, 1024) //nolint:gosec // the test wants a weak key refused
	if err != nil {
		t.Fatal(err)
	}
	tampered := makeCSR(t, "ivan")
	tampered.Signature = slices.Clone(tampered.Signature)
	tampered.Signature[len(tampered.Signature)-1] ^= 0xff
	p384, _ := ecdsa.GenerateKey(elliptic.P384(), rand.Reader)

	tests := []struct {
		name string
		csr  *x509.CertificateRequest
		user string
		ok   bool
	}{
		{"ECDSA P-256, CN forced", makeCSR(t, "somebody-else"), "ivan", true},
		{"ECDSA P-384", makeCSRWithKey(t, "x", p384), "ivan", true},
		{"RSA 2048", makeCSRWithKey(t, "ivan", rsaKey), "ivan", true},
		{"e-mail style user name", makeCSR(t, "x"), "ivan@example.org", true},
		{"bad signature", tampered, "ivan", false},
		{"RSA 1024", makeCSRWithKey(t, "ivan", weakKey), "ivan", false},
		{"nil CSR", nil, "ivan", false},
		{"empty name", makeCSR(t, "x"), "", false},
		{"control character in name", makeCSR(t, "x"), "iv\x00an", false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			cert, err := a.SignCSR(tc.csr, tc.user)
			if !tc.ok {
				if err == nil {
					t.Fatal("signed")
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if cert.Subject.CommonName != tc.user || len(cert.Subject.Organization) != 0 || len(cert.Subject.OrganizationalUnit) != 0 {
				t.Errorf("subject %v, want only CN=%s", cert.Subject, tc.user)
			}
			if !slices.Equal(cert.ExtKeyUsage, []x509.ExtKeyUsage{x509.ExtKeyUsageClientAuth}) || cert.KeyUsage&x509.KeyUsageDigitalSignature == 0 {
				t.Errorf("EKU %v KU %v", cert.ExtKeyUsage, cert.KeyUsage)
			}
			if _, err := cert.Verify(x509.VerifyOptions{Roots: poolOf(a), KeyUsages: []x509.ExtKeyUsage{x509.ExtKeyUsageClientAuth}}); err != nil {
				t.Errorf("does not verify as a client certificate: %v", err)
			}
			if cert.NotAfter.Sub(cert.NotBefore) > DefaultClientValidity+2*backdate {
				t.Errorf("validity %v", cert.NotAfter.Sub(cert.NotBefore))
			}
			if list, _ := a.Issued(tc.user); len(list) == 0 || list[len(list)-1].Kind != "enrollment" {
				t.Errorf("not recorded in the issuance index: %+v", list)
			}
		})
	}
}

func TestIssueClientProfile(t *testing.T) {
	for _, kt := range []string{KeyTypeRSA, KeyTypeECDSAP256} {
		t.Run(kt, func(t *testing.T) {
			cfg := testConfig(t, "")
			cfg.KeyType = kt
			a := openTest(t, cfg)
			cc := issue(t, a, "judy")
			want := x509.KeyUsageDigitalSignature
			if kt == KeyTypeRSA {
				want |= x509.KeyUsageKeyEncipherment
			}
			if cc.Cert.KeyUsage != want || !slices.Equal(cc.Cert.ExtKeyUsage, []x509.ExtKeyUsage{x509.ExtKeyUsageClientAuth}) {
				t.Errorf("KU %v EKU %v", cc.Cert.KeyUsage, cc.Cert.ExtKeyUsage)
			}
			if cc.Cert.IsCA || cc.Cert.Subject.CommonName != "judy" {
				t.Errorf("IsCA %v CN %q", cc.Cert.IsCA, cc.Cert.Subject.CommonName)
			}
			if !publicKeysEqual(cc.Cert, cc.Key) || len(cc.CertPEM) == 0 || len(cc.KeyPEM) == 0 {
				t.Error("key, PEMs or P12 inconsistent")
			}
			checkClientP12(t, a, cc.P12, "judy")
			other := issue(t, a, "judy")
			if other.Cert.SerialNumber.Cmp(cc.Cert.SerialNumber) == 0 {
				t.Error("two certificates share a serial number")
			}
		})
	}
}
