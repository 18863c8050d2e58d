package pki

import (
	"crypto/x509"
	"encoding/pem"
	"errors"
	"fmt"
	"time"
)

// Trust is what a client of this appliance needs to check it, read from the
// certificate directory without changing anything (`outpost doctor`).
type Trust struct {
	CAFile     string
	Chain      []*x509.Certificate // the CA, then its issuers
	CRLPEMFile string
	CRL        *x509.RevocationList // nil when CRLErr is set
	CRLErr     error                // why crl.pem cannot serve a client now
}

// Roots is a pool of the CA and its issuers.
func (t *Trust) Roots() *x509.CertPool {
	p := x509.NewCertPool()
	for _, c := range t.Chain {
		p.AddCert(c)
	}
	return p
}

// Inspect reads the CA of cfg and checks crl.pem against it at now: it
// must parse, be signed by the CA and not be past its nextUpdate. It
// writes nothing, creates nothing and takes no lock.
func Inspect(cfg Config, now time.Time) (*Trust, error) {
	if cfg.Password == "" {
		cfg.Password = "-" // opens no PKCS#12 here; a caller need not read the secrets
	}
	if err := cfg.resolve(); err != nil {
		return nil, err
	}
	certs, err := readCertsFile(cfg.CAFile)
	if err != nil {
		return nil, fmt.Errorf("read the CA: %w", err)
	}
	t := &Trust{CAFile: cfg.CAFile, Chain: certs, CRLPEMFile: crlPEMPathFor(cfg.CRLFile)}
	t.CRL, t.CRLErr = inspectCRLPEM(t.CRLPEMFile, certs[0], now)
	return t, nil
}

func inspectCRLPEM(path string, ca *x509.Certificate, now time.Time) (*x509.RevocationList, error) {
	data, err := readFileLimited(path, maxCRLFile)
	if err != nil {
		return nil, err
	}
	block, _ := pem.Decode(data)
	if block == nil || block.Type != "X509 CRL" {
		return nil, errors.New(path + " is not a PEM X509 CRL")
	}
	crl, err := x509.ParseRevocationList(block.Bytes)
	if err != nil {
		return nil, fmt.Errorf("%s does not parse: %w", path, err)
	}
	if err := crl.CheckSignatureFrom(ca); err != nil {
		return nil, fmt.Errorf("%s is not signed by the CA %q: %w", path, ca.Subject.CommonName, err)
	}
	if !crl.NextUpdate.IsZero() && now.After(crl.NextUpdate) {
		return nil, fmt.Errorf("%s expired on %s", path, crl.NextUpdate.UTC().Format(time.RFC3339))
	}
	return crl, nil
}
