package fedhost

import (
	"crypto/x509"
	"encoding/pem"
	"fmt"
	"log/slog"

	"outpost/appliance/admin"
	"outpost/appliance/config"
	"outpost/appliance/federation"
)

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
	s := FederationSummary{Name: cfg.FederationName, ServerID: config.ServerUID(cfg.SecretKey),
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
