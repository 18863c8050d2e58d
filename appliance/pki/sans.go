package pki

import (
	"crypto/x509"
	"fmt"
	"net"
	"strings"
)

// sanSet is the parsed form of Config.SANs.
type sanSet struct {
	dns []string
	ips []net.IP
}

// parseSANs splits the configured names into DNS names and IP addresses. The
// server name is added as a DNS name when it is a valid host name.
func parseSANs(in []string, serverName string) (sanSet, error) {
	var s sanSet
	seen := map[string]bool{}
	add := func(raw string, fromConfig bool) error {
		v := strings.Trim(strings.TrimSpace(raw), "[]")
		if v == "" {
			return nil
		}
		if ip := net.ParseIP(v); ip != nil {
			if !seen["ip:"+ip.String()] {
				seen["ip:"+ip.String()] = true
				s.ips = append(s.ips, ip)
			}
			return nil
		}
		v = strings.ToLower(strings.TrimSuffix(v, "."))
		if !validHostname(v) {
			if fromConfig {
				return fmt.Errorf("pki: SAN %q is neither an IP address nor a DNS name", raw)
			}
			return nil
		}
		if !seen["dns:"+v] {
			seen["dns:"+v] = true
			s.dns = append(s.dns, v)
		}
		return nil
	}
	for _, v := range in {
		if err := add(v, true); err != nil {
			return sanSet{}, err
		}
	}
	if err := add(serverName, false); err != nil {
		return sanSet{}, err
	}
	return s, nil
}

// notCoveredBy lists the names of s that cert does not carry.
func (s sanSet) notCoveredBy(cert *x509.Certificate) []string {
	var missing []string
	for _, d := range s.dns {
		found := false
		for _, have := range cert.DNSNames {
			if strings.EqualFold(have, d) {
				found = true
				break
			}
		}
		if !found {
			missing = append(missing, d)
		}
	}
	for _, ip := range s.ips {
		found := false
		for _, have := range cert.IPAddresses {
			if have.Equal(ip) {
				found = true
				break
			}
		}
		if !found {
			missing = append(missing, ip.String())
		}
	}
	return missing
}

// validHostname accepts RFC 1123 host names (letters, digits, hyphens, dots;
// labels of 1-63 characters; at most 253 characters). A leading "*." is allowed.
func validHostname(h string) bool {
	h = strings.TrimPrefix(h, "*.")
	if h == "" || len(h) > 253 {
		return false
	}
	for _, label := range strings.Split(h, ".") {
		if label == "" || len(label) > 63 || label[0] == '-' || label[len(label)-1] == '-' {
			return false
		}
		for i := 0; i < len(label); i++ {
			c := label[i]
			if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '-') {
				return false
			}
		}
	}
	return true
}
