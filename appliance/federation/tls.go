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

// peerCheck is how a peer's certificate is judged at the handshake.
type peerCheck struct {
	trusted *x509.CertPool               // the CAs it may chain to (besides a managed federate's)
	now     func() time.Time             // the time certificates are checked at
	allow   func(*x509.Certificate) bool // nil: any certificate of trusted
	// managed, when set, names the managed federate whose CA (and pin) the
	// certificate matches ("" none): such a certificate is let in
	// (Allow is for trusted's CAs).
	managed func(*x509.Certificate, *x509.CertPool) string
	// pin, when set, is the SHA-256 fingerprint the certificate must have
	// (an outbound link to a pinned managed federate).
	pin string
	// revoked reports a certificate this server's CA revoked (nil: none is).
	revoked func(*x509.Certificate) bool
}

// verify checks a peer's certificate chain (tls.Config's
// VerifyPeerCertificate): not revoked, then a managed federate's CA and
// pin, or else the trusted CAs, Allow and pin.
func (pc peerCheck) verify(raw [][]byte, _ [][]*x509.Certificate) error {
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
	leaf := certs[0]
	if pc.revoked != nil && pc.revoked(leaf) {
		return fmt.Errorf("federate certificate %q serial %s is revoked", leaf.Subject.CommonName, leaf.SerialNumber)
	}
	inter := intermediates(certs)
	if pc.managed != nil && pc.managed(leaf, inter) != "" {
		return nil
	}
	_, err := leaf.Verify(x509.VerifyOptions{Roots: pc.trusted, Intermediates: inter, CurrentTime: pc.now(),
		KeyUsages: []x509.ExtKeyUsage{x509.ExtKeyUsageAny}})
	if err != nil {
		return fmt.Errorf("federate certificate not trusted: %w", err)
	}
	if pc.allow != nil && !pc.allow(leaf) {
		return fmt.Errorf("federate certificate %q (%s) is not in federationAllow", leaf.Subject.CommonName, Fingerprint(leaf.Raw))
	}
	if pc.pin != "" && Fingerprint(leaf.Raw) != pc.pin {
		return fmt.Errorf("federate certificate is not the pinned one: %q has %s", leaf.Subject.CommonName, Fingerprint(leaf.Raw))
	}
	return nil
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
		VerifyPeerCertificate: peerCheck{trusted: f.cfg.Trusted, now: f.cfg.Now, allow: f.allowed(), managed: f.managedFor, revoked: f.cfg.Revoked}.verify,
		NextProtos:            []string{"h2"},
	}
}

// clientTLS is the configuration of an outbound connection to o: its
// certificate must chain to o's CAs (Config.Trusted when o has none) and,
// when o pins one, have that fingerprint.
func (f *Federation) clientTLS(o Outbound) *tls.Config {
	trusted := o.Trusted
	if trusted == nil {
		trusted = f.cfg.Trusted
	}
	return &tls.Config{
		MinVersion:            tls.VersionTLS12,
		Certificates:          []tls.Certificate{f.cfg.Certificate},
		InsecureSkipVerify:    true, // verified by verifyChain against the trusted CAs, without host names
		VerifyPeerCertificate: peerCheck{trusted: trusted, now: f.cfg.Now, pin: o.Pin, revoked: f.cfg.Revoked}.verify,
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
