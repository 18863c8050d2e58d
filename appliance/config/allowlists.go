package config

import (
	"fmt"
	"net/netip"
	"strings"
)

// AllowLists are the IP allow-lists (api.md §5.4): single addresses or CIDR
// ranges.
type AllowLists struct {
	AllowedCLIIPs []string // AllowedCLIIPs: who may call /Clients
	AllowCLIIPs   []string // AllowCLIIPs: who may use the local command-line interface
}

func defaultAllowLists() AllowLists {
	return AllowLists{AllowedCLIIPs: []string{"127.0.0.1", "::1"}, AllowCLIIPs: []string{"127.0.0.1", "::1"}}
}

// Validate checks that both lists parse.
func (a AllowLists) Validate() error {
	for _, l := range []struct {
		key string
		v   []string
	}{{"AllowedCLIIPs", a.AllowedCLIIPs}, {"AllowCLIIPs", a.AllowCLIIPs}} {
		if _, err := ParseAllowList(l.v); err != nil {
			return keyErr(l.key, err.Error())
		}
	}
	return nil
}

// AllowList is a parsed IP allow-list.
type AllowList []netip.Prefix

// ParseAllowList parses single addresses and CIDR ranges.
func ParseAllowList(entries []string) (AllowList, error) {
	out := make(AllowList, 0, len(entries))
	for _, e := range entries {
		e = strings.TrimSpace(e)
		if e == "" {
			continue
		}
		if strings.Contains(e, "/") {
			p, err := netip.ParsePrefix(e)
			if err != nil {
				return nil, fmt.Errorf("%q is not an address or CIDR range", e)
			}
			out = append(out, p.Masked())
			continue
		}
		a, err := netip.ParseAddr(e)
		if err != nil {
			return nil, fmt.Errorf("%q is not an address or CIDR range", e)
		}
		out = append(out, netip.PrefixFrom(a.Unmap(), a.Unmap().BitLen()))
	}
	return out, nil
}

// Contains reports whether ip is in the list.
func (l AllowList) Contains(ip netip.Addr) bool {
	ip = ip.Unmap()
	for _, p := range l {
		if p.Contains(ip) {
			return true
		}
	}
	return false
}
