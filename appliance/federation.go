package appliance

import (
	"bytes"
	"crypto/tls"
	"crypto/x509"
	"encoding/pem"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"os"
	"time"

	"outpost/appliance/admin"
	"outpost/appliance/config"
	"outpost/appliance/federation"
	"outpost/appliance/mgmt"
	"outpost/appliance/netx"
	"outpost/appliance/store"
)

// ListenerFederation is the federation v2 listener (docs/federation.md).
const ListenerFederation = federation.ListenerName

// ListenerFederationV1 is the federation v1 listener (docs/federation.md
// "Federation v1"), on only with federationV1Port.
const ListenerFederationV1 = federation.ListenerV1Name

// Limits of the federation listener: connections per source address and
// in total (handshakes in flight alike), and the handshake's time (a
// federate may be far away).
const (
	fedConnsPerSource   = 8
	fedConns            = 64
	fedHandshakeTimeout = 10 * time.Second
	fedRateFactor       = 10
)

// maxPEMFile bounds the certificate and key files read for federation.
const maxPEMFile = 1 << 20

// buildFederation creates federation unless federationPort is -1 (not yet
// bound). With federationTrust (the CAs of its federates) the listener is
// bound at start; without, only while a managed federate is trusted
// (docs/federation.md "Federation without federationTrust"). Its identity
// is federationCert and federationKey, or else the server's certificate.
func (a *Appliance) buildFederation() error {
	cfg := &a.cfg
	if cfg.FederationPort < 0 {
		a.add(ListenerFederation, -1, nil)
		return nil
	}
	var trusted *x509.CertPool
	if cfg.FederationTrust != "" {
		var err error
		if trusted, err = readTrust(cfg.FederationTrust); err != nil {
			return fmt.Errorf("config federationTrust: %w", err)
		}
	}
	var err error
	cert := a.pki.ServerCertificate()
	if cfg.FederationCert != "" {
		if cert, err = readKeyPair(cfg.FederationCert, cfg.FederationKey, cfg.FederationKeyPassword); err != nil {
			return fmt.Errorf("config federationCert/federationKey: %w", err)
		}
	}
	name := cfg.FederationName
	if name == "" {
		name = a.pki.ServerName()
	}
	fc := federation.Config{Addr: a.addr(cfg.FederationPort), Certificate: cert, Trusted: trusted, Allow: cfg.FederationAllow, Federates: outbounds(cfg), Name: name,
		ServerID: "outpost-" + NodeID(cfg.SecretKey), MaxHops: int64(cfg.FederationMaxHops),
		MaxEventBytes: cfg.MaxMessageBytes, Broker: a.broker, Logger: a.log,
		OnDemand: trusted == nil, Revoked: a.revokedHere,
		Spool: fedSpool{fs: a.store.Federates(), bounds: store.QueueBounds{MaxAge: cfg.FederationQueueAge, MaxBytes: cfg.FederationQueueBytes}},
		// Missions over ROL (federation_missions.go).
		Missions: fedMissions{missions: a.store.Missions(), files: a.store.Files(), accounts: a.store.Accounts(), notify: a.fedNotify}, MaxFileBytes: cfg.MaxUploadBytes,
		// A federate's first link since start is sent the mission changes
		// of the queue's age (docs/federation.md "Missions over ROL").
		ROLReplay: cfg.FederationQueueAge,
		// Each session of a link (a remote contact, or the rest of what the
		// federate sends) is paced like a client with ten times a client's
		// rates: a federate that floods is made to wait, its link's other
		// traffic with it (docs/federation.md "Events").
		MaxEventsPerSecond: fedRateFactor * cfg.ClientEventsPerSecond, MaxBytesPerSecond: fedRateFactor * cfg.ClientBytesPerSecond}
	// The connection intake of every port (architecture.md "The five
	// listeners"), with limits of its own: federates are few.
	conns, handshakes := netx.NewLimits(fedConnsPerSource, fedConns), netx.NewLimits(fedConnsPerSource, fedConns)
	fc.Listen = func(addr string, tc *tls.Config) (net.Listener, error) {
		return netx.Listen(netx.Config{Name: ListenerFederation, Addr: addr, Conns: []*netx.Limits{conns}, TLS: tc,
			HandshakeTimeout: max(cfg.SSLHandshakeTimeout, fedHandshakeTimeout), Handshakes: handshakes, Logger: a.log})
	}
	if cfg.FederationV1Port >= 0 {
		// Federation v1 shares the v2 listener's limits: the same federates.
		fc.V1Addr = a.addr(cfg.FederationV1Port)
		fc.V1Listen = func(addr string, tc *tls.Config) (net.Listener, error) {
			return netx.Listen(netx.Config{Name: ListenerFederationV1, Addr: addr, Conns: []*netx.Limits{conns}, TLS: tc,
				HandshakeTimeout: max(cfg.SSLHandshakeTimeout, fedHandshakeTimeout), Handshakes: handshakes, Logger: a.log})
		}
	}
	a.fed = federation.New(fc)
	a.add(ListenerFederation, 0, a.fed)
	if v1 := a.fed.V1(); v1 != nil {
		a.add(ListenerFederationV1, 0, v1)
	}
	a.fedIdentity = identityOf(name, fc.ServerID, cert)
	return nil
}

// revokedHere reports a certificate this appliance's CA issued and revoked
// (crl.pem, as on 8089 and 8443): a federate holding one is refused at the
// handshake (docs/federation.md "Revoked certificates"). A certificate of
// another CA is that CA's to revoke.
func (a *Appliance) revokedHere(c *x509.Certificate) bool {
	ca := a.pki.CACert()
	if ca == nil || !bytes.Equal(c.RawIssuer, ca.RawSubject) || c.CheckSignatureFrom(ca) != nil {
		return false
	}
	return a.pki.IsRevoked(c.SerialNumber)
}

// identityOf is this server's federation identity as GET /api/federation
// shows it.
func identityOf(name, serverID string, cert tls.Certificate) mgmt.FederationIdentity {
	id := mgmt.FederationIdentity{Name: name, ServerID: serverID}
	if len(cert.Certificate) == 0 {
		return id
	}
	if leaf, err := x509.ParseCertificate(cert.Certificate[0]); err == nil {
		id.Subject, id.Issuer, id.Fingerprint = leaf.Subject.String(), leaf.Issuer.String(), federation.Fingerprint(leaf.Raw)
	}
	return id
}

// federationStatus is GET /api/federation's identity and listener.
func (a *Appliance) federationStatus() mgmt.FederationStatus {
	st := mgmt.FederationStatus{Identity: a.fedIdentity}
	if a.fed != nil {
		st.Listening, st.ListenError = a.fed.Listening()
	}
	return st
}

// readTrust reads a PEM file of CA certificates.
func readTrust(path string) (*x509.CertPool, error) {
	b, err := readSmall(path)
	if err != nil {
		return nil, err
	}
	pool := x509.NewCertPool()
	if !pool.AppendCertsFromPEM(b) {
		return nil, errors.New("no PEM certificate in " + path)
	}
	return pool, nil
}

// readKeyPair reads a PEM certificate (with its chain) and its PEM key,
// decrypting a key encrypted the legacy PEM way with password.
func readKeyPair(certPath, keyPath, password string) (tls.Certificate, error) {
	cb, err := readSmall(certPath)
	if err != nil {
		return tls.Certificate{}, err
	}
	kb, err := readSmall(keyPath)
	if err != nil {
		return tls.Certificate{}, err
	}
	if blk, _ := pem.Decode(kb); blk != nil && x509.IsEncryptedPEMBlock(blk) { //nolint:staticcheck // the legacy format is what such keys are in
		if password == "" {
			return tls.Certificate{}, errors.New("the key is encrypted: set federationKeyPassword")
		}
		der, err := x509.DecryptPEMBlock(blk, []byte(password)) //nolint:staticcheck
		if err != nil {
			return tls.Certificate{}, fmt.Errorf("decrypting the key: %w", err)
		}
		kb = pem.EncodeToMemory(&pem.Block{Type: blk.Type, Bytes: der})
	}
	return tls.X509KeyPair(cb, kb)
}

func readSmall(path string) ([]byte, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return nil, err
	}
	if st.Size() > maxPEMFile {
		return nil, fmt.Errorf("%s is larger than %d bytes", path, maxPEMFile)
	}
	b := make([]byte, st.Size())
	_, err = io.ReadFull(f, b)
	return b, err
}

// FederationStats returns each federate's counters (nil when federation is
// off).
func (a *Appliance) FederationStats() []federation.FederateStats {
	if a.fed == nil {
		return nil
	}
	return a.fed.Stats()
}

// federationView is GET /api/federation's list (nil when federation is off).
func (a *Appliance) federationView() any {
	if a.fed == nil {
		return nil
	}
	return a.fed.Stats()
}

// FederationSummary is what an operator exchanges with a federate's
// administrator (docs/federation.md "Certificates"): this server's
// federation identity and the CAs and federates it is configured with.
type FederationSummary struct {
	Name        string // federationName, or the server's name
	ServerID    string // the id in provenance
	Subject     string // the federation certificate's subject
	Fingerprint string // its SHA-256 fingerprint
	Trusted     []TrustedCA
	Federates   []federation.Outbound
}

// TrustedCA is one CA of federationTrust.
type TrustedCA struct {
	Subject, Fingerprint string
}

// DescribeFederation reads the federation identity and trust the
// configuration names, without a running server (`outpost federate list`).
func DescribeFederation(cfg config.Config, log *slog.Logger) (FederationSummary, error) {
	if err := admin.PrepareData(&cfg, log); err != nil {
		return FederationSummary{}, err
	}
	auth, err := admin.OpenAuthority(&cfg, log)
	if err != nil {
		return FederationSummary{}, err
	}
	cert := auth.ServerCertificate()
	if cfg.FederationCert != "" {
		if cert, err = readKeyPair(cfg.FederationCert, cfg.FederationKey, cfg.FederationKeyPassword); err != nil {
			return FederationSummary{}, fmt.Errorf("config federationCert/federationKey: %w", err)
		}
	}
	leaf, err := x509.ParseCertificate(cert.Certificate[0])
	if err != nil {
		return FederationSummary{}, err
	}
	s := FederationSummary{Name: cfg.FederationName, ServerID: "outpost-" + NodeID(cfg.SecretKey),
		Subject: leaf.Subject.String(), Fingerprint: federation.Fingerprint(leaf.Raw)}
	if s.Name == "" {
		s.Name = auth.ServerName()
	}
	if cfg.FederationTrust != "" {
		b, err := readSmall(cfg.FederationTrust)
		if err != nil {
			return s, fmt.Errorf("config federationTrust: %w", err)
		}
		for rest := b; ; {
			var blk *pem.Block
			if blk, rest = pem.Decode(rest); blk == nil {
				break
			}
			if c, err := x509.ParseCertificate(blk.Bytes); err == nil {
				s.Trusted = append(s.Trusted, TrustedCA{Subject: c.Subject.String(), Fingerprint: federation.Fingerprint(c.Raw)})
			}
		}
	}
	s.Federates = outbounds(&cfg)
	return s, nil
}

// outbounds are the federates of the configuration.
func outbounds(cfg *config.Config) []federation.Outbound {
	var outs []federation.Outbound
	names, addrs := cfg.FederateList()
	v1 := cfg.FederateV1()
	for i := range names {
		outs = append(outs, federation.Outbound{Name: names[i], Address: addrs[i], V1: v1[i]})
	}
	return outs
}

// CASummary names the CA certificates of a managed federate's PEM by
// subject common name and SHA-256 fingerprint ("none" without any).
func CASummary(caPEM string) string {
	out := ""
	for rest := []byte(caPEM); ; {
		var blk *pem.Block
		if blk, rest = pem.Decode(rest); blk == nil {
			break
		}
		c, err := x509.ParseCertificate(blk.Bytes)
		if err != nil {
			continue
		}
		if out != "" {
			out += ", "
		}
		out += c.Subject.CommonName + " " + federation.Fingerprint(c.Raw)
	}
	if out == "" {
		return "none"
	}
	return out
}
