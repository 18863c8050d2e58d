package config

import (
	"fmt"
	"net/netip"
	"time"
)

// FieldMesh is the field mesh (docs/mesh.md): the multicast bridge and the
// unicast UDP input. (Not Mesh: cfg.Mesh is the bridge's mode, which an
// embedded section of that name would hide.)
type FieldMesh struct {
	Mesh             string        // mesh: off, xml or v1 (what the bridge sends; it reads both)
	MeshInterfaces   []string      // meshInterfaces: interfaces to join and send on (empty: the system's default)
	MeshSAGroup      string        // meshSAGroup: the SA group, address:port
	MeshChatGroup    string        // meshChatGroup: the GeoChat group, address:port
	MeshListenGroups []string      // meshListenGroups: further groups only listened to
	MeshGroup        string        // meshGroup: the TAK group of mesh and UDP traffic, both ways
	MeshTTL          int           // meshTTL: TTL of the datagrams sent
	MeshMaxDatagram  int           // meshMaxDatagram: largest datagram read or sent
	MeshMaxSources   int           // meshMaxSources: device addresses tracked at once
	MeshIdleTimeout  time.Duration // meshIdleTimeout: a device silent this long is forgotten
	MeshDirectPort   int           // meshDirectPort: port of a device that events addressed to it go to (0: none)
	UDPPort          int           // udpPort: unicast CoT over UDP (-1 disables)
}

func defaultFieldMesh() FieldMesh {
	return FieldMesh{
		Mesh:            MeshOff,
		MeshSAGroup:     "239.2.3.1:6969",
		MeshChatGroup:   "224.10.10.1:17012",
		MeshGroup:       "__ANON__",
		MeshTTL:         1,
		MeshMaxDatagram: 8 << 10,
		MeshMaxSources:  256,
		MeshIdleTimeout: 5 * time.Minute,
		MeshDirectPort:  4242,
		UDPPort:         -1,
	}
}

// The values of mesh.
const (
	MeshOff = "off"
	MeshXML = "xml" // the bridge sends XML events
	MeshV1  = "v1"  // the bridge sends TAK protocol v1 mesh datagrams
)

// MeshGroups returns the bridge's groups: SA, chat and those only
// listened to. Validate has checked them.
func (m FieldMesh) MeshGroups() (sa, chat netip.AddrPort, listen []netip.AddrPort) {
	sa, _ = parseGroup(m.MeshSAGroup)
	chat, _ = parseGroup(m.MeshChatGroup)
	for _, g := range m.MeshListenGroups {
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

// Validate checks the bridge's mode, groups and interfaces, the TAK group,
// the datagram and source bounds, and the ports.
func (m FieldMesh) Validate() error {
	switch m.Mesh {
	case MeshOff, MeshXML, MeshV1:
	default:
		return keyErr("mesh", fmt.Sprintf("%q is not off, xml or v1", m.Mesh))
	}
	for _, g := range []struct{ key, v string }{{"meshSAGroup", m.MeshSAGroup}, {"meshChatGroup", m.MeshChatGroup}} {
		if _, err := parseGroup(g.v); err != nil {
			return keyErr(g.key, err.Error())
		}
	}
	for _, g := range m.MeshListenGroups {
		if _, err := parseGroup(g); err != nil {
			return keyErr("meshListenGroups", err.Error())
		}
	}
	for _, n := range m.MeshInterfaces {
		if n == "" || len(n) > 64 {
			return keyErr("meshInterfaces", fmt.Sprintf("%q is not an interface name", n))
		}
	}
	if m.MeshGroup == "" {
		return keyErr("meshGroup", "must name a group (__ANON__ for everyone)")
	}
	switch {
	case m.MeshTTL < 1 || m.MeshTTL > 255:
		return keyErr("meshTTL", "must be between 1 and 255")
	case m.MeshMaxDatagram < 512 || m.MeshMaxDatagram > 65507:
		return keyErr("meshMaxDatagram", "must be between 512 and 65507 (the largest UDP datagram)")
	case m.MeshMaxSources < 1 || m.MeshMaxSources > 65536:
		return keyErr("meshMaxSources", "must be between 1 and 65536")
	case m.MeshIdleTimeout < 10*time.Second || m.MeshIdleTimeout > 24*time.Hour:
		return keyErr("meshIdleTimeout", "must be between 10s and 24h")
	case m.MeshDirectPort < 0 || m.MeshDirectPort > 65535:
		return keyErr("meshDirectPort", "must be a port, or 0 to send nothing to single devices")
	case m.UDPPort < -1 || m.UDPPort > 65535:
		return portErr("udpPort", m.UDPPort)
	}
	return nil
}
