package pki

import (
	"crypto/tls"
	"errors"
	"fmt"
	"math/big"
)

// ErrRevoked is returned (wrapped) by the TLS verification of a revoked client
// certificate.
var ErrRevoked = errors.New("client certificate is revoked")

func (a *Authority) buildTLSConfigs() {
	a.serverTLS = &tls.Config{
		MinVersion:   tls.VersionTLS12,
		Certificates: []tls.Certificate{a.serverCert},
		// api.md §5.8: CERT_REQUIRED, client certificate signed by our CA, and
		// only our CA (never the system roots).
		ClientAuth: tls.RequireAndVerifyClientCert,
		ClientCAs:  a.clientCAs,
		// Time follows Config.Now so validity checks agree with the
		// authority's clock (tests move it).
		Time: a.now,
		// api.md §5.11: refuse revoked leaves. VerifyConnection also runs on
		// resumed sessions, so a certificate revoked after its session
		// ticket was issued is still refused.
		VerifyConnection: a.verifyNotRevoked,
		// Full-size records from the first byte: the CoT writer packs many
		// events into each record (architecture.md "The relay").
		DynamicRecordSizingDisabled: true,
		// Classic key exchanges only: every TAK client offers X25519 or
		// P-256, and the post-quantum hybrid costs a Raspberry Pi several
		// times the CPU and memory per handshake of a connect storm.
		CurvePreferences: []tls.CurveID{tls.X25519, tls.CurveP256, tls.CurveP384},
	}
	a.enrollTLS = &tls.Config{
		MinVersion:   tls.VersionTLS12,
		Certificates: []tls.Certificate{a.serverCert},
		ClientAuth:   tls.NoClientCert, // protocol.md §8: enrollment authenticates with HTTP Basic
		Time:         a.now,
	}
}

func (a *Authority) verifyNotRevoked(cs tls.ConnectionState) error {
	if len(cs.PeerCertificates) == 0 {
		return errors.New("no client certificate")
	}
	leaf := cs.PeerCertificates[0]
	if a.IsRevoked(leaf.SerialNumber) {
		return fmt.Errorf("%w: %q serial %s", ErrRevoked, leaf.Subject.CommonName, leaf.SerialNumber)
	}
	return nil
}

// ServerTLSConfig returns a new tls.Config for the mutual-TLS listeners (CoT
// 8089 and HTTPS 8443): TLS 1.2 or later, our server certificate, client
// certificates required and verified against our CA only, revoked leaves
// refused (api.md §5.8, §5.11). Each call returns a fresh copy the caller may
// modify (for example NextProtos).
func (a *Authority) ServerTLSConfig() *tls.Config { return a.serverTLS.Clone() }

// EnrollmentTLSConfig returns a new tls.Config for the enrollment listener:
// TLS 1.2 or later, our server certificate, no client certificate requested.
func (a *Authority) EnrollmentTLSConfig() *tls.Config { return a.enrollTLS.Clone() }

// Identity returns the user identity of a verified mutual-TLS connection: the
// leaf certificate's common name and serial number. ok is false when the
// connection carries no verified client certificate or the CN is empty.
func (a *Authority) Identity(cs tls.ConnectionState) (name string, serial *big.Int, ok bool) {
	if len(cs.PeerCertificates) == 0 || len(cs.VerifiedChains) == 0 {
		return "", nil, false
	}
	leaf := cs.PeerCertificates[0]
	if leaf.Subject.CommonName == "" {
		return "", nil, false
	}
	return leaf.Subject.CommonName, new(big.Int).Set(leaf.SerialNumber), true
}
