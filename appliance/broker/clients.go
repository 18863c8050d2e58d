package broker

import (
	"net"
	"sort"
	"time"
)

// ClientInfo is one row of the connected-client registry (api.md §2.11).
type ClientInfo struct {
	UID       string
	Callsign  string
	Team      string
	Role      string
	Address   string // IP address only
	LastSeen  time.Time
	Listener  string
	User      string
	Connected time.Time
	Groups    uint64 // the groups its events go to: who can see it (access.md "Groups")
}

// Clients lists the connected sessions that have identified themselves
// with an SA, ordered by callsign then uid.
func (b *Broker) Clients() []ClientInfo {
	var out []ClientInfo
	b.list.Load().each(func(s *Session) {
		id := s.ident.Load()
		if id == nil || id.UID == "" {
			return
		}
		out = append(out, ClientInfo{
			UID: id.UID, Callsign: id.Callsign, Team: id.Team, Role: id.Role,
			Address: hostOf(s.info.Addr), LastSeen: id.LastSeen, Listener: s.info.Listener,
			User: s.info.User, Connected: s.joined, Groups: s.in.Load(),
		})
	})
	sort.Slice(out, func(i, j int) bool {
		if out[i].Callsign != out[j].Callsign {
			return out[i].Callsign < out[j].Callsign
		}
		return out[i].UID < out[j].UID
	})
	return out
}

// hostOf is the IP address of a host:port.
func hostOf(addr string) string {
	if h, _, err := net.SplitHostPort(addr); err == nil {
		return h
	}
	return addr
}
