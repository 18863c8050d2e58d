package pki

import (
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/base64"
	"errors"
	"io"
	"net"
	"path/filepath"
	"testing"
	"time"
)

const (
	testPassword = "s3cret-test-pw"
	testHost     = "tak.example.org"
)

// testConfig is a configuration in a fresh temporary directory. ECDSA keeps
// the tests fast; tests about RSA ask for it.
func testConfig(t testing.TB, dir string) Config {
	t.Helper()
	if dir == "" {
		dir = filepath.Join(t.TempDir(), "certs")
	}
	return Config{
		CertsDir:   dir,
		KeyType:    KeyTypeECDSAP256,
		ServerName: "outpost-test",
		PublicHost: testHost,
		SANs:       []string{testHost, "127.0.0.1"},
		Password:   testPassword,
	}
}

func openTest(t testing.TB, cfg Config) *Authority {
	t.Helper()
	a, err := Open(cfg)
	if err != nil {
		t.Fatalf("Open: %v", err)
	}
	return a
}

func newTestAuthority(t testing.TB) *Authority {
	t.Helper()
	return openTest(t, testConfig(t, ""))
}

func issue(t testing.TB, a *Authority, name string) *ClientCert {
	t.Helper()
	cc, err := a.IssueClient(name)
	if err != nil {
		t.Fatalf("IssueClient(%q): %v", name, err)
	}
	return cc
}

func tlsCert(cc *ClientCert) *tls.Certificate {
	return &tls.Certificate{Certificate: [][]byte{cc.Cert.Raw}, PrivateKey: cc.Key, Leaf: cc.Cert}
}

// signWithValidity signs a client certificate with an explicit validity
// window (to make expired certificates).
func signWithValidity(t *testing.T, a *Authority, name string, notBefore, notAfter time.Time) *ClientCert {
	t.Helper()
	key, err := newKey(KeyTypeECDSAP256)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{
		Subject:     pkix.Name{CommonName: name},
		NotBefore:   notBefore,
		NotAfter:    notAfter,
		KeyUsage:    x509.KeyUsageDigitalSignature,
		ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageClientAuth},
	}
	cert, err := a.signCert(tmpl, key.Public(), a.caCert, a.caKey)
	if err != nil {
		t.Fatal(err)
	}
	return &ClientCert{Name: name, Cert: cert, Key: key}
}

type handshakeResult struct {
	serverErr error
	clientErr error
	state     tls.ConnectionState // server side, valid when serverErr == nil
}

// tryHandshake runs one mutual-TLS handshake over real loopback TCP between a
// server using serverCfg and a client presenting cert (nil: none), which
// trusts roots. The client reads one byte the server writes after a good
// handshake, so a TLS 1.3 rejection also shows on the client side.
func tryHandshake(t *testing.T, serverCfg *tls.Config, cert *tls.Certificate, roots *x509.CertPool) handshakeResult {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	type srv struct {
		err   error
		state tls.ConnectionState
	}
	done := make(chan srv, 1)
	go func() {
		c, err := ln.Accept()
		if err != nil {
			done <- srv{err: err}
			return
		}
		defer c.Close()
		_ = c.SetDeadline(time.Now().Add(20 * time.Second))
		tc := tls.Server(c, serverCfg)
		if err := tc.Handshake(); err != nil {
			done <- srv{err: err}
			return
		}
		st := tc.ConnectionState()
		_, _ = tc.Write([]byte{'!'})
		done <- srv{state: st}
		_, _ = io.Copy(io.Discard, tc) // until the client closes
	}()
	ccfg := &tls.Config{RootCAs: roots, ServerName: testHost, MinVersion: tls.VersionTLS12}
	if cert != nil {
		ccfg.GetClientCertificate = func(*tls.CertificateRequestInfo) (*tls.Certificate, error) { return cert, nil }
	}
	var res handshakeResult
	conn, err := net.Dial("tcp", ln.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	_ = conn.SetDeadline(time.Now().Add(20 * time.Second))
	tc := tls.Client(conn, ccfg)
	if err := tc.Handshake(); err != nil {
		res.clientErr = err
	} else {
		buf := make([]byte, 1)
		if _, err := io.ReadFull(tc, buf); err != nil {
			res.clientErr = err
		}
	}
	_ = tc.Close()
	select {
	case s := <-done:
		res.serverErr, res.state = s.err, s.state
	case <-time.After(30 * time.Second):
		res.serverErr = errors.New("server side did not finish")
	}
	return res
}

func poolOf(a *Authority) *x509.CertPool {
	p := x509.NewCertPool()
	p.AddCert(a.CACert())
	return p
}

func b64(der []byte) string { return base64.StdEncoding.EncodeToString(der) + "\n" }
