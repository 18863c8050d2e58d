package config

import (
	"fmt"
	"net"
	"net/netip"
	"path/filepath"
	"strings"
	"time"
)

// Server is the server as a whole: where its data lives, the address its
// listeners bind to, its names, how it logs, and how long it may take to
// shut down.
type Server struct {
	DataDir         string        // dataDir: where outpost.db, certs and secrets live
	Bind            string        // bind: the address every listener binds to
	PublicHost      string        // publicHost: the address written into links and client packages
	ServerName      string        // serverName: the server's name in certificates and truststore file names
	LogFormat       string        // logFormat: text or json
	LogLevel        string        // logLevel: debug, info, warn or error
	ShutdownTimeout time.Duration // shutdownTimeout: the whole orderly shutdown
}

func defaultServer() Server {
	return Server{
		DataDir: "./outpost-data", Bind: "0.0.0.0", ServerName: "outpost",
		LogFormat: "text", LogLevel: "info", ShutdownTimeout: 10 * time.Second,
	}
}

// Validate checks dataDir, bind, publicHost, serverName, logFormat,
// logLevel and shutdownTimeout.
func (s Server) Validate() error {
	if strings.TrimSpace(s.DataDir) == "" {
		return keyErr("dataDir", "must not be empty")
	}
	if s.Bind == "" {
		return keyErr("bind", "must not be empty")
	}
	if s.Bind != "localhost" {
		if _, err := netip.ParseAddr(s.Bind); err != nil {
			return keyErr("bind", fmt.Sprintf("%q is not an IP address", s.Bind))
		}
	}
	if err := checkHost(s.PublicHost); err != nil {
		return keyErr("publicHost", err.Error())
	}
	if !validName(s.ServerName) {
		return keyErr("serverName", "must be 1-64 characters of letters, digits, '.', '-' or '_'")
	}
	switch s.LogFormat {
	case "text", "json":
	default:
		return keyErr("logFormat", fmt.Sprintf("%q is not text or json", s.LogFormat))
	}
	switch s.LogLevel {
	case "debug", "info", "warn", "error":
	default:
		return keyErr("logLevel", fmt.Sprintf("%q is not debug, info, warn or error", s.LogLevel))
	}
	return checkPositive(durationKey{"shutdownTimeout", s.ShutdownTimeout})
}

// DBPath is the single SQLite file of the appliance.
func (s Server) DBPath() string { return filepath.Join(s.DataDir, "outpost.db") }

func validName(s string) bool {
	if len(s) == 0 || len(s) > 64 {
		return false
	}
	for _, r := range s {
		if !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '.' || r == '-' || r == '_') {
			return false
		}
	}
	return true
}

func checkHost(h string) error {
	if h == "" {
		return fmt.Errorf("must not be empty")
	}
	if strings.ContainsAny(h, " /:@?#") && net.ParseIP(h) == nil {
		return fmt.Errorf("%q is not a host name or IP address", h)
	}
	if ip := net.ParseIP(h); ip != nil && ip.IsUnspecified() {
		return fmt.Errorf("%q is not reachable by clients; name a real address", h)
	}
	return nil
}

// DetectPublicHost returns the first non-loopback, non-link-local IPv4
// address of this machine (IPv6 if there is no IPv4), or 127.0.0.1 when the
// machine has no other address.
func DetectPublicHost() string {
	addrs := LocalAddresses()
	for _, a := range addrs {
		if ip := net.ParseIP(a); ip != nil && ip.To4() != nil && !ip.IsLoopback() {
			return a
		}
	}
	for _, a := range addrs {
		if ip := net.ParseIP(a); ip != nil && !ip.IsLoopback() {
			return a
		}
	}
	return "127.0.0.1"
}

// LocalAddresses lists this machine's unicast addresses (loopback included,
// link-local excluded), in interface order.
func LocalAddresses() []string {
	ifaces, err := net.Interfaces()
	if err != nil {
		return []string{"127.0.0.1"}
	}
	var out []string
	for _, ifc := range ifaces {
		if ifc.Flags&net.FlagUp == 0 {
			continue
		}
		addrs, err := ifc.Addrs()
		if err != nil {
			continue
		}
		for _, a := range addrs {
			ipn, ok := a.(*net.IPNet)
			if !ok || ipn.IP.IsLinkLocalUnicast() || ipn.IP.IsMulticast() || ipn.IP.IsUnspecified() {
				continue
			}
			out = append(out, ipn.IP.String())
		}
	}
	if len(out) == 0 {
		out = []string{"127.0.0.1"}
	}
	return out
}
