package config

import (
	"fmt"
	"net"
	"strconv"
	"strings"
	"time"
)

// Federation is TAK federation (docs/federation.md): the listeners, the
// federates this server connects to, whom it trusts, its own federation
// certificate, and the persistent outbound queue of each outbound federate
// while its link is down (docs/federation.md "Disruption tolerance").
type Federation struct {
	FederationPort        int           // federationPort: federation v2 listener (-1: federation off; without federationTrust it opens only while a managed federate has a CA)
	FederationV1Port      int           // federationV1Port: federation v1 listener (-1, the default: none)
	FederationTrust       string        // federationTrust: PEM file of the CAs whose federates are trusted
	FederationAllow       []string      // federationAllow: federates let in by certificate common name or SHA-256 fingerprint (empty: any of the trusted CAs)
	Federates             []string      // federates: outbound federates, name=host:port
	FederationName        string        // federationName: this server's name to federates (default: serverName)
	FederationMaxHops     int           // federationMaxHops: hop limit of events that start here (0: none)
	FederationCert        string        // federationCert: this server's federation certificate file (with federationKey)
	FederationKey         string        // federationKey: its key file
	FederationKeyPassword string        // federationKeyPassword: the key's password (a secret: never printed)
	FederationQueueAge    time.Duration // federationQueueAge: events older than this are dropped from the queue
	FederationQueueBytes  int64         // federationQueueBytes: above this, the queue's oldest events are dropped
}

func defaultFederation() Federation {
	return Federation{FederationPort: 9001, FederationV1Port: -1, FederationQueueAge: time.Hour, FederationQueueBytes: 64 << 20}
}

// FederateList returns the outbound federates (name, host:port). Validate
// has checked them.
func (f Federation) FederateList() (names, addrs []string) {
	for _, e := range f.Federates {
		n, a, _, _ := parseFederate(e)
		names, addrs = append(names, n), append(addrs, a)
	}
	return names, addrs
}

// FederateV1 reports, for each entry of FederateList, whether it is
// connected to with federation v1 (an entry ending in /v1).
func (f Federation) FederateV1() []bool {
	var v1 []bool
	for _, e := range f.Federates {
		_, _, is, _ := parseFederate(e)
		v1 = append(v1, is)
	}
	return v1
}

// parseFederate parses one federates entry, name=host:port, optionally
// followed by /v1 (federation v1) or /v2 (the default).
func parseFederate(s string) (name, addr string, v1 bool, err error) {
	name, addr, ok := strings.Cut(s, "=")
	if !ok || name == "" || len(name) > 64 || strings.ContainsAny(name, " \t") {
		return "", "", false, fmt.Errorf("%q is not name=host:port", s)
	}
	if a, ok := strings.CutSuffix(addr, "/v1"); ok {
		addr, v1 = a, true
	} else {
		addr = strings.TrimSuffix(addr, "/v2")
	}
	host, port, err := net.SplitHostPort(addr)
	if err != nil || host == "" {
		return "", "", false, fmt.Errorf("%q is not name=host:port (optionally followed by /v1 or /v2)", s)
	}
	if p, err := strconv.Atoi(port); err != nil || p < 1 || p > 65535 {
		return "", "", false, fmt.Errorf("%q: %q is not a port", s, port)
	}
	return name, addr, v1, nil
}

// Validate checks the ports, the federates, the trust they need, the
// allow-list, the certificate and key together, the queue and the hop limit.
func (f Federation) Validate() error {
	if f.FederationPort < -1 || f.FederationPort > 65535 {
		return portErr("federationPort", f.FederationPort)
	}
	if f.FederationV1Port < -1 || f.FederationV1Port > 65535 {
		return portErr("federationV1Port", f.FederationV1Port)
	}
	if f.FederationV1Port >= 0 && f.FederationPort < 0 {
		return keyErr("federationV1Port", "is set while federationPort is -1 (federation off)")
	}
	seen := map[string]bool{}
	for _, e := range f.Federates {
		n, _, _, err := parseFederate(e)
		if err != nil {
			return keyErr("federates", err.Error())
		}
		if seen[n] {
			return keyErr("federates", fmt.Sprintf("%q is named twice", n))
		}
		seen[n] = true
	}
	if len(f.Federates) > 0 && f.FederationTrust == "" {
		return keyErr("federationTrust", "must name the CA file of the federates")
	}
	if len(f.Federates) > 0 && f.FederationPort < 0 {
		return keyErr("federationPort", "is -1 (federation off) while federates are configured")
	}
	for _, a := range f.FederationAllow {
		if a == "" || len(a) > 128 {
			return keyErr("federationAllow", fmt.Sprintf("%q is not a common name or fingerprint", a))
		}
	}
	if (f.FederationCert == "") != (f.FederationKey == "") {
		return keyErr("federationCert", "federationCert and federationKey go together")
	}
	if f.FederationQueueAge < time.Second || f.FederationQueueAge > 30*24*time.Hour {
		return keyErr("federationQueueAge", "must be between 1s and 720h")
	}
	if f.FederationQueueBytes < 1<<10 || f.FederationQueueBytes > 1<<40 {
		return keyErr("federationQueueBytes", "must be between 1KiB and 1TiB")
	}
	if f.FederationMaxHops < 0 || f.FederationMaxHops > 64 {
		return keyErr("federationMaxHops", "must be between 0 (no limit) and 64")
	}
	return nil
}
