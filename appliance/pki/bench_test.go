package pki

import (
	"crypto/tls"
	"net"
	"testing"
	"time"
)

// benchHandshakes runs full mutual-TLS handshakes (no session resumption)
// over net.Pipe between ServerTLSConfig and a client holding a certificate
// issued by the same authority, and reports handshakes per second.
func benchHandshakes(b *testing.B, keyType string) {
	cfg := testConfig(b, "")
	cfg.KeyType = keyType
	a := openTest(b, cfg)
	cc := issue(b, a, "bench")
	serverCfg := a.ServerTLSConfig()
	serverCfg.SessionTicketsDisabled = true
	clientCfg := &tls.Config{
		RootCAs:      poolOf(a),
		ServerName:   testHost,
		Certificates: []tls.Certificate{*tlsCert(cc)},
		MinVersion:   tls.VersionTLS12,
	}
	n := 0
	start := time.Now()
	for b.Loop() {
		c1, c2 := net.Pipe()
		errc := make(chan error, 1)
		go func() {
			s := tls.Server(c1, serverCfg)
			errc <- s.Handshake()
		}()
		if err := tls.Client(c2, clientCfg).Handshake(); err != nil {
			b.Fatal(err)
		}
		if err := <-errc; err != nil {
			b.Fatal(err)
		}
		c1.Close()
		c2.Close()
		n++
	}
	b.ReportMetric(float64(n)/time.Since(start).Seconds(), "handshakes/s")
}

func BenchmarkHandshakeRSA(b *testing.B)   { benchHandshakes(b, KeyTypeRSA) }
func BenchmarkHandshakeECDSA(b *testing.B) { benchHandshakes(b, KeyTypeECDSAP256) }

// benchIssue measures IssueClient end to end: key generation, signing, the
// PKCS#12 and the durable issuance-index write.
func benchIssue(b *testing.B, keyType string) {
	cfg := testConfig(b, "")
	cfg.KeyType = keyType
	a := openTest(b, cfg)
	for b.Loop() {
		if _, err := a.IssueClient("bench-user"); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkIssueClientRSA(b *testing.B)   { benchIssue(b, KeyTypeRSA) }
func BenchmarkIssueClientECDSA(b *testing.B) { benchIssue(b, KeyTypeECDSAP256) }
