package pki

// Bringing an organisation's own CA (`outpost ca import`): a root, or an
// intermediate signed by the organisation's root together with the chain up
// to that root. Devices that already trust the root then trust the server
// without importing anything new: the listeners send the intermediate after
// the server certificate, and truststores and enrollment answers carry the
// whole chain (ca0 = the issuing CA, ca1 = its issuer, …).

import (
	"bytes"
	"crypto"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rsa"
	"crypto/x509"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"outpost/appliance/atomicfile"
)

// PreviousCAFile is the name, inside the certificate directory, of a
// replaced CA that is still trusted for client certificates (see
// ImportRequest.TrustPrevious). Deleting it ends the transition.
const PreviousCAFile = "ca-previous.pem"

// caWarnBefore: an imported CA that expires sooner than this is accepted
// with a warning (every certificate it signs expires with it).
const caWarnBefore = 90 * 24 * time.Hour

// ImportRequest is a CA to install in place of the current one.
type ImportRequest struct {
	Cert  []byte // PEM: the CA certificate, optionally followed by its issuers
	Key   []byte // PEM: the CA's unencrypted private key
	Chain []byte // PEM: the CA's issuers, the CA's own issuer first, up to the root (optional)

	// TrustPrevious keeps the replaced CA as an additionally trusted
	// issuer of client certificates (PreviousCAFile), so devices enrolled
	// under it keep connecting until they re-enroll. Without it they are
	// refused at the next start.
	TrustPrevious bool
}

// ImportResult says what Import did.
type ImportResult struct {
	Chain    []*x509.Certificate // the new CA first, then its issuers
	Server   *x509.Certificate   // the reissued server certificate
	Backups  []string            // the replaced ca.pem and ca.key, kept for a rollback
	Previous string              // PreviousCAFile's path when the replaced CA stays trusted
	Warnings []string
	Written  []string // every file written
}

// Import validates req and replaces the CA of cfg's certificate directory
// with it, and the server certificate with one the new CA signs. The caller
// makes sure no server runs on the directory (a running server would keep
// serving the old certificates until it restarts). Nothing is changed when
// validation fails; the files are written as one set (atomicfile.WriteAll),
// keys 0600.
func Import(cfg Config, req ImportRequest) (*ImportResult, error) {
	clock := cfg.Now
	if clock == nil {
		clock = time.Now
	}
	now := clock()
	ca, chain, key, err := parseImport(req)
	if err != nil {
		return nil, err
	}
	warnings, err := checkImport(ca, chain, key, now)
	if err != nil {
		return nil, err
	}
	a, err := newAuthority(cfg) // makes the directories
	if err != nil {
		return nil, err
	}
	cfg = a.cfg
	unlock, err := lockFile(cfg.CAFile)
	if err != nil {
		return nil, err
	}
	defer unlock()

	stamp := now.UTC().Format("20060102T150405Z")
	var files []atomicfile.File
	res := &ImportResult{Chain: append([]*x509.Certificate{ca}, chain...), Warnings: warnings}
	var oldCA *x509.Certificate
	for _, f := range []string{cfg.CAFile, cfg.CAKeyFile} {
		data, err := readFileLimited(f, maxPEMFile)
		if errors.Is(err, os.ErrNotExist) {
			continue
		}
		if err != nil {
			return nil, fmt.Errorf("read the current CA: %w", err)
		}
		backup := f + ".replaced-" + stamp
		files = append(files, atomicfile.File{Path: backup, Data: data, Perm: 0o600})
		res.Backups = append(res.Backups, backup)
		if f == cfg.CAFile {
			if certs, err := parseCerts(data); err == nil {
				oldCA = certs[0]
			}
		}
	}
	previousPath := filepath.Join(cfg.CertsDir, PreviousCAFile)
	if req.TrustPrevious {
		switch {
		case oldCA == nil:
			res.Warnings = append(res.Warnings, "there was no readable CA to keep trusting")
		case oldCA.Equal(ca):
			res.Warnings = append(res.Warnings, "the imported CA is the current one; nothing previous to trust")
		case now.After(oldCA.NotAfter):
			res.Warnings = append(res.Warnings, "the replaced CA has expired; its client certificates cannot be trusted")
		default:
			files = append(files, atomicfile.File{Path: previousPath, Data: certPEM(oldCA), Perm: 0o644})
			res.Previous = previousPath
		}
	}

	a.caCert, a.caKey, a.caChain, a.caPEM = ca, key, chain, bundlePEM(ca, chain)
	kp, err := keyPEM(key)
	if err != nil {
		return nil, err
	}
	serverFiles, tc, err := a.newServerFiles()
	if err != nil {
		return nil, err
	}
	// Key before certificate, as createCA does; WriteAll writes every file
	// before renaming any.
	files = append(files,
		atomicfile.File{Path: cfg.CAKeyFile, Data: kp, Perm: 0o600},
		atomicfile.File{Path: cfg.CAFile, Data: a.caPEM, Perm: 0o644})
	files = append(files, serverFiles...)
	if err := atomicfile.WriteAll(files...); err != nil {
		return nil, fmt.Errorf("write the new CA: %w", err)
	}
	for _, f := range files {
		res.Written = append(res.Written, f.Path)
	}
	if res.Previous == "" {
		if err := os.Remove(previousPath); err != nil && !errors.Is(err, os.ErrNotExist) {
			return nil, fmt.Errorf("end the trust of an earlier CA: %w", err)
		}
	}
	a.serverCert = tc
	res.Server = tc.Leaf
	attrs := []any{"file", cfg.CAFile, "subject", ca.Subject.CommonName, "not_after", ca.NotAfter, "chain_length", len(res.Chain)}
	if res.Previous != "" {
		attrs = append(attrs, "previous_trusted", res.Previous)
	}
	a.log.Info("imported a CA", attrs...)
	a.logServerIssued()
	return res, nil
}

// parseImport reads the CA certificate (and any issuers after it), the key
// and the chain; a copy of the CA itself in the chain is dropped.
func parseImport(req ImportRequest) (ca *x509.Certificate, chain []*x509.Certificate, key crypto.Signer, err error) {
	if len(req.Cert) > maxPEMFile || len(req.Key) > maxPEMFile || len(req.Chain) > maxPEMFile {
		return nil, nil, nil, fmt.Errorf("a PEM input is larger than %d bytes", maxPEMFile)
	}
	certs, err := parseCerts(req.Cert)
	if err != nil {
		return nil, nil, nil, fmt.Errorf("CA certificate: %w", err)
	}
	ca = certs[0]
	all := certs[1:]
	if len(bytes.TrimSpace(req.Chain)) > 0 {
		more, err := parseCerts(req.Chain)
		if err != nil {
			return nil, nil, nil, fmt.Errorf("chain: %w", err)
		}
		all = append(all, more...)
	}
	for _, c := range all {
		dup := c.Equal(ca)
		for _, have := range chain {
			dup = dup || c.Equal(have)
		}
		if !dup {
			chain = append(chain, c)
		}
	}
	if len(chain)+1 > maxChain {
		return nil, nil, nil, fmt.Errorf("the chain has more than %d certificates", maxChain)
	}
	key, err = parseKey("CA key", req.Key)
	if err != nil {
		return nil, nil, nil, err
	}
	return ca, chain, key, nil
}

// checkImport refuses what cannot serve as Outpost's CA and returns
// warnings for what works but deserves attention.
func checkImport(ca *x509.Certificate, chain []*x509.Certificate, key crypto.Signer, now time.Time) (warnings []string, err error) {
	name := fmt.Sprintf("%q", ca.Subject.CommonName)
	if !ca.BasicConstraintsValid || !ca.IsCA {
		return nil, fmt.Errorf("certificate %s is not a CA certificate (basicConstraints CA:TRUE is missing)", name)
	}
	if ca.KeyUsage != 0 && ca.KeyUsage&x509.KeyUsageCertSign == 0 {
		return nil, fmt.Errorf("certificate %s may not sign certificates (its keyUsage lacks keyCertSign)", name)
	}
	if err := supportedCAKey(ca.PublicKey); err != nil {
		return nil, fmt.Errorf("certificate %s: %w", name, err)
	}
	if !publicKeysEqual(ca, key) {
		return nil, fmt.Errorf("the key does not belong to certificate %s", name)
	}
	if now.Before(ca.NotBefore) {
		return nil, fmt.Errorf("certificate %s is not valid before %s (check this machine's clock)", name, ca.NotBefore.UTC().Format(time.RFC3339))
	}
	if now.After(ca.NotAfter) {
		return nil, fmt.Errorf("certificate %s expired on %s", name, ca.NotAfter.UTC().Format(time.RFC3339))
	}
	if len(chain) == 0 && !selfSigned(ca) {
		return nil, fmt.Errorf("certificate %s is signed by %q: give that issuer, and its own up to the root, with --chain", name, ca.Issuer.CommonName)
	}
	if err := checkChain(ca, chain, now); err != nil {
		return nil, err
	}
	if left := ca.NotAfter.Sub(now); left < caWarnBefore {
		warnings = append(warnings, fmt.Sprintf("the CA expires on %s: every certificate it signs expires with it", ca.NotAfter.UTC().Format(time.RFC3339)))
	}
	return warnings, nil
}

// supportedCAKey accepts the keys every TAK client verifies: RSA of 2048 to
// 8192 bits, ECDSA on P-256 or P-384 (the CSR rule of SignCSR).
func supportedCAKey(pub crypto.PublicKey) error {
	switch k := pub.(type) {
	case *rsa.PublicKey:
		if bits := k.N.BitLen(); bits < 2048 || bits > 8192 {
			return fmt.Errorf("RSA key of %d bits is not supported (want 2048 to 8192)", bits)
		}
	case *ecdsa.PublicKey:
		if k.Curve != elliptic.P256() && k.Curve != elliptic.P384() {
			return fmt.Errorf("ECDSA curve %s is not supported (want P-256 or P-384)", k.Curve.Params().Name)
		}
	default:
		return fmt.Errorf("%T keys are not supported by TAK clients (want RSA or ECDSA P-256/P-384)", pub)
	}
	return nil
}

// checkChain verifies that chain holds ca's issuers in order (each one the
// issuer of the one before) and ends at a self-signed root that ca verifies
// up to now (validity and path-length constraints included). An empty chain
// means ca is its own root.
func checkChain(ca *x509.Certificate, chain []*x509.Certificate, now time.Time) error {
	if len(chain) == 0 {
		return nil
	}
	prev := ca
	for _, c := range chain {
		if err := prev.CheckSignatureFrom(c); err != nil {
			return fmt.Errorf("certificate %q is not the issuer of %q (give the chain in order, the CA's own issuer first): %w",
				c.Subject.CommonName, prev.Subject.CommonName, err)
		}
		prev = c
	}
	root := chain[len(chain)-1]
	if !selfSigned(root) {
		return fmt.Errorf("the chain ends at %q, which is not a self-signed root: add its issuers", root.Subject.CommonName)
	}
	roots, inter := x509.NewCertPool(), x509.NewCertPool()
	roots.AddCert(root)
	for _, c := range chain[:len(chain)-1] {
		inter.AddCert(c)
	}
	if _, err := ca.Verify(x509.VerifyOptions{Roots: roots, Intermediates: inter, CurrentTime: now,
		KeyUsages: []x509.ExtKeyUsage{x509.ExtKeyUsageAny}}); err != nil {
		return fmt.Errorf("certificate %q does not verify up to its root %q: %w", ca.Subject.CommonName, root.Subject.CommonName, err)
	}
	return nil
}

// selfSigned reports whether c is a root: its own issuer, with a signature
// its own key verifies.
func selfSigned(c *x509.Certificate) bool {
	return bytes.Equal(c.RawIssuer, c.RawSubject) && c.CheckSignatureFrom(c) == nil
}

// openPreviousCA adds the CA of PreviousCAFile, when there is one and it has
// not expired, to the issuers of accepted client certificates.
func (a *Authority) openPreviousCA() error {
	path := filepath.Join(a.cfg.CertsDir, PreviousCAFile)
	certs, err := readCertsFile(path)
	if errors.Is(err, os.ErrNotExist) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("load the previous CA: %w", err)
	}
	for _, c := range certs {
		if a.now().After(c.NotAfter) {
			a.log.Warn("the previous CA has expired; its client certificates are no longer accepted", "file", path, "subject", c.Subject.CommonName)
			continue
		}
		a.clientCAs.AddCert(c)
		a.log.Info("also accepting client certificates of the previous CA until they re-enroll; delete the file to end this",
			"file", path, "subject", c.Subject.CommonName, "not_after", c.NotAfter)
	}
	return nil
}
