package admin

// What a start says to whoever reads its log (operations.md "First start"): where
// clients reach the server (publicHost and the machine's other addresses),
// which port serves what, where the console is and where its admin token
// is, and, until the first system user exists, the next step. Each is one
// record with a fixed message and the facts as attributes, so the block
// reads the same in a terminal, in journald and in the Windows event log,
// and scripts can pick the values out of JSON logs. The console's front
// page shows the same facts (config.ReachAddresses, through GET /api/server).

import (
	"context"
	"log/slog"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"outpost/appliance/config"
	"outpost/appliance/netx"
	"outpost/appliance/store"
)

// welcomePorts are the listeners named in the ports line, in the order a
// person setting up a device needs them, with their attribute names.
var welcomePorts = []struct{ listener, attr string }{
	{netx.ListenerCoTTLS, "cot_tls"}, {netx.ListenerEnroll, "enrollment"}, {netx.ListenerHTTPS, "api_https"},
	{netx.ListenerHTTP, "api_http"}, {netx.ListenerCoTTCP, "cot_tcp"}, {netx.ListenerREST, "console"},
}

// Welcome writes the block; the appliance calls it once every listener is
// bound. port is the port a listener bound (0 when it is off).
func Welcome(ctx context.Context, log *slog.Logger, cfg *config.Config, port func(listener string) int, acc *store.Accounts) {
	log.Info("clients connect to", "public_host", cfg.PublicHost, "other_addresses", strings.Join(config.ReachAddresses(cfg), ", "))
	var ports []any
	for _, p := range welcomePorts {
		if port := port(p.listener); port > 0 {
			ports = append(ports, p.attr, port)
		}
	}
	if len(ports) > 0 {
		log.Info("ports", ports...)
	}
	var console []any
	if port := port(netx.ListenerREST); port > 0 {
		console = append(console, "url", "http://"+net.JoinHostPort(cfg.PublicHost, strconv.Itoa(port))+"/")
	}
	tokenFile := filepath.Join(cfg.DataDir, AdminTokenFile)
	if _, err := os.Stat(tokenFile); err == nil {
		console = append(console, "admin_token_file", tokenFile)
	}
	if len(console) > 0 {
		log.Info("web console", console...)
	}
	if any, err := acc.HasUsers(ctx); err == nil && !any {
		log.Info("next step: add a user, then invite a device and scan its QR code in ATAK, iTAK or WinTAK",
			"add", "outpost user add NAME (or the console's System users page)", "invite", "outpost invite NAME --qr")
	}
}
