package pki

import (
	"crypto"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/rsa"
	"crypto/x509"
	"crypto/x509/pkix"
	"errors"
	"fmt"
	"math/big"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"
)

// ClientCert is a freshly issued client certificate with its key and PKCS#12.
type ClientCert struct {
	Name    string
	Cert    *x509.Certificate
	Key     crypto.Signer
	CertPEM []byte
	KeyPEM  []byte
	P12     []byte // key + cert + CA, LegacyDES, Config.Password
}

const rsaBits = 2048

func newKey(keyType string) (crypto.Signer, error) {
	switch keyType {
	case KeyTypeECDSAP256:
		k, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
		if err != nil {
			return nil, fmt.Errorf("generate ECDSA key: %w", err)
		}
		return k, nil
	default:
		k, err := rsa.GenerateKey(rand.Reader, rsaBits)
		if err != nil {
			return nil, fmt.Errorf("generate RSA key: %w", err)
		}
		return k, nil
	}
}

// newSerial returns a random positive 127-bit serial number.
func newSerial() (*big.Int, error) {
	limit := new(big.Int).Lsh(big.NewInt(1), 127)
	for {
		n, err := rand.Int(rand.Reader, limit)
		if err != nil {
			return nil, fmt.Errorf("generate serial number: %w", err)
		}
		if n.Sign() > 0 {
			return n, nil
		}
	}
}

func caTemplate(serverName string, now time.Time) *x509.Certificate {
	return &x509.Certificate{
		Subject:               pkix.Name{CommonName: "Outpost CA " + serverName, Organization: []string{"Outpost"}},
		NotBefore:             now.Add(-backdate),
		NotAfter:              now.Add(caValidity),
		KeyUsage:              x509.KeyUsageCertSign | x509.KeyUsageCRLSign,
		BasicConstraintsValid: true,
		IsCA:                  true,
		MaxPathLen:            0,
		MaxPathLenZero:        true,
	}
}

func serverTemplate(serverName string, sans sanSet, now time.Time, pub crypto.PublicKey) *x509.Certificate {
	return &x509.Certificate{
		Subject:               pkix.Name{CommonName: serverName, Organization: []string{"Outpost"}},
		NotBefore:             now.Add(-backdate),
		NotAfter:              now.Add(serverValidity),
		KeyUsage:              leafKeyUsage(pub),
		ExtKeyUsage:           []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
		BasicConstraintsValid: true,
		DNSNames:              sans.dns,
		IPAddresses:           sans.ips,
	}
}

// clientTemplate is the one client profile, used by IssueClient and SignCSR.
func (a *Authority) clientTemplate(name string, now time.Time, pub crypto.PublicKey) *x509.Certificate {
	notAfter := now.Add(a.cfg.ClientValidity)
	if notAfter.After(a.caCert.NotAfter) {
		notAfter = a.caCert.NotAfter // never outlive the issuer
	}
	return &x509.Certificate{
		Subject:               pkix.Name{CommonName: name},
		NotBefore:             now.Add(-backdate),
		NotAfter:              notAfter,
		KeyUsage:              leafKeyUsage(pub),
		ExtKeyUsage:           []x509.ExtKeyUsage{x509.ExtKeyUsageClientAuth},
		BasicConstraintsValid: true,
	}
}

// leafKeyUsage: digitalSignature always; keyEncipherment only means something
// for RSA keys (RSA key transport), so ECDSA leaves do not claim it.
func leafKeyUsage(pub crypto.PublicKey) x509.KeyUsage {
	ku := x509.KeyUsageDigitalSignature
	if _, ok := pub.(*rsa.PublicKey); ok {
		ku |= x509.KeyUsageKeyEncipherment
	}
	return ku
}

// signCert assigns a serial number and signs tmpl for pub. A nil parent makes
// the certificate self-signed.
func (a *Authority) signCert(tmpl *x509.Certificate, pub crypto.PublicKey, parent *x509.Certificate, key crypto.Signer) (*x509.Certificate, error) {
	serial, err := newSerial()
	if err != nil {
		return nil, err
	}
	tmpl.SerialNumber = serial
	if parent == nil {
		parent = tmpl
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, parent, pub, key)
	if err != nil {
		return nil, err
	}
	return x509.ParseCertificate(der)
}

// IssueClient creates a key and a client certificate with CN=name, EKU
// clientAuth and key usage digitalSignature (+keyEncipherment for RSA), and
// packs key, certificate and CA into a PKCS#12 with Config.Password. The
// issuance is recorded in the index used by RevokeName. name follows the
// common-name rule (1-64 characters, no control characters, no surrounding
// spaces); file names made from it are sanitised where they are written.
func (a *Authority) IssueClient(name string) (*ClientCert, error) {
	if err := validCommonName(name); err != nil {
		return nil, fmt.Errorf("issue client certificate: %w", err)
	}
	key, err := newKey(a.cfg.KeyType)
	if err != nil {
		return nil, err
	}
	cert, err := a.signCert(a.clientTemplate(name, a.now(), key.Public()), key.Public(), a.caCert, a.caKey)
	if err != nil {
		return nil, fmt.Errorf("issue client certificate for %q: %w", name, err)
	}
	kp, err := keyPEM(key)
	if err != nil {
		return nil, err
	}
	p12, err := a.clientP12(key, cert)
	if err != nil {
		return nil, err
	}
	if err := a.recordIssued(cert, "client"); err != nil {
		return nil, err
	}
	a.log.Info("issued client certificate", "name", name, "serial", cert.SerialNumber.String(), "not_after", cert.NotAfter)
	return &ClientCert{Name: name, Cert: cert, Key: key, CertPEM: certPEM(cert), KeyPEM: kp, P12: p12}, nil
}

// SignCSR signs an enrollment CSR (protocol.md §8). The CSR's signature must verify;
// its subject is ignored and the CN is forced to name; the profile is the one
// IssueClient uses. Accepted keys: RSA 2048-8192 bits, ECDSA P-256/P-384.
func (a *Authority) SignCSR(csr *x509.CertificateRequest, name string) (*x509.Certificate, error) {
	if csr == nil {
		return nil, errors.New("sign CSR: no CSR")
	}
	if err := validCommonName(name); err != nil {
		return nil, fmt.Errorf("sign CSR: %w", err)
	}
	if err := csr.CheckSignature(); err != nil {
		return nil, fmt.Errorf("sign CSR: the CSR signature does not verify: %w", err)
	}
	switch pub := csr.PublicKey.(type) {
	case *rsa.PublicKey:
		if bits := pub.N.BitLen(); bits < 2048 || bits > 8192 {
			return nil, fmt.Errorf("sign CSR: RSA key of %d bits (want 2048 to 8192)", bits)
		}
	case *ecdsa.PublicKey:
		if pub.Curve != elliptic.P256() && pub.Curve != elliptic.P384() {
			return nil, fmt.Errorf("sign CSR: ECDSA curve %s not accepted (want P-256 or P-384)", pub.Curve.Params().Name)
		}
	default:
		return nil, fmt.Errorf("sign CSR: unsupported public key type %T", csr.PublicKey)
	}
	cert, err := a.signCert(a.clientTemplate(name, a.now(), csr.PublicKey), csr.PublicKey, a.caCert, a.caKey)
	if err != nil {
		return nil, fmt.Errorf("sign CSR for %q: %w", name, err)
	}
	if err := a.recordIssued(cert, "enrollment"); err != nil {
		return nil, err
	}
	a.log.Info("signed enrollment CSR", "name", name, "serial", cert.SerialNumber.String(), "not_after", cert.NotAfter)
	return cert, nil
}

// ValidateName checks a user name used for certificates and file names:
// 1-64 characters of [A-Za-z0-9._ -], not starting with '.', '-' or a space,
// not ending with a space.
func ValidateName(name string) error {
	if name == "" {
		return errors.New("name is empty")
	}
	if len(name) > 64 {
		return fmt.Errorf("name is longer than 64 characters")
	}
	for i := 0; i < len(name); i++ {
		c := name[i]
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '.' || c == '_' || c == ' ' || c == '-') {
			return fmt.Errorf("name %q has a character outside [A-Za-z0-9._ -]", name)
		}
	}
	switch name[0] {
	case '.', '-', ' ':
		return fmt.Errorf("name %q must not start with %q", name, name[0])
	}
	if name[len(name)-1] == ' ' {
		return fmt.Errorf("name %q must not end with a space", name)
	}
	return nil
}

// validCommonName is the looser rule for names that never become file names
// (enrollment user names, the server name): 1-64 characters of valid UTF-8, no
// control characters, no leading or trailing spaces.
func validCommonName(name string) error {
	if name == "" {
		return errors.New("name is empty")
	}
	if !utf8.ValidString(name) {
		return errors.New("name is not valid UTF-8")
	}
	if utf8.RuneCountInString(name) > 64 {
		return errors.New("name is longer than 64 characters")
	}
	if strings.TrimSpace(name) != name {
		return fmt.Errorf("name %q has leading or trailing spaces", name)
	}
	for _, r := range name {
		if unicode.IsControl(r) {
			return fmt.Errorf("name %q has a control character", name)
		}
	}
	return nil
}
