package appliance

// What a start says to whoever reads its log (operations.md "First start"): where
// clients reach the server (publicHost and the machine's other addresses),
// which port serves what, where the console is and where its admin token
// is, and, until the first system user exists, the next step. Each is one
// record with a fixed message and the facts as attributes, so the block
// reads the same in a terminal, in journald and in the Windows event log,
// and scripts can pick the values out of JSON logs. The console's front
// page shows the same facts (ReachAddresses, through GET /api/server).

import (
	"context"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"outpost/appliance/config"
)

// welcomePorts are the listeners named in the ports line, in the order a
// person setting up a device needs them, with their attribute names.
var welcomePorts = []struct{ listener, attr string }{
	{ListenerCoTTLS, "cot_tls"}, {ListenerEnroll, "enrollment"}, {ListenerHTTPS, "api_https"},
	{ListenerHTTP, "api_http"}, {ListenerCoTTCP, "cot_tcp"}, {ListenerREST, "console"},
}

// ReachAddresses lists the addresses of this machine clients may use
// besides publicHost: the bound address when the listeners bind one, else
// every local address but loopback (loopback alone when there is no other).
func ReachAddresses(cfg *config.Config) []string {
	var all []string
	if ip := net.ParseIP(cfg.Bind); ip != nil && !ip.IsUnspecified() {
		all = []string{ip.String()}
	} else {
		var loopback []string
		for _, a := range config.LocalAddresses() {
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

// logWelcome writes the block; it runs once Open has bound every listener.
func (a *Appliance) logWelcome(ctx context.Context) {
	cfg := &a.cfg
	a.log.Info("clients connect to", "public_host", cfg.PublicHost, "other_addresses", strings.Join(ReachAddresses(cfg), ", "))
	var ports []any
	for _, p := range welcomePorts {
		if port := a.boundPort(p.listener); port > 0 {
			ports = append(ports, p.attr, port)
		}
	}
	if len(ports) > 0 {
		a.log.Info("ports", ports...)
	}
	var console []any
	if port := a.boundPort(ListenerREST); port > 0 {
		console = append(console, "url", "http://"+net.JoinHostPort(cfg.PublicHost, strconv.Itoa(port))+"/")
	}
	tokenFile := filepath.Join(cfg.DataDir, AdminTokenFile)
	if _, err := os.Stat(tokenFile); err == nil {
		console = append(console, "admin_token_file", tokenFile)
	}
	if len(console) > 0 {
		a.log.Info("web console", console...)
	}
	if any, err := a.store.Accounts().HasUsers(ctx); err == nil && !any {
		a.log.Info("next step: add a user, then invite a device and scan its QR code in ATAK, iTAK or WinTAK",
			"add", "outpost user add NAME (or the console's System users page)", "invite", "outpost invite NAME --qr")
	}
}

// boundPort is the port a listener bound (0 when it is off).
func (a *Appliance) boundPort(name string) int {
	l, ok := a.listeners[name]
	if !ok || l == nil || l.Addr() == nil {
		return 0
	}
	if ta, ok := l.Addr().(*net.TCPAddr); ok {
		return ta.Port
	}
	return 0
}
