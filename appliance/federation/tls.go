package federation

import (
	"crypto/sha256"
	"crypto/tls"
	"crypto/x509"
	"encoding/hex"
	"errors"
	"fmt"
	"strings"
	"time"
)

// Federates are trusted by their certificate authority, explicitly
// (docs/federation.md "Certificates"): a federate's certificate must chain
// to one of the CAs in Config.Trusted; nothing else gets in. Host names
// are not checked (federates are known by certificate, as on the official
// server), and the certificate may be a server's or a client's: federation
// uses one certificate both ways.

// verifyChain checks a peer's certificate chain against the trusted CAs
// and, when allow is not nil, that allow admits its certificate.
// When it fails and managed is not nil, a certificate that chains to the
// CA of a managed federate is let in (Allow is for Config.Trusted's CAs).
func verifyChain(trusted *x509.CertPool, now func() time.Time, allow func(*x509.Certificate) bool,
	managed func(*x509.Certificate, *x509.CertPool) string) func([][]byte, [][]*x509.Certificate) error {
	return func(raw [][]byte, _ [][]*x509.Certificate) error {
		if len(raw) == 0 {
			return errors.New("federate sent no certificate")
		}
		certs := make([]*x509.Certificate, 0, len(raw))
		for _, r := range raw {
			c, err := x509.ParseCertificate(r)
			if err != nil {
				return fmt.Errorf("federate certificate: %w", err)
			}
			certs = append(certs, c)
		}
		inter := intermediates(certs)
		if managed != nil && managed(certs[0], inter) != "" {
			return nil
		}
		_, err := certs[0].Verify(x509.VerifyOptions{Roots: trusted, Intermediates: inter, CurrentTime: now(),
			KeyUsages: []x509.ExtKeyUsage{x509.ExtKeyUsageAny}})
		if err != nil {
			return fmt.Errorf("federate certificate not trusted: %w", err)
		}
		if allow != nil && !allow(certs[0]) {
			return fmt.Errorf("federate certificate %q (%s) is not in federationAllow", certs[0].Subject.CommonName, Fingerprint(certs[0].Raw))
		}
		return nil
	}
}

// intermediates is the pool of a chain's certificates after its first.
func intermediates(chain []*x509.Certificate) *x509.CertPool {
	inter := x509.NewCertPool()
	for _, c := range chain[1:] {
		inter.AddCert(c)
	}
	return inter
}

// allowed reports whether a federate's certificate is admitted by the
// Allow list: its common name or its SHA-256 fingerprint is listed (nil
// when the list is empty: every certificate of a trusted CA).
func (f *Federation) allowed() func(*x509.Certificate) bool {
	if len(f.cfg.Allow) == 0 {
		return nil
	}
	return func(c *x509.Certificate) bool {
		fp := Fingerprint(c.Raw)
		for _, a := range f.cfg.Allow {
			if a == c.Subject.CommonName || strings.EqualFold(strings.ReplaceAll(a, ":", ""), strings.ReplaceAll(fp, ":", "")) {
				return true
			}
		}
		return false
	}
}

// serverTLS is the listener's configuration: a certificate is required
// and verified by verifyChain (Go's own check would insist on the client
// key usage).
func (f *Federation) serverTLS() *tls.Config {
	return &tls.Config{
		MinVersion:            tls.VersionTLS12,
		Certificates:          []tls.Certificate{f.cfg.Certificate},
		ClientAuth:            tls.RequireAnyClientCert,
		VerifyPeerCertificate: verifyChain(f.cfg.Trusted, f.cfg.Now, f.allowed(), f.managedFor),
		NextProtos:            []string{"h2"},
	}
}

// clientTLS is an outbound connection's configuration.
// trusted are the CAs the federate's certificate must chain to.
func (f *Federation) clientTLS(trusted *x509.CertPool) *tls.Config {
	return &tls.Config{
		MinVersion:            tls.VersionTLS12,
		Certificates:          []tls.Certificate{f.cfg.Certificate},
		InsecureSkipVerify:    true, // verified by verifyChain against the trusted CAs, without host names
		VerifyPeerCertificate: verifyChain(trusted, f.cfg.Now, nil, nil),
		NextProtos:            []string{"h2"},
	}
}

// Fingerprint is a certificate's SHA-256 fingerprint, colon-separated upper
// hex (as the official server shows it).
func Fingerprint(der []byte) string {
	sum := sha256.Sum256(der)
	h := strings.ToUpper(hex.EncodeToString(sum[:]))
	var b strings.Builder
	for i := 0; i < len(h); i += 2 {
		if i > 0 {
			b.WriteByte(':')
		}
		b.WriteString(h[i : i+2])
	}
	return b.String()
}
