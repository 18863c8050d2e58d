package config

import (
	"fmt"
	"net/netip"
	"strings"
	"time"
)

// Management is the management API's (api.md §5): its login tokens, the
// socket.io channel (docs/socketio.md), the certificate packages offered
// to new users' clients, and the IP allow-lists (api.md §5.4: single
// addresses or CIDR ranges) of who may call it without a token.
type Management struct {
	LoginTokenLifetime time.Duration // loginTokenLifetime: validity of a token from POST /api/login
	// The socket.io channel: a socket that has not authenticated with
	// websocketkey this long after its handshake is closed; one address may
	// hold this many such sockets at once (the channel has 32;
	// authenticated sockets do not count).
	ChannelAuthTimeout              time.Duration // channelAuthTimeout
	ChannelUnauthenticatedPerSource int           // channelUnauthenticatedPerSource
	// certOfferWait: how long the certificate package of a user created
	// with Certs "true" waits for a client with the user's callsign, which
	// is then sent it (docs/api-management.md); 0: never sent.
	CertOfferWait time.Duration
	AllowedCLIIPs []string // AllowedCLIIPs: who may call /Clients (and read /metrics) without a token
	AllowCLIIPs   []string // AllowCLIIPs: who may use the local command-line interface
}

// MaxChannelUnauthenticatedPerSource is the largest
// channelUnauthenticatedPerSource: half of the socket.io channel's 32
// sockets (mgmt.DefaultChannelSockets), so that no address can hold them
// all before authenticating.
const MaxChannelUnauthenticatedPerSource = 16

func defaultManagement() Management {
	return Management{
		LoginTokenLifetime:              12 * time.Hour,
		ChannelAuthTimeout:              10 * time.Second,
		ChannelUnauthenticatedPerSource: 4,
		CertOfferWait:                   0, // off: a callsign proves nothing (api-management.md)
		AllowedCLIIPs:                   []string{"127.0.0.1", "::1"},
		AllowCLIIPs:                     []string{"127.0.0.1", "::1"},
	}
}

// Validate checks loginTokenLifetime, the channel's keys, certOfferWait
// and that both allow-lists parse.
func (m Management) Validate() error {
	if m.LoginTokenLifetime < time.Second || m.LoginTokenLifetime > 366*24*time.Hour {
		return keyErr("loginTokenLifetime", "must be between 1s and 366d")
	}
	if m.ChannelAuthTimeout < 100*time.Millisecond || m.ChannelAuthTimeout > time.Minute {
		return keyErr("channelAuthTimeout", "must be between 100ms and 1m")
	}
	if m.ChannelUnauthenticatedPerSource < 1 || m.ChannelUnauthenticatedPerSource > MaxChannelUnauthenticatedPerSource {
		return keyErr("channelUnauthenticatedPerSource", fmt.Sprintf(
			"must be between 1 and %d: the channel has 32 sockets, and one address must never hold them all", MaxChannelUnauthenticatedPerSource))
	}
	if m.CertOfferWait < 0 || m.CertOfferWait > 7*24*time.Hour {
		return keyErr("certOfferWait", "must be between 0 (never sent) and 7d")
	}
	for _, l := range []struct {
		key string
		v   []string
	}{{"AllowedCLIIPs", m.AllowedCLIIPs}, {"AllowCLIIPs", m.AllowCLIIPs}} {
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
