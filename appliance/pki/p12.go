package pki

import (
	"bytes"
	"crypto"
	"crypto/sha256"
	"crypto/x509"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"outpost/appliance/atomicfile"

	pkcs12 "software.sslmate.com/src/go-pkcs12"
)

// p12Encoder is the PKCS#12 encoding used for every file: see the package
// documentation ("PKCS#12") for why it is LegacyDES.
var p12Encoder = pkcs12.LegacyDES

// clientP12 packs a client key, its certificate and the CA.
func (a *Authority) clientP12(key crypto.Signer, cert *x509.Certificate) ([]byte, error) {
	p12, err := p12Encoder.Encode(key, cert, a.CAChain(), a.cfg.Password)
	if err != nil {
		return nil, fmt.Errorf("encode PKCS#12 for %q: %w", cert.Subject.CommonName, err)
	}
	// The key's entry is named after its user on the device (p12name.go).
	p12, err = withKeyFriendlyName(p12, a.cfg.Password, cert.Subject.CommonName)
	if err != nil {
		return nil, fmt.Errorf("encode PKCS#12 for %q: %w", cert.Subject.CommonName, err)
	}
	return p12, nil
}

// writeServerP12 writes server.p12 (server key + certificate + CA). This file
// stays on the server: it is never put into a client package (api.md
// "Differences from FreeTAKServer").
func (a *Authority) writeServerP12(key crypto.Signer, cert *x509.Certificate) error {
	p12, err := a.serverP12(key, cert)
	if err != nil {
		return err
	}
	return atomicfile.Write(a.cfg.P12File, p12, 0o600)
}

// serverP12 encodes server.p12's content.
func (a *Authority) serverP12(key crypto.Signer, cert *x509.Certificate) ([]byte, error) {
	p12, err := p12Encoder.Encode(key, cert, a.CAChain(), a.cfg.Password)
	if err != nil {
		return nil, fmt.Errorf("encode %s: %w", a.cfg.P12File, err)
	}
	return p12, nil
}

// serverP12Current reports whether server.p12 exists, opens with the
// configured password and holds cert.
func (a *Authority) serverP12Current(cert *x509.Certificate) bool {
	data, err := readFileLimited(a.cfg.P12File, maxPEMFile)
	if err != nil {
		return false
	}
	_, have, _, err := pkcs12.DecodeChain(data, a.cfg.Password)
	return err == nil && bytes.Equal(have.Raw, cert.Raw)
}

// TrustStoreName is the base name (without ".p12") of the CA truststore in
// packages: "truststore-<ServerName>-<first 8 hex digits of the CA
// certificate's SHA-256>". WinTAK keeps every imported truststore in one
// folder and breaks when two servers ship the same file name (tkuester/taky
// issue #39); two appliances left on the default server name still differ by
// their CAs.
func (a *Authority) TrustStoreName() string {
	sum := sha256.Sum256(a.caCert.Raw)
	return "truststore-" + fileToken(a.cfg.ServerName) + "-" + hex.EncodeToString(sum[:4])
}

// TrustStoreP12 returns a PKCS#12 holding only the CA certificate (and,
// for an imported intermediate, its issuers up to the root), marked as trust
// anchors, encrypted with Config.Password. It never holds a private key
// (protocol.md §9).
func (a *Authority) TrustStoreP12() ([]byte, error) {
	var entries []pkcs12.TrustStoreEntry
	for _, c := range a.CAChain() {
		entries = append(entries, pkcs12.TrustStoreEntry{Cert: c, FriendlyName: c.Subject.CommonName})
	}
	p12, err := p12Encoder.EncodeTrustStoreEntries(entries, a.cfg.Password)
	if err != nil {
		return nil, fmt.Errorf("encode truststore: %w", err)
	}
	return p12, nil
}

// KeyStoreP12 returns a PKCS#12 holding cert (without its key, which stays on
// the client) and the CA chain, as certificate entries with the aliases TAK
// Server uses in enrollment answers: "signedCert", then "ca0" (the issuing
// CA), "ca1" (its issuer), … (protocol.md §8).
func (a *Authority) KeyStoreP12(cert *x509.Certificate, password string) ([]byte, error) {
	if cert == nil {
		return nil, errors.New("keystore: no certificate")
	}
	entries := []pkcs12.TrustStoreEntry{{Cert: cert, FriendlyName: "signedCert"}}
	for i, c := range a.CAChain() {
		entries = append(entries, pkcs12.TrustStoreEntry{Cert: c, FriendlyName: "ca" + strconv.Itoa(i)})
	}
	p12, err := p12Encoder.EncodeTrustStoreEntries(entries, password)
	if err != nil {
		return nil, fmt.Errorf("encode enrollment keystore: %w", err)
	}
	return p12, nil
}

// WriteClientFiles writes NAME.pem (0644), NAME.key (0600) and NAME.p12 (0600)
// into dir (created 0700 if missing) and returns the paths written. NAME is
// the client name made safe for file names.
func (a *Authority) WriteClientFiles(cc *ClientCert, dir string) (files []string, err error) {
	if cc == nil || cc.Cert == nil {
		return nil, errors.New("write client files: no certificate")
	}
	if err := validCommonName(cc.Name); err != nil {
		return nil, fmt.Errorf("write client files: %w", err)
	}
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, fmt.Errorf("write client files: %w", err)
	}
	base := filepath.Join(dir, fileToken(cc.Name))
	for _, f := range []struct {
		path string
		data []byte
		perm os.FileMode
	}{
		{base + ".pem", cc.CertPEM, 0o644},
		{base + ".key", cc.KeyPEM, 0o600},
		{base + ".p12", cc.P12, 0o600},
	} {
		if len(f.data) == 0 {
			continue
		}
		if err := atomicfile.Write(f.path, f.data, f.perm); err != nil {
			return files, err
		}
		files = append(files, f.path)
	}
	a.log.Info("wrote client certificate files", "name", cc.Name, "dir", dir)
	return files, nil
}

// fileToken turns a name into a portable file-name part: ASCII letters,
// digits, '.', '_' and '-' are kept, anything else becomes '_'. Never empty,
// never starts with '.'.
func fileToken(s string) string {
	var b strings.Builder
	for _, r := range s {
		switch {
		case r >= 'a' && r <= 'z', r >= 'A' && r <= 'Z', r >= '0' && r <= '9', r == '-', r == '_', r == '.':
			b.WriteRune(r)
		default:
			b.WriteByte('_')
		}
	}
	t := strings.TrimLeft(b.String(), ".")
	if t == "" {
		t = "_"
	}
	return t
}
