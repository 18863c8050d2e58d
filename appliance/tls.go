package appliance

import (
	"log/slog"
	"net"
	"os"
	"strings"

	"outpost/appliance/config"
	"outpost/appliance/pki"
)

// openAuthority opens (on first run: creates) the certificate authority
// described by the configuration. The server certificate names the public
// host, the machine's host name and every local address.
func openAuthority(cfg *config.Config, log *slog.Logger) (*pki.Authority, error) {
	sans := []string{cfg.PublicHost, "localhost"}
	if h, err := os.Hostname(); err == nil && h != "" {
		sans = append(sans, h)
	}
	sans = append(sans, config.LocalAddresses()...)
	return pki.Open(pki.Config{
		CertsDir:           cfg.CertsPath,
		KeyFile:            cfg.KeyDir,
		CertFile:           cfg.PemDir,
		UnencryptedKeyFile: cfg.UnencryptedKey,
		P12File:            cfg.P12Dir,
		CAFile:             cfg.CA,
		CAKeyFile:          cfg.CAKey,
		CRLFile:            cfg.CRLFile,
		ClientPackagesDir:  cfg.ClientPackages,
		KeyType:            cfg.KeyType,
		ServerName:         cfg.ServerName,
		PublicHost:         cfg.PublicHost,
		SANs:               dedupe(sans),
		Password:           cfg.Password,
		SSLCoTPort:         publishedPort(cfg.SSLCoTPort, 8089),
		EnrollPort:         publishedPort(cfg.EnrollPort, 8446),
		HTTPSPort:          publishedPort(cfg.HTTPSPort, 8443),
		Logger:             log,
	})
}

// publishedPort is the port written into client packages: the configured
// one, or the default when the listener is disabled or on a random port.
func publishedPort(p, def int) int {
	if p > 0 {
		return p
	}
	return def
}

func dedupe(in []string) []string {
	seen := map[string]bool{}
	out := in[:0:0]
	for _, s := range in {
		s = strings.TrimSpace(s)
		if s != "" && !seen[strings.ToLower(s)] {
			seen[strings.ToLower(s)] = true
			out = append(out, s)
		}
	}
	return out
}

// publishBoundPorts tells the certificate authority the real ports of the
// listeners configured with port 0, so connection packages built by this
// process name the ports clients can reach.
func (a *Appliance) publishBoundPorts() {
	port := func(name string, configured int) int {
		if configured != 0 {
			return 0 // configured (or disabled): the published default stays
		}
		if l, ok := a.listeners[name]; ok && l.Addr() != nil {
			if ta, ok := l.Addr().(*net.TCPAddr); ok {
				return ta.Port
			}
		}
		return 0
	}
	p := pki.Ports{
		SSLCoT: port(ListenerCoTTLS, a.cfg.SSLCoTPort),
		HTTPS:  port(ListenerHTTPS, a.cfg.HTTPSPort),
		Enroll: port(ListenerEnroll, a.cfg.EnrollPort),
	}
	if p == (pki.Ports{}) {
		return
	}
	if err := a.pki.SetPorts(p); err != nil {
		a.log.Warn("could not publish the bound ports in connection packages", "err", err)
	}
}
