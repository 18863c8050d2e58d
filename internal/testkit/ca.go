package testkit

import (
	"crypto"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"math/big"
	"os"
	"path/filepath"
	"testing"
	"time"
)

// CA is a certificate authority made by a test: an organisation's root or an
// intermediate, for `outpost ca import`.
type CA struct {
	Cert *x509.Certificate
	Key  crypto.Signer
}

// CAOptions vary MakeCA's certificate; zero values take the defaults.
type CAOptions struct {
	Key                 crypto.Signer // default: a new ECDSA P-256 key
	NotBefore, NotAfter time.Time     // default: an hour ago, ten years on
	NotCA               bool          // basicConstraints CA:FALSE
	KeyUsage            x509.KeyUsage // default: certSign | crlSign
}

// MakeCA makes a CA certificate named cn, signed by parent (nil: a
// self-signed root).
func MakeCA(t testing.TB, cn string, parent *CA, o CAOptions) CA {
	t.Helper()
	key := o.Key
	if key == nil {
		k, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
		if err != nil {
			t.Fatal(err)
		}
		key = k
	}
	if o.NotBefore.IsZero() {
		o.NotBefore = time.Now().Add(-time.Hour)
	}
	if o.NotAfter.IsZero() {
		o.NotAfter = time.Now().Add(10 * 365 * 24 * time.Hour)
	}
	if o.KeyUsage == 0 {
		o.KeyUsage = x509.KeyUsageCertSign | x509.KeyUsageCRLSign
	}
	serial, err := rand.Int(rand.Reader, big.NewInt(1<<62))
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{
		SerialNumber: serial, Subject: pkix.Name{CommonName: cn, Organization: []string{"Example Org"}},
		NotBefore: o.NotBefore, NotAfter: o.NotAfter, KeyUsage: o.KeyUsage,
		BasicConstraintsValid: true, IsCA: !o.NotCA,
	}
	issuer, signer := tmpl, key
	if parent != nil {
		issuer, signer = parent.Cert, parent.Key
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, issuer, key.Public(), signer)
	if err != nil {
		t.Fatal(err)
	}
	cert, err := x509.ParseCertificate(der)
	if err != nil {
		t.Fatal(err)
	}
	return CA{cert, key}
}

// CertPEM is the certificate as PEM.
func (c CA) CertPEM() []byte {
	return pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: c.Cert.Raw})
}

// KeyPEM is the key as unencrypted PKCS#8 PEM.
func (c CA) KeyPEM(t testing.TB) []byte {
	t.Helper()
	der, err := x509.MarshalPKCS8PrivateKey(c.Key)
	if err != nil {
		t.Fatal(err)
	}
	return pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: der})
}

// WriteFiles writes NAME.pem and NAME.key into dir and returns their paths.
func (c CA) WriteFiles(t testing.TB, dir, name string) (certFile, keyFile string) {
	t.Helper()
	certFile, keyFile = filepath.Join(dir, name+".pem"), filepath.Join(dir, name+".key")
	if err := os.WriteFile(certFile, c.CertPEM(), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(keyFile, c.KeyPEM(t), 0o600); err != nil {
		t.Fatal(err)
	}
	return certFile, keyFile
}
