package config

import (
	"net"
	"strings"
)

// ReachAddresses lists the addresses of this machine clients may use
// besides publicHost: the bound address when the listeners bind one, else
// every local address but loopback (loopback alone when there is no other).
func ReachAddresses(cfg *Config) []string {
	var all []string
	if ip := net.ParseIP(cfg.Bind); ip != nil && !ip.IsUnspecified() {
		all = []string{ip.String()}
	} else {
		var loopback []string
		for _, a := range LocalAddresses() {
			if ip := net.ParseIP(a); ip != nil && ip.IsLoopback() {
				loopback = append(loopback, a)
				continue
			}
			all = append(all, a)
		}
		if len(all) == 0 {
			all = loopback
		}
	}
	out := make([]string, 0, len(all))
	for _, a := range all {
		if !strings.EqualFold(a, cfg.PublicHost) {
			out = append(out, a)
		}
	}
	return out
}
