package marti

import (
	"crypto/tls"
	"crypto/x509"
	"log/slog"
	"math/big"
	"net"
	"net/http"
	"sync"

	"outpost/appliance/httpapi"
	"outpost/appliance/logx"
)

// HTTPSGuard watches the connections of the mutual-TLS client API (8443):
// it remembers the open connections so that a client whose certificate is
// revoked while connected (api.md §5.11) can be cut off (CloseRevoked), and
// refuses requests from revoked certificates on connections established
// before the revocation (Middleware). Install ConnState as the
// http.Server's ConnState hook.
type HTTPSGuard struct {
	isRevoked func(serial *big.Int) bool
	log       *slog.Logger

	mu    sync.Mutex // mu guards conns
	conns map[*tls.Conn]struct{}
}

// NewHTTPSGuard returns a guard that asks isRevoked about each client certificate.
func NewHTTPSGuard(isRevoked func(*big.Int) bool, log *slog.Logger) *HTTPSGuard {
	return &HTTPSGuard{isRevoked: isRevoked, log: log, conns: map[*tls.Conn]struct{}{}}
}

// revokedLeaf returns the client certificate of cs when it is revoked.
func (t *HTTPSGuard) revokedLeaf(cs *tls.ConnectionState) (*x509.Certificate, bool) {
	if cs == nil || len(cs.PeerCertificates) == 0 {
		return nil, false
	}
	leaf := cs.PeerCertificates[0]
	return leaf, t.isRevoked(leaf.SerialNumber)
}

// ConnState is the http.Server.ConnState hook.
func (t *HTTPSGuard) ConnState(c net.Conn, st http.ConnState) {
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

// CloseRevoked closes every tracked connection whose client certificate is
// now revoked and returns how many it closed.
func (t *HTTPSGuard) CloseRevoked() int {
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

// Middleware refuses a request whose connection's certificate has been
// revoked since the handshake, and closes that connection.
func (t *HTTPSGuard) Middleware(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if leaf, revoked := t.revokedLeaf(r.TLS); revoked {
			t.log.Warn("request refused: client certificate revoked", "user", logx.Clip(leaf.Subject.CommonName),
				"serial", leaf.SerialNumber.String(), "remote", r.RemoteAddr)
			w.Header().Set("Connection", "close")
			httpapi.WriteMessage(w, http.StatusForbidden, "client certificate revoked")
			return
		}
		next.ServeHTTP(w, r)
	})
}
