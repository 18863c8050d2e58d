package marti

// The documents of certificate enrollment (protocol.md §8): reading the CSR, and the
// certificateConfig, JSON and XML answers. Sources: see enroll.go.

import (
	"bytes"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rsa"
	"crypto/x509"
	"encoding/base64"
	"encoding/json"
	"encoding/pem"
	"encoding/xml"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"strings"

	"outpost/appliance/pki"
)

// readLimited reads the whole body, at most limit bytes (an
// *http.MaxBytesError beyond).
func readLimited(w http.ResponseWriter, r *http.Request, limit int64) ([]byte, error) {
	b, err := io.ReadAll(http.MaxBytesReader(w, r.Body, limit))
	if err != nil {
		return nil, fmt.Errorf("read request body: %w", err)
	}
	return b, nil
}

// parseCSR reads a PKCS#10 request in any of the forms clients send: base64
// DER without armour (ATAK strips the PEM lines, WearTAK sends one line), full
// PEM (iTAK, node-tak, OpenSSL), or raw DER. The Content-Type is not
// consulted: ATAK says application/octet-stream, iOS clients text/plain.
// Errors are the client's fault and worded for the 400 answer.
func parseCSR(body []byte) (*x509.CertificateRequest, error) {
	b := bytes.TrimSpace(body)
	if len(b) == 0 {
		return nil, errors.New("the request body is empty; send the CSR")
	}
	var der []byte
	switch {
	case bytes.Contains(b, []byte("-----BEGIN")):
		block, _ := pem.Decode(b)
		if block == nil {
			return nil, errors.New("the CSR is not valid PEM")
		}
		if block.Type != "CERTIFICATE REQUEST" && block.Type != "NEW CERTIFICATE REQUEST" {
			return nil, fmt.Errorf("the PEM block is %q, not CERTIFICATE REQUEST", block.Type)
		}
		der = block.Bytes
	case isBase64Text(b):
		var err error
		if der, err = decodeBase64(b); err != nil {
			return nil, errors.New("the CSR is not valid base64")
		}
	default:
		der = b // raw DER always holds bytes outside the base64 alphabet
	}
	csr, err := x509.ParseCertificateRequest(der)
	if err != nil {
		return nil, errors.New("the body is not a PKCS#10 certificate signing request")
	}
	return csr, nil
}

// isBase64Text reports whether b holds only the standard base64 alphabet,
// padding and white space.
func isBase64Text(b []byte) bool {
	for _, c := range b {
		switch {
		case c >= 'A' && c <= 'Z', c >= 'a' && c <= 'z', c >= '0' && c <= '9',
			c == '+', c == '/', c == '=', c == ' ', c == '\t', c == '\r', c == '\n':
		default:
			return false
		}
	}
	return true
}

// decodeBase64 decodes standard base64 with any white space, padded or not.
func decodeBase64(b []byte) ([]byte, error) {
	s := strings.Map(func(r rune) rune {
		if r == ' ' || r == '\t' || r == '\r' || r == '\n' {
			return -1
		}
		return r
	}, string(b))
	if strings.HasSuffix(s, "=") || len(s)%4 == 0 {
		return base64.StdEncoding.DecodeString(s)
	}
	return base64.RawStdEncoding.DecodeString(s)
}

// checkCSR applies the key policy of pki.Authority.SignCSR (issue.go) before
// signing, so that a client's bad CSR is a 400 and whatever SignCSR still
// refuses is the server's fault: the signature must verify; RSA keys of 2048
// to 8192 bits, ECDSA on P-256 or P-384.
func checkCSR(csr *x509.CertificateRequest) error {
	if err := csr.CheckSignature(); err != nil {
		return errors.New("the CSR's signature does not verify")
	}
	switch pub := csr.PublicKey.(type) {
	case *rsa.PublicKey:
		if bits := pub.N.BitLen(); bits < 2048 || bits > 8192 {
			return fmt.Errorf("the CSR has an RSA key of %d bits; 2048 to 8192 are accepted", bits)
		}
	case *ecdsa.PublicKey:
		if pub.Curve != elliptic.P256() && pub.Curve != elliptic.P384() {
			return fmt.Errorf("the CSR's ECDSA curve %s is not accepted; use P-256 or P-384", pub.Curve.Params().Name)
		}
	default:
		return fmt.Errorf("the CSR's key type %s is not accepted; use RSA or ECDSA", csr.PublicKeyAlgorithm)
	}
	return nil
}

// certificateConfigXML is the answer of GET /Marti/api/tls/config: what TAK
// Server's JAXB marshalling produces, root ns2:certificateConfig in namespace
// "com.bbn.marti.config", children in the CoreConfig namespace. Clients build
// the CSR subject as CN=<user> followed by these entries (the CN of the
// certificate is forced to the user name anyway). Two non-empty entries: an
// empty value makes ATAK's CSR generation fail, and node-tak needs a list.
// The official schema has no validity element, so none is sent.
func certificateConfigXML(a *pki.Authority) []byte {
	org := "Outpost"
	if ca := a.CACert(); ca != nil && len(ca.Subject.Organization) > 0 && strings.TrimSpace(ca.Subject.Organization[0]) != "" {
		org = strings.TrimSpace(ca.Subject.Organization[0])
	}
	unit := strings.TrimSpace(a.ServerName())
	if unit == "" {
		unit = org
	}
	var b bytes.Buffer
	b.WriteString(`<?xml version="1.0" encoding="UTF-8" standalone="yes"?>`)
	b.WriteString(`<ns2:certificateConfig xmlns="http://bbn.com/marti/xml/config" xmlns:ns2="com.bbn.marti.config"><nameEntries>`)
	for _, e := range [][2]string{{"O", org}, {"OU", unit}} {
		b.WriteString(`<nameEntry name="`)
		xml.EscapeText(&b, []byte(e[0]))
		b.WriteString(`" value="`)
		xml.EscapeText(&b, []byte(e[1]))
		b.WriteString(`"/>`)
	}
	b.WriteString(`</nameEntries></ns2:certificateConfig>`)
	return b.Bytes()
}

// enrollmentXML is the v2 answer for ATAK: <enrollment> with <signedCert> and
// one <ca> per CA certificate (the issuing CA first, then its issuers),
// nothing else and no white space between the elements (ATAK reads every
// child node as a certificate).
func enrollmentXML(cert *x509.Certificate, chain []*x509.Certificate) []byte {
	var b bytes.Buffer
	b.WriteString(`<?xml version="1.0" encoding="UTF-8"?><enrollment><signedCert>`)
	b.WriteString(certBase64(cert))
	b.WriteString(`</signedCert>`)
	for _, ca := range chain {
		b.WriteString(`<ca>`)
		b.WriteString(certBase64(ca))
		b.WriteString(`</ca>`)
	}
	b.WriteString(`</enrollment>`)
	return b.Bytes()
}

// enrollmentJSON is the v2 JSON answer: "signedCert", then "ca0", "ca1", …
// for the CA chain (CertManagerApi numbers the issuing chain from ca0: the
// CA that issued signedCert, then its issuer, up to an imported CA's root),
// then one more caN entry with the server certificate: iTAK wants it in the
// answer (goatak sends it as a caN entry; OpenTAKServer, whose chain has one
// certificate, fills ca1 with the CA again), and clients that trust every caN
// entry gain nothing they would not trust through the CA. For Outpost's own
// CA that is {signedCert, ca0: CA, ca1: server}.
func enrollmentJSON(cert *x509.Certificate, chain []*x509.Certificate, server *x509.Certificate) ([]byte, error) {
	ans := map[string]string{"signedCert": certBase64(cert)}
	for i, ca := range chain {
		ans["ca"+strconv.Itoa(i)] = certBase64(ca)
	}
	if server != nil {
		ans["ca"+strconv.Itoa(len(chain))] = certBase64(server)
	}
	b, err := json.Marshal(ans)
	if err != nil {
		return nil, fmt.Errorf("encode enrollment answer: %w", err)
	}
	return append(b, '\n'), nil
}
