package config

import (
	"fmt"
	"net/netip"
	"time"
)

// The values of mesh.
const (
	MeshOff = "off"
	MeshXML = "xml" // the bridge sends XML events
	MeshV1  = "v1"  // the bridge sends TAK protocol v1 mesh datagrams
)

// MeshGroups returns the bridge's groups: SA, chat and those only
// listened to. Validate has checked them.
func (c *Config) MeshGroups() (sa, chat netip.AddrPort, listen []netip.AddrPort) {
	sa, _ = parseGroup(c.MeshSAGroup)
	chat, _ = parseGroup(c.MeshChatGroup)
	for _, g := range c.MeshListenGroups {
		p, _ := parseGroup(g)
		listen = append(listen, p)
	}
	return sa, chat, listen
}

// parseGroup parses an IPv4 multicast group with its port.
func parseGroup(s string) (netip.AddrPort, error) {
	g, err := netip.ParseAddrPort(s)
	if err != nil || !g.Addr().Is4() || !g.Addr().IsMulticast() || g.Port() == 0 {
		return netip.AddrPort{}, fmt.Errorf("%q is not an IPv4 multicast group with a port (e.g. 239.2.3.1:6969)", s)
	}
	return g, nil
}

func (c *Config) checkMesh() error {
	switch c.Mesh {
	case MeshOff, MeshXML, MeshV1:
	default:
		return keyErr("mesh", fmt.Sprintf("%q is not off, xml or v1", c.Mesh))
	}
	for _, g := range []struct{ key, v string }{{"meshSAGroup", c.MeshSAGroup}, {"meshChatGroup", c.MeshChatGroup}} {
		if _, err := parseGroup(g.v); err != nil {
			return keyErr(g.key, err.Error())
		}
	}
	for _, g := range c.MeshListenGroups {
		if _, err := parseGroup(g); err != nil {
			return keyErr("meshListenGroups", err.Error())
		}
	}
	for _, n := range c.MeshInterfaces {
		if n == "" || len(n) > 64 {
			return keyErr("meshInterfaces", fmt.Sprintf("%q is not an interface name", n))
		}
	}
	if c.MeshGroup == "" {
		return keyErr("meshGroup", "must name a group (__ANON__ for everyone)")
	}
	switch {
	case c.MeshTTL < 1 || c.MeshTTL > 255:
		return keyErr("meshTTL", "must be between 1 and 255")
	case c.MeshMaxDatagram < 512 || c.MeshMaxDatagram > 65507:
		return keyErr("meshMaxDatagram", "must be between 512 and 65507 (the largest UDP datagram)")
	case c.MeshMaxSources < 1 || c.MeshMaxSources > 65536:
		return keyErr("meshMaxSources", "must be between 1 and 65536")
	case c.MeshIdleTimeout < 10*time.Second || c.MeshIdleTimeout > 24*time.Hour:
		return keyErr("meshIdleTimeout", "must be between 10s and 24h")
	case c.MeshDirectPort < 0 || c.MeshDirectPort > 65535:
		return keyErr("meshDirectPort", "must be a port, or 0 to send nothing to single devices")
	case c.UDPPort < -1 || c.UDPPort > 65535:
		return keyErr("udpPort", fmt.Sprintf("%d is not a port (use 1-65535, 0 for any free port, -1 to disable)", c.UDPPort))
	}
	return nil
}
