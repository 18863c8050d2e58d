package mgmt

import (
	"log/slog"
	"net"
	"net/http"
	"net/netip"
	"strings"

	"outpost/appliance/access"
	"outpost/appliance/broker"
	"outpost/appliance/httpapi"
	"outpost/appliance/logx"
	"outpost/appliance/store"
)

// clientItem is one connected client (api.md §2.11). User is the identity
// from the client certificate on the TLS listeners (issue: certificates);
// it is an addition to the spec's fields, empty for TCP clients.
type clientItem struct {
	UID      string `json:"uid"`
	Callsign string `json:"callsign"`
	Team     string `json:"team"`
	Role     string `json:"role"`
	Address  string `json:"address"`
	LastSeen string `json:"lastSeen"`
	User     string `json:"user"`
	// Listener is the listener the client came in on (cot-tcp, cot-tls,
	// cot-ws, mesh, udp): beyond the interface's fields, so the console
	// and an operator tell a mesh device from a server client.
	Listener string `json:"listener"`
}

// errNotApproved refuses /Clients to a caller without a token from an
// address not in AllowedCLIIPs: api.md §7's exact body, and no challenge.
var errNotApproved = &httpapi.Error{Status: http.StatusUnauthorized, Msg: "endpoint can only be accessed by approved IPs"}

// clients answers GET /Clients (api.md §4.1, §2.11). It is protected by the
// IP allow-list AllowedCLIIPs instead of a token (api.md §5.4): a caller
// without a token from an allowed address, like an administrator's token,
// lists every client; a user's token lists the clients its groups see,
// from any address (access.md "Route matrix").
func (h *API) clients(w http.ResponseWriter, r *http.Request) error {
	p := access.From(r)
	all := p.Admin() || (!p.Authenticated() && h.allowedByIP(r))
	if !all && !p.Authenticated() {
		h.authLog.Log(slog.LevelWarn, "/Clients refused: address not in AllowedCLIIPs", "remote", r.RemoteAddr,
			"x_forwarded_for", logx.Clip(r.Header.Get("X-Forwarded-For")), "x_real_ip", logx.Clip(r.Header.Get("X-Real-IP")))
		return errNotApproved
	}
	var cs []broker.ClientInfo
	if h.opts.Broker != nil {
		cs = h.opts.Broker.Clients()
	}
	if !all {
		cs = visibleClients(cs, p.Reads())
	}
	httpapi.WriteJSON(w, http.StatusOK, clientItems(cs))
	return nil
}

// visibleClients keeps the clients whose events reach the groups of out.
func visibleClients(cs []broker.ClientInfo, out uint64) []broker.ClientInfo {
	kept := cs[:0:0]
	for _, c := range cs {
		if store.Seen(c.Groups, out) {
			kept = append(kept, c)
		}
	}
	return kept
}

// clientItems renders connected clients as /Clients and the channel's
// users event show them.
func clientItems(cs []broker.ClientInfo) []clientItem {
	items := make([]clientItem, 0, len(cs))
	for _, c := range cs {
		items = append(items, clientItemOf(c))
	}
	return items
}

// clientItemOf renders one connected client.
func clientItemOf(c broker.ClientInfo) clientItem {
	return clientItem{
		UID: c.UID, Callsign: c.Callsign, Team: c.Team, Role: c.Role, Address: c.Address,
		LastSeen: httpapi.FormatTime(c.LastSeen), User: c.User, Listener: c.Listener,
	}
}

// allowedByIP applies api.md §5.4. The connecting address must be in
// the list; when the request came through a proxy, every address named by
// X-Forwarded-For and X-Real-IP must be in the list too. Requiring both
// (rather than trusting the headers alone) keeps a remote client from
// claiming an allowed address by sending the header itself.
func (h *API) allowedByIP(r *http.Request) bool {
	if h.opts.AllowedClientIP == nil {
		return false
	}
	host, _, err := net.SplitHostPort(r.RemoteAddr)
	if err != nil {
		host = r.RemoteAddr
	}
	peer, err := netip.ParseAddr(host)
	if err != nil || !h.opts.AllowedClientIP(peer) {
		return false
	}
	var claimed []string
	for _, v := range r.Header.Values("X-Forwarded-For") {
		claimed = append(claimed, strings.Split(v, ",")...)
	}
	claimed = append(claimed, r.Header.Values("X-Real-IP")...)
	for _, c := range claimed {
		c = strings.TrimSpace(c)
		if c == "" {
			continue
		}
		a, err := netip.ParseAddr(c)
		if err != nil || !h.opts.AllowedClientIP(a) {
			return false
		}
	}
	return true
}
