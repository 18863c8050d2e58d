package marti

import (
	"bytes"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/base64"
	"encoding/pem"
	"testing"
)

// FuzzParseCSR: whatever a client sends as the CSR body, parsing never
// panics, every refusal is an error worded for the client (no echo of the
// input), and a CSR that parses has the same content whichever of the
// accepted forms carried it (PEM, base64 without armour, raw DER).
func FuzzParseCSR(f *testing.F) {
	key, _ := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	der, err := x509.CreateCertificateRequest(rand.Reader, &x509.CertificateRequest{Subject: pkix.Name{CommonName: "alice"}}, key)
	if err != nil {
		f.Fatal(err)
	}
	pemCSR := pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE REQUEST", Bytes: der})
	b64 := []byte(base64.StdEncoding.EncodeToString(der))
	for _, seed := range [][]byte{pemCSR, b64, der, b64[:len(b64)-2], []byte("-----BEGIN CERTIFICATE-----\nAAAA\n-----END CERTIFICATE-----"),
		[]byte(""), []byte("   \n"), []byte("not a csr"), bytes.Repeat([]byte("A"), 1000), append([]byte("-----BEGIN"), der...)} {
		f.Add(seed)
	}
	f.Fuzz(func(t *testing.T, body []byte) {
		csr, err := parseCSR(body)
		if err != nil {
			if csr != nil {
				t.Fatal("an error with a CSR")
			}
			if len(err.Error()) > 200 {
				t.Fatalf("error message of %d bytes: it may echo the input", len(err.Error()))
			}
			return
		}
		_ = checkCSR(csr) // must not panic on anything that parsed
		// The same request in the other two forms parses to the same thing.
		raw := csr.Raw
		for _, form := range [][]byte{
			pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE REQUEST", Bytes: raw}),
			[]byte(base64.StdEncoding.EncodeToString(raw)),
		} {
			again, err := parseCSR(form)
			if err != nil || !bytes.Equal(again.Raw, raw) {
				t.Fatalf("a CSR that parsed does not parse the same in another form: %v", err)
			}
		}
	})
}
