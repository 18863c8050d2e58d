package config

import (
	"fmt"
	"net"
	"strconv"
	"strings"
	"time"
)

// FederateList returns the outbound federates (name, host:port). Validate
// has checked them.
func (c *Config) FederateList() (names, addrs []string) {
	for _, f := range c.Federates {
		n, a, _, _ := parseFederate(f)
		names, addrs = append(names, n), append(addrs, a)
	}
	return names, addrs
}

// FederateV1 reports, for each entry of FederateList, whether it is
// connected to with federation v1 (an entry ending in /v1).
func (c *Config) FederateV1() []bool {
	var v1 []bool
	for _, f := range c.Federates {
		_, _, is, _ := parseFederate(f)
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

func (c *Config) checkFederation() error {
	if c.FederationPort < -1 || c.FederationPort > 65535 {
		return keyErr("federationPort", fmt.Sprintf("%d is not a port (use 1-65535, 0 for any free port, -1 to disable)", c.FederationPort))
	}
	if c.FederationV1Port < -1 || c.FederationV1Port > 65535 {
		return keyErr("federationV1Port", fmt.Sprintf("%d is not a port (use 1-65535, 0 for any free port, -1 to disable)", c.FederationV1Port))
	}
	if c.FederationV1Port >= 0 && c.FederationPort < 0 {
		return keyErr("federationV1Port", "is set while federationPort is -1 (federation off)")
	}
	seen := map[string]bool{}
	for _, f := range c.Federates {
		n, _, _, err := parseFederate(f)
		if err != nil {
			return keyErr("federates", err.Error())
		}
		if seen[n] {
			return keyErr("federates", fmt.Sprintf("%q is named twice", n))
		}
		seen[n] = true
	}
	if len(c.Federates) > 0 && c.FederationTrust == "" {
		return keyErr("federationTrust", "must name the CA file of the federates")
	}
	if len(c.Federates) > 0 && c.FederationPort < 0 {
		return keyErr("federationPort", "is -1 (federation off) while federates are configured")
	}
	for _, a := range c.FederationAllow {
		if a == "" || len(a) > 128 {
			return keyErr("federationAllow", fmt.Sprintf("%q is not a common name or fingerprint", a))
		}
	}
	if (c.FederationCert == "") != (c.FederationKey == "") {
		return keyErr("federationCert", "federationCert and federationKey go together")
	}
	if c.FederationQueueAge < time.Second || c.FederationQueueAge > 30*24*time.Hour {
		return keyErr("federationQueueAge", "must be between 1s and 720h")
	}
	if c.FederationQueueBytes < 1<<10 || c.FederationQueueBytes > 1<<40 {
		return keyErr("federationQueueBytes", "must be between 1KiB and 1TiB")
	}
	if c.FederationMaxHops < 0 || c.FederationMaxHops > 64 {
		return keyErr("federationMaxHops", "must be between 0 (no limit) and 64")
	}
	return nil
}
