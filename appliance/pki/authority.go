package pki

import (
	"crypto"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"outpost/appliance/atomicfile"
)

// Key types accepted in Config.KeyType.
const (
	KeyTypeRSA       = "rsa"        // RSA 2048: every TAK client accepts it
	KeyTypeECDSAP256 = "ecdsa-p256" // smaller and faster; check your clients first
)

// Defaults (api.md §5.12 names; ports from protocol.md §8 and api.md §1).
const (
	DefaultServerName     = "outpost"
	DefaultSSLCoTPort     = 8089
	DefaultEnrollPort     = 8446
	DefaultHTTPSPort      = 8443
	DefaultClientValidity = 2 * 365 * 24 * time.Hour
	caValidity            = 10 * 365 * 24 * time.Hour
	serverValidity        = 5 * 365 * 24 * time.Hour
	backdate              = time.Hour // NotBefore slack for clients with slow clocks
)

// Config locates the certificate files and describes the server identity.
type Config struct {
	CertsDir string // certsPath; created 0700 if missing

	// api.md §5.12 file locations; empty means the default name inside CertsDir.
	KeyFile            string // keyDir          server.key
	CertFile           string // pemDir          server.pem
	UnencryptedKeyFile string // unencryptedKey  server.key.unencrypted
	P12File            string // p12Dir          server.p12
	CAFile             string // CA              ca.pem
	CAKeyFile          string // CAkey           ca.key
	CRLFile            string // CRLFile         crl.json (api.md §2.15 JSON)
	ClientPackagesDir  string // ClientPackages  clientpackages/

	KeyType    string   // KeyTypeRSA (default) or KeyTypeECDSAP256
	ServerName string   // server cert CN and the truststore's name (default "outpost")
	PublicHost string   // host written into connect strings (default: first of SANs)
	SANs       []string // DNS names and IP addresses for the server certificate
	Password   string   // PKCS#12 password for packages, truststores and server.p12; required

	SSLCoTPort     int           // connect string port (8089)
	EnrollPort     int           // enrollment port written into packages as apiCertEnrollmentPort (8446)
	HTTPSPort      int           // client API port written into packages as apiSecureServerPort (8443)
	ClientValidity time.Duration // default 2 years; the CA gets 10 years, the server 5

	Now    func() time.Time // for tests; default time.Now
	Logger *slog.Logger
}

// Authority is an opened certificate authority. It is safe for concurrent use.
type Authority struct {
	cfg Config // paths resolved, defaults applied
	log *slog.Logger
	now func() time.Time

	// Set once by Open, read-only afterwards.
	caCert     *x509.Certificate
	caKey      crypto.Signer
	caPEM      []byte              // caCert and caChain, PEM
	caChain    []*x509.Certificate // caCert's issuers up to the root, when caCert is an imported intermediate
	serverCert tls.Certificate
	clientCAs  *x509.CertPool
	sans       sanSet
	serverTLS  *tls.Config
	enrollTLS  *tls.Config
	indexPath  string
	crlPEMPath string

	idxMu sync.Mutex // serialises this process's writes of issued.json (the lock file covers other processes)

	ports atomic.Pointer[Ports] // published in packages; SetPorts replaces them

	crl crlState // revocation state; has its own locks
}

// Open loads the authority from cfg.CertsDir, creating the CA and the server
// certificate on first run (no CA file). See the package documentation for the
// files it writes.
func Open(cfg Config) (*Authority, error) {
	a, err := newAuthority(cfg)
	if err != nil {
		return nil, err
	}
	cfg = a.cfg
	// A CLI process may open the same directory while the server starts: the
	// lock keeps two first runs from creating two CAs, and a reader from
	// seeing server.key and server.pem from different issuances.
	unlock, err := lockFile(cfg.CAFile)
	if err != nil {
		return nil, err
	}
	err = a.openCA()
	if err == nil {
		err = a.openServer()
	}
	unlock()
	if err != nil {
		return nil, err
	}
	if err := a.openCRL(); err != nil {
		return nil, err
	}
	a.clientCAs = x509.NewCertPool()
	a.clientCAs.AddCert(a.caCert)
	if err := a.openPreviousCA(); err != nil {
		return nil, err
	}
	a.buildTLSConfigs()
	a.log.Info("certificate authority ready",
		"certs_dir", cfg.CertsDir, "ca", cfg.CAFile, "server_cert", cfg.CertFile,
		"crl", cfg.CRLFile, "client_packages", cfg.ClientPackagesDir,
		"ca_not_after", a.caCert.NotAfter, "server_not_after", a.serverCert.Leaf.NotAfter)
	return a, nil
}

// newAuthority resolves cfg and makes the directories; it reads no
// certificate yet.
func newAuthority(cfg Config) (*Authority, error) {
	if err := cfg.resolve(); err != nil {
		return nil, err
	}
	sans, err := parseSANs(cfg.SANs, cfg.ServerName)
	if err != nil {
		return nil, err
	}
	if cfg.PublicHost == "" && len(cfg.SANs) > 0 {
		cfg.PublicHost = strings.Trim(strings.TrimSpace(cfg.SANs[0]), "[]")
	}
	a := &Authority{
		cfg:        cfg,
		log:        cfg.Logger.With("component", "pki"),
		now:        cfg.Now,
		sans:       sans,
		indexPath:  filepath.Join(cfg.CertsDir, "issued.json"),
		crlPEMPath: crlPEMPathFor(cfg.CRLFile),
	}
	a.crl.init()
	a.ports.Store(&Ports{SSLCoT: cfg.SSLCoTPort, HTTPS: cfg.HTTPSPort, Enroll: cfg.EnrollPort})

	if err := os.MkdirAll(cfg.CertsDir, 0o700); err != nil {
		return nil, fmt.Errorf("create certificate directory %s: %w", cfg.CertsDir, err)
	}
	if err := os.MkdirAll(cfg.ClientPackagesDir, 0o700); err != nil {
		return nil, fmt.Errorf("create client package directory %s: %w", cfg.ClientPackagesDir, err)
	}
	return a, nil
}

// resolve applies defaults and checks the configuration.
func (c *Config) resolve() error {
	if strings.TrimSpace(c.CertsDir) == "" {
		return errors.New("pki: CertsDir is required")
	}
	if c.Password == "" {
		return errors.New("pki: Password is required (the caller generates one on first run)")
	}
	def := func(p *string, name string) {
		if *p == "" {
			*p = filepath.Join(c.CertsDir, name)
		}
	}
	def(&c.KeyFile, "server.key")
	def(&c.CertFile, "server.pem")
	def(&c.UnencryptedKeyFile, "server.key.unencrypted")
	def(&c.P12File, "server.p12")
	def(&c.CAFile, "ca.pem")
	def(&c.CAKeyFile, "ca.key")
	def(&c.CRLFile, "crl.json")
	def(&c.ClientPackagesDir, "clientpackages")

	switch strings.ToLower(strings.TrimSpace(c.KeyType)) {
	case "", KeyTypeRSA:
		c.KeyType = KeyTypeRSA
	case KeyTypeECDSAP256:
		c.KeyType = KeyTypeECDSAP256
	default:
		return fmt.Errorf("pki: unknown KeyType %q (want %q or %q)", c.KeyType, KeyTypeRSA, KeyTypeECDSAP256)
	}
	c.ServerName = strings.TrimSpace(c.ServerName)
	if c.ServerName == "" {
		c.ServerName = DefaultServerName
	}
	if err := validCommonName(c.ServerName); err != nil {
		return fmt.Errorf("pki: ServerName: %w", err)
	}
	c.PublicHost = strings.TrimSpace(c.PublicHost)
	if c.SSLCoTPort == 0 {
		c.SSLCoTPort = DefaultSSLCoTPort
	}
	if c.EnrollPort == 0 {
		c.EnrollPort = DefaultEnrollPort
	}
	if c.HTTPSPort == 0 {
		c.HTTPSPort = DefaultHTTPSPort
	}
	if err := (Ports{c.SSLCoTPort, c.HTTPSPort, c.EnrollPort}).check(); err != nil {
		return fmt.Errorf("pki: %w", err)
	}
	if c.ClientValidity == 0 {
		c.ClientValidity = DefaultClientValidity
	}
	if c.ClientValidity < time.Minute {
		return fmt.Errorf("pki: ClientValidity %s is too short", c.ClientValidity)
	}
	if c.Now == nil {
		c.Now = time.Now
	}
	if c.Logger == nil {
		c.Logger = slog.New(slog.DiscardHandler)
	}
	return nil
}

// openCA loads ca.pem and ca.key, or creates both when neither exists.
func (a *Authority) openCA() error {
	cfg := &a.cfg
	haveCert, err := fileExists(cfg.CAFile)
	if err != nil {
		return fmt.Errorf("check %s: %w", cfg.CAFile, err)
	}
	haveKey, err := fileExists(cfg.CAKeyFile)
	if err != nil {
		return fmt.Errorf("check %s: %w", cfg.CAKeyFile, err)
	}
	if !haveCert {
		if haveKey {
			return fmt.Errorf("%s is missing but %s exists: refusing to create a new CA over an existing key; restore the CA certificate or remove the key", cfg.CAFile, cfg.CAKeyFile)
		}
		return a.createCA()
	}
	if !haveKey {
		return fmt.Errorf("%s exists but its private key %s is missing", cfg.CAFile, cfg.CAKeyFile)
	}
	certs, err := readCertsFile(cfg.CAFile)
	if err != nil {
		return fmt.Errorf("load CA certificate: %w", err)
	}
	cert, chain := certs[0], certs[1:]
	key, err := readKeyFile(cfg.CAKeyFile)
	if err != nil {
		return fmt.Errorf("load CA key: %w", err)
	}
	if !publicKeysEqual(cert, key) {
		return fmt.Errorf("%s does not belong to the CA certificate in %s", cfg.CAKeyFile, cfg.CAFile)
	}
	if !cert.IsCA || !cert.BasicConstraintsValid {
		return fmt.Errorf("%s: certificate %q is not a CA certificate", cfg.CAFile, cert.Subject.CommonName)
	}
	if now := a.now(); now.After(cert.NotAfter) {
		return fmt.Errorf("%s: CA certificate expired on %s; every client must be re-provisioned with a new CA", cfg.CAFile, cert.NotAfter.UTC().Format(time.RFC3339))
	}
	if err := checkChain(cert, chain, a.now()); err != nil {
		return fmt.Errorf("%s: %w", cfg.CAFile, err)
	}
	a.caCert, a.caKey, a.caChain, a.caPEM = cert, key, chain, bundlePEM(cert, chain)
	attrs := []any{"file", cfg.CAFile, "subject", cert.Subject.CommonName}
	if len(chain) > 0 {
		attrs = append(attrs, "root", chain[len(chain)-1].Subject.CommonName, "chain_length", len(chain)+1)
	}
	a.log.Info("loaded CA", attrs...)
	return nil
}

func (a *Authority) createCA() error {
	cfg := &a.cfg
	key, err := newKey(cfg.KeyType)
	if err != nil {
		return err
	}
	cert, err := a.signCert(caTemplate(cfg.ServerName, a.now()), key.Public(), nil, key)
	if err != nil {
		return fmt.Errorf("create CA certificate: %w", err)
	}
	kp, err := keyPEM(key)
	if err != nil {
		return err
	}
	// Key first: a crash between the two writes leaves a key without a
	// certificate, which openCA reports instead of silently replacing it.
	if err := atomicfile.Write(cfg.CAKeyFile, kp, 0o600); err != nil {
		return err
	}
	cp := certPEM(cert)
	if err := atomicfile.Write(cfg.CAFile, cp, 0o644); err != nil {
		return err
	}
	a.caCert, a.caKey, a.caPEM = cert, key, cp
	a.log.Info("created a new CA", "file", cfg.CAFile, "key_file", cfg.CAKeyFile,
		"subject", cert.Subject.CommonName, "key_type", cfg.KeyType)
	return nil
}

// openServer loads the server certificate and key, checks them against the CA
// and cfg.SANs, and issues a new server certificate when none exists, when it
// expired or when its SANs do not cover cfg.SANs. The CA is always kept.
func (a *Authority) openServer() error {
	cfg := &a.cfg
	haveCert, err := fileExists(cfg.CertFile)
	if err != nil {
		return fmt.Errorf("check %s: %w", cfg.CertFile, err)
	}
	haveKey, err := fileExists(cfg.KeyFile)
	if err != nil {
		return fmt.Errorf("check %s: %w", cfg.KeyFile, err)
	}
	if !haveCert || !haveKey {
		a.log.Info("no server certificate yet; issuing one", "file", cfg.CertFile)
		return a.issueServer()
	}
	cert, _, err := readCertFile(cfg.CertFile)
	if err != nil {
		return fmt.Errorf("load server certificate: %w", err)
	}
	key, err := readKeyFile(cfg.KeyFile)
	if err != nil {
		return fmt.Errorf("load server key: %w", err)
	}
	if !publicKeysEqual(cert, key) {
		return fmt.Errorf("%s does not belong to the server certificate in %s", cfg.KeyFile, cfg.CertFile)
	}
	if err := cert.CheckSignatureFrom(a.caCert); err != nil {
		return fmt.Errorf("%s is not signed by the CA in %s: %w", cfg.CertFile, cfg.CAFile, err)
	}
	if now := a.now(); now.After(cert.NotAfter) {
		a.log.Warn("server certificate expired; issuing a new one with the same CA",
			"file", cfg.CertFile, "not_after", cert.NotAfter)
		return a.issueServer()
	}
	if missing := a.sans.notCoveredBy(cert); len(missing) > 0 {
		a.log.Warn("server certificate does not cover the configured names; issuing a new one with the same CA",
			"file", cfg.CertFile, "missing", missing)
		err := a.issueServer()
		if err == nil {
			return nil
		}
		// The files are as they were (issueServer writes them as one set):
		// a start on a full disk serves with the valid certificate it has.
		a.log.Error("could not write a new server certificate; serving with the current one, which does not name them",
			"file", cfg.CertFile, "missing", missing, "err", err)
	}
	a.serverCert = a.tlsCertificate(cert, key)
	a.log.Info("loaded server certificate", "file", cfg.CertFile, "subject", cert.Subject.CommonName,
		"dns", cert.DNSNames, "ip", cert.IPAddresses)
	return a.ensureServerCompanions(key, cert)
}

func (a *Authority) issueServer() error {
	files, tc, err := a.newServerFiles()
	if err != nil {
		return err
	}
	// One set: a failure while writing (a full disk) leaves the old key
	// and certificate, which still belong together.
	if err := atomicfile.WriteAll(files...); err != nil {
		return err
	}
	a.serverCert = tc
	a.logServerIssued()
	return nil
}

func (a *Authority) logServerIssued() {
	cfg, cert := &a.cfg, a.serverCert.Leaf
	a.log.Info("issued server certificate", "file", cfg.CertFile, "key_file", cfg.KeyFile,
		"p12_file", cfg.P12File, "subject", cert.Subject.CommonName,
		"dns", cert.DNSNames, "ip", cert.IPAddresses, "not_after", cert.NotAfter)
}

// newServerFiles makes a server key and certificate signed by the CA and
// returns the files that hold them (key, unencrypted key copy, certificate,
// server.p12) without writing them, and the TLS certificate to serve.
func (a *Authority) newServerFiles() ([]atomicfile.File, tls.Certificate, error) {
	cfg := &a.cfg
	key, err := newKey(cfg.KeyType)
	if err != nil {
		return nil, tls.Certificate{}, err
	}
	tmpl := serverTemplate(cfg.ServerName, a.sans, a.now(), key.Public())
	if tmpl.NotAfter.After(a.caCert.NotAfter) {
		tmpl.NotAfter = a.caCert.NotAfter // never outlive the issuer (an imported CA may expire sooner)
	}
	cert, err := a.signCert(tmpl, key.Public(), a.caCert, a.caKey)
	if err != nil {
		return nil, tls.Certificate{}, fmt.Errorf("issue server certificate: %w", err)
	}
	kp, err := keyPEM(key)
	if err != nil {
		return nil, tls.Certificate{}, err
	}
	p12, err := a.serverP12(key, cert)
	if err != nil {
		return nil, tls.Certificate{}, err
	}
	return []atomicfile.File{
		{Path: cfg.KeyFile, Data: kp, Perm: 0o600},
		{Path: cfg.UnencryptedKeyFile, Data: kp, Perm: 0o600},
		{Path: cfg.CertFile, Data: certPEM(cert), Perm: 0o644},
		{Path: cfg.P12File, Data: p12, Perm: 0o600},
	}, a.tlsCertificate(cert, key), nil
}

// tlsCertificate is what the listeners serve: the server certificate, then
// the CA and its issuers when the CA is not itself a root, so a client that
// trusts only an organisation's root can build the path. A self-signed root
// is never sent (the client has it or the handshake fails anyway).
func (a *Authority) tlsCertificate(cert *x509.Certificate, key crypto.Signer) tls.Certificate {
	tc := tls.Certificate{Certificate: [][]byte{cert.Raw}, PrivateKey: key, Leaf: cert}
	for _, c := range a.CAChain() {
		if !selfSigned(c) {
			tc.Certificate = append(tc.Certificate, c.Raw)
		}
	}
	return tc
}

// ensureServerCompanions rewrites server.key.unencrypted and server.p12 when
// they are missing, or (for the .p12) when it no longer opens with the
// configured password or holds another certificate.
func (a *Authority) ensureServerCompanions(key crypto.Signer, cert *x509.Certificate) error {
	cfg := &a.cfg
	if ok, err := fileExists(cfg.UnencryptedKeyFile); err != nil {
		return fmt.Errorf("check %s: %w", cfg.UnencryptedKeyFile, err)
	} else if !ok {
		kp, err := keyPEM(key)
		if err != nil {
			return err
		}
		if err := atomicfile.Write(cfg.UnencryptedKeyFile, kp, 0o600); err != nil {
			return err
		}
		a.log.Info("wrote unencrypted server key copy", "file", cfg.UnencryptedKeyFile)
	}
	if a.serverP12Current(cert) {
		return nil
	}
	if err := a.writeServerP12(key, cert); err != nil {
		return err
	}
	a.log.Info("wrote server PKCS#12", "file", cfg.P12File)
	return nil
}

// CACert returns the CA certificate.
func (a *Authority) CACert() *x509.Certificate { return a.caCert }

// CAPEM returns the CA certificate as PEM, followed by its issuers when it
// is an imported intermediate (what ca.pem holds).
func (a *Authority) CAPEM() []byte { return append([]byte(nil), a.caPEM...) }

// CAChain returns the CA certificate followed by its issuers up to the root
// (just the CA when it is its own root): what truststores and enrollment
// answers carry, in that order (ca0, ca1, …).
func (a *Authority) CAChain() []*x509.Certificate {
	return append([]*x509.Certificate{a.caCert}, a.caChain...)
}

// ServerCertificate returns the server's TLS certificate (leaf set).
func (a *Authority) ServerCertificate() tls.Certificate { return a.serverCert }

// ServerName returns the configured server identity.
func (a *Authority) ServerName() string { return a.cfg.ServerName }

// Ports are the listener ports that connection packages name: the CoT TLS
// port of the connect string, the client API's HTTPS port
// (apiSecureServerPort) and the enrollment port (apiCertEnrollmentPort).
type Ports struct {
	SSLCoT int
	HTTPS  int
	Enroll int
}

func (p Ports) check() error {
	for _, v := range []struct {
		name string
		port int
	}{{"SSLCoTPort", p.SSLCoT}, {"HTTPSPort", p.HTTPS}, {"EnrollPort", p.Enroll}} {
		if v.port < 1 || v.port > 65535 {
			return fmt.Errorf("%s %d is out of range (a port is 1-65535)", v.name, v.port)
		}
	}
	return nil
}

// Ports returns the ports packages are built with now.
func (a *Authority) Ports() Ports { return *a.ports.Load() }

// SetPorts replaces the published ports, for a server whose listeners were
// given port 0 and learned their real ports on binding. Zero fields keep
// their value.
func (a *Authority) SetPorts(p Ports) error {
	cur := a.Ports()
	if p.SSLCoT == 0 {
		p.SSLCoT = cur.SSLCoT
	}
	if p.HTTPS == 0 {
		p.HTTPS = cur.HTTPS
	}
	if p.Enroll == 0 {
		p.Enroll = cur.Enroll
	}
	if err := p.check(); err != nil {
		return fmt.Errorf("pki: %w", err)
	}
	a.ports.Store(&p)
	return nil
}
