package fedhost

import (
	"bytes"
	"crypto/tls"
	"crypto/x509"
	"fmt"
	"log/slog"
	"net"
	"strconv"
	"sync/atomic"
	"time"

	"outpost/appliance/broker"
	"outpost/appliance/config"
	"outpost/appliance/federation"
	"outpost/appliance/mgmt"
	"outpost/appliance/netx"
	"outpost/appliance/pki"
	"outpost/appliance/store"
)

// Limits of the federation listener: connections per source address and
// in total (handshakes in flight alike), and the handshake's time (a
// federate may be far away).
const (
	fedConnsPerSource   = 8
	fedConns            = 64
	fedHandshakeTimeout = 10 * time.Second
	fedRateFactor       = 10
)

// Options are what a Host is built from.
type Options struct {
	Config    *config.Config
	Authority *pki.Authority
	Store     *store.Store
	Broker    *broker.Broker
	Logger    *slog.Logger
}

// Host is federation as this server runs it. A nil *Host is federation
// off: its methods do nothing and report nothing.
type Host struct {
	fed      *federation.Federation
	st       *store.Store
	log      *slog.Logger
	identity mgmt.FederationIdentity
	notifier atomic.Pointer[func(kind string, m store.Mission, by string, added []store.ContentChange)]
}

// New builds federation unless federationPort is -1 (then nil, nil). With
// federationTrust (the CAs of its federates) the listener is bound at
// start; without, only while a managed federate is trusted
// (docs/federation.md "Federation without federationTrust"). Its identity
// is federationCert and federationKey, or else the server's certificate.
// Nothing is bound until the listeners' Listen.
func New(o Options) (*Host, error) {
	cfg := o.Config
	if cfg.FederationPort < 0 {
		return nil, nil
	}
	if o.Logger == nil {
		o.Logger = slog.Default()
	}
	var trusted *x509.CertPool
	if cfg.FederationTrust != "" {
		var err error
		if trusted, err = readTrust(cfg.FederationTrust); err != nil {
			return nil, fmt.Errorf("config federationTrust: %w", err)
		}
	}
	var err error
	cert := o.Authority.ServerCertificate()
	if cfg.FederationCert != "" {
		if cert, err = readKeyPair(cfg.FederationCert, cfg.FederationKey, cfg.FederationKeyPassword); err != nil {
			return nil, fmt.Errorf("config federationCert/federationKey: %w", err)
		}
	}
	name := cfg.FederationName
	if name == "" {
		name = o.Authority.ServerName()
	}
	h := &Host{st: o.Store, log: o.Logger}
	addr := func(port int) string { return net.JoinHostPort(cfg.Bind, strconv.Itoa(port)) }
	fc := federation.Config{Addr: addr(cfg.FederationPort), Certificate: cert, Trusted: trusted, Allow: cfg.FederationAllow, Federates: outbounds(cfg), Name: name,
		ServerID: config.ServerUID(cfg.SecretKey), MaxHops: int64(cfg.FederationMaxHops),
		MaxEventBytes: cfg.MaxMessageBytes, Broker: o.Broker, Logger: o.Logger,
		OnDemand: trusted == nil, Revoked: revokedBy(o.Authority),
		Spool: fedSpool{fs: o.Store.Federates(), bounds: store.QueueBounds{MaxAge: cfg.FederationQueueAge, MaxBytes: cfg.FederationQueueBytes}},
		// Missions over ROL (missions.go).
		Missions:     fedMissions{missions: o.Store.Missions(), files: o.Store.Files(), accounts: o.Store.Accounts(), notify: h.notify},
		MaxFileBytes: cfg.MaxUploadBytes,
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
	listen := func(name string) func(string, *tls.Config) (net.Listener, error) {
		return func(addr string, tc *tls.Config) (net.Listener, error) {
			return netx.Listen(netx.Config{Name: name, Addr: addr, Conns: []*netx.Limits{conns}, TLS: tc,
				HandshakeTimeout: max(cfg.SSLHandshakeTimeout, fedHandshakeTimeout), Handshakes: handshakes, Logger: o.Logger})
		}
	}
	fc.Listen = listen(federation.ListenerName)
	if cfg.FederationV1Port >= 0 {
		// Federation v1 shares the v2 listener's limits: the same federates.
		fc.V1Addr = addr(cfg.FederationV1Port)
		fc.V1Listen = listen(federation.ListenerV1Name)
	}
	h.fed = federation.New(fc)
	h.identity = identityOf(name, fc.ServerID, cert)
	return h, nil
}

// Federation is the federation h runs (nil when off).
func (h *Host) Federation() *federation.Federation {
	if h == nil {
		return nil
	}
	return h.fed
}

// revokedBy reports a certificate this appliance's CA issued and revoked
// (crl.pem, as on 8089 and 8443): a federate holding one is refused at the
// handshake (docs/federation.md "Revoked certificates"). A certificate of
// another CA is that CA's to revoke.
func revokedBy(auth *pki.Authority) func(*x509.Certificate) bool {
	return func(c *x509.Certificate) bool {
		ca := auth.CACert()
		if ca == nil || !bytes.Equal(c.RawIssuer, ca.RawSubject) || c.CheckSignatureFrom(ca) != nil {
			return false
		}
		return auth.IsRevoked(c.SerialNumber)
	}
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

// Status is GET /api/federation's identity and listener (the zero status
// when federation is off).
func (h *Host) Status() mgmt.FederationStatus {
	if h == nil {
		return mgmt.FederationStatus{}
	}
	st := mgmt.FederationStatus{Identity: h.identity}
	st.Listening, st.ListenError = h.fed.Listening()
	return st
}

// View is GET /api/federation's list (nil when federation is off).
func (h *Host) View() any {
	if h == nil {
		return nil
	}
	return h.Stats()
}

// EndRevoked ends the links of federates whose certificate this CA
// revoked; it returns how many.
func (h *Host) EndRevoked() int {
	if h == nil {
		return 0
	}
	return h.fed.EndRevoked()
}

// Stats returns each federate's counters (nil when federation is off).
func (h *Host) Stats() []federation.FederateStats {
	if h == nil {
		return nil
	}
	return h.fed.Stats()
}
