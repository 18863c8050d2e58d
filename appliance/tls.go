package appliance

import (
	"log/slog"
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
