package main

import (
	"crypto/tls"
	"crypto/x509"
	"encoding/pem"
	"errors"
	"fmt"
	"net"
	"os"

	"software.sslmate.com/src/go-pkcs12"
)

// tlsConfigs loads the client credentials (PEM pairs or PKCS#12 files) and
// returns one TLS configuration per credential; client i uses
// configs[i%len(configs)]. The server certificate is verified against --ca,
// or the CA certificates inside the .p12 files when --ca is not given.
func tlsConfigs(o *options) ([]*tls.Config, error) {
	var certs []tls.Certificate
	roots := x509.NewCertPool()
	haveRoots := false
	if o.P12 != "" {
		for _, path := range splitList(o.P12) {
			data, err := os.ReadFile(path)
			if err != nil {
				return nil, fmt.Errorf("--p12: %w", err)
			}
			key, leaf, cas, err := pkcs12.DecodeChain(data, o.P12Pass)
			if err != nil {
				return nil, fmt.Errorf("--p12 %s: %w (is --p12-password right?)", path, err)
			}
			certs = append(certs, tls.Certificate{Certificate: [][]byte{leaf.Raw}, PrivateKey: key, Leaf: leaf})
			if o.CA == "" {
				for _, ca := range cas {
					roots.AddCert(ca)
					haveRoots = true
				}
			}
		}
	} else {
		keys := splitList(o.Key)
		for i, path := range splitList(o.Cert) {
			c, err := tls.LoadX509KeyPair(path, keys[i])
			if err != nil {
				return nil, fmt.Errorf("--cert %s / --key %s: %w", path, keys[i], err)
			}
			certs = append(certs, c)
		}
	}
	if o.CA != "" {
		b, err := os.ReadFile(o.CA)
		if err != nil {
			return nil, fmt.Errorf("--ca: %w", err)
		}
		if !appendPEM(roots, b) {
			return nil, fmt.Errorf("--ca %s: no PEM certificate", o.CA)
		}
		haveRoots = true
	}
	if !haveRoots {
		return nil, errors.New("--ca: needed to verify the server (the server's certs/ca.pem); the .p12 files hold no CA certificate")
	}
	name := o.ServerName
	if name == "" {
		name, _, _ = net.SplitHostPort(o.Addr)
	}
	out := make([]*tls.Config, len(certs))
	for i := range certs {
		out[i] = &tls.Config{
			Certificates: certs[i : i+1],
			RootCAs:      roots,
			ServerName:   name,
			MinVersion:   tls.VersionTLS12,
		}
	}
	return out, nil
}

// appendPEM adds every CERTIFICATE block of b to pool.
func appendPEM(pool *x509.CertPool, b []byte) bool {
	ok := false
	for {
		var blk *pem.Block
		blk, b = pem.Decode(b)
		if blk == nil {
			return ok
		}
		if blk.Type != "CERTIFICATE" {
			continue
		}
		c, err := x509.ParseCertificate(blk.Bytes)
		if err != nil {
			continue
		}
		pool.AddCert(c)
		ok = true
	}
}
