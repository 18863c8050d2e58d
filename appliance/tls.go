package appliance

import (
	"crypto/tls"
	"crypto/x509"
	"log/slog"
	"math/big"
	"net"
	"net/http"
	"os"
	"strings"
	"sync"

	"outpost/appliance/config"
	"outpost/appliance/pki"
)

// openAuthority opens (on first run: creates) the certificate authority
// described by the configuration. The server certificate names the public
// host, the machine's host name and every local address.
func openAuthority(cfg *config.Config, log *slog.Logger) (*pki.Authority, error) {
	sans := []string{cfg.PublicHost, "localhost"}
	if h, err := os.Hostname(); err == nil && h != "" {
		sans = append(sans, h)
	}
	sans = append(sans, config.LocalAddresses()...)
	return pki.Open(pki.Config{
		CertsDir:           cfg.CertsPath,
		KeyFile:            cfg.KeyDir,
		CertFile:           cfg.PemDir,
		UnencryptedKeyFile: cfg.UnencryptedKey,
		P12File:            cfg.P12Dir,
		CAFile:             cfg.CA,
		CAKeyFile:          cfg.CAKey,
		CRLFile:            cfg.CRLFile,
		ClientPackagesDir:  cfg.ClientPackages,
		KeyType:            cfg.KeyType,
		ServerName:         cfg.ServerName,
		PublicHost:         cfg.PublicHost,
		SANs:               dedupe(sans),
		Password:           cfg.Password,
		SSLCoTPort:         publishedPort(cfg.SSLCoTPort, 8089),
		EnrollPort:         publishedPort(cfg.EnrollPort, 8446),
		HTTPSPort:          publishedPort(cfg.HTTPSPort, 8443),
		Logger:             log,
	})
}

// publishedPort is the port written into client packages: the configured
// one, or the default when the listener is disabled or on a random port.
func publishedPort(p, def int) int {
	if p > 0 {
		return p
	}
	return def
}

func dedupe(in []string) []string {
	seen := map[string]bool{}
	out := in[:0:0]
	for _, s := range in {
		s = strings.TrimSpace(s)
		if s != "" && !seen[strings.ToLower(s)] {
			seen[strings.ToLower(s)] = true
			out = append(out, s)
		}
	}
	return out
}

// tlsConnTracker remembers the open connections of a mutual-TLS HTTP
// listener so that a client whose certificate is revoked while connected
// (api.md §5.11) can be cut off, and refuses requests from revoked
// certificates on connections established before the revocation.
type tlsConnTracker struct {
	isRevoked func(serial *big.Int) bool
	log       *slog.Logger

	mu    sync.Mutex // mu guards conns
	conns map[*tls.Conn]struct{}
}

func newTLSConnTracker(isRevoked func(*big.Int) bool, log *slog.Logger) *tlsConnTracker {
	return &tlsConnTracker{isRevoked: isRevoked, log: log, conns: map[*tls.Conn]struct{}{}}
}

// revokedLeaf returns the client certificate of cs when it is revoked.
func (t *tlsConnTracker) revokedLeaf(cs *tls.ConnectionState) (*x509.Certificate, bool) {
	if cs == nil || len(cs.PeerCertificates) == 0 {
		return nil, false
	}
	leaf := cs.PeerCertificates[0]
	return leaf, t.isRevoked(leaf.SerialNumber)
}

// connState is the http.Server.ConnState hook.
func (t *tlsConnTracker) connState(c net.Conn, st http.ConnState) {
	tc, ok := c.(*tls.Conn)
	if !ok {
		return
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	switch st {
	case http.StateNew:
		t.conns[tc] = struct{}{}
	case http.StateClosed, http.StateHijacked:
		delete(t.conns, tc)
	}
}

// closeRevoked closes every tracked connection whose client certificate is
// now revoked and returns how many it closed.
func (t *tlsConnTracker) closeRevoked() int {
	t.mu.Lock()
	var hit []*tls.Conn
	for c := range t.conns {
		cs := c.ConnectionState()
		if _, revoked := t.revokedLeaf(&cs); revoked {
			hit = append(hit, c)
		}
	}
	t.mu.Unlock()
	for _, c := range hit {
		c.Close()
	}
	return len(hit)
}

// middleware refuses a request whose connection's certificate has been
// revoked since the handshake, and closes that connection.
func (t *tlsConnTracker) middleware(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if leaf, revoked := t.revokedLeaf(r.TLS); revoked {
			t.log.Warn("request refused: client certificate revoked", "user", leaf.Subject.CommonName,
				"serial", leaf.SerialNumber.String(), "addr", r.RemoteAddr)
			w.Header().Set("Connection", "close")
			w.Header().Set("Content-Type", "application/json")
			w.WriteHeader(http.StatusForbidden)
			w.Write([]byte(`{"message":"client certificate revoked"}` + "\n"))
			return
		}
		next.ServeHTTP(w, r)
	})
}

// publishBoundPorts tells the certificate authority the real ports of the
// listeners configured with port 0, so connection packages built by this
// process name the ports clients can reach.
func (a *Appliance) publishBoundPorts() {
	port := func(name string, configured int) int {
		if configured != 0 {
			return 0 // configured (or disabled): the published default stays
		}
		if l, ok := a.listeners[name]; ok && l.Addr() != nil {
			if ta, ok := l.Addr().(*net.TCPAddr); ok {
				return ta.Port
			}
		}
		return 0
	}
	p := pki.Ports{
		SSLCoT: port(ListenerCoTTLS, a.cfg.SSLCoTPort),
		HTTPS:  port(ListenerHTTPS, a.cfg.HTTPSPort),
		Enroll: port(ListenerEnroll, a.cfg.EnrollPort),
	}
	if p == (pki.Ports{}) {
		return
	}
	if err := a.pki.SetPorts(p); err != nil {
		a.log.Warn("could not publish the bound ports in connection packages", "err", err)
	}
}
