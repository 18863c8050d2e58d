package admin

// Opening an appliance's data: the directory and its generated secrets, the
// certificate authority, the database for one operation. `outpost run` (the
// appliance) and every subcommand open them the same way.

import (
	"context"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"strings"

	"outpost/appliance/config"
	"outpost/appliance/pki"
	"outpost/appliance/store"
)

// AdminTokenFile is where the first run writes the bearer token of the API
// user "admin", inside the data directory (mode 0600).
const AdminTokenFile = "admin.token"

// PrepareData makes the data directory (0700) and the generated secrets on
// the first use of a data directory: what `run` and every subcommand that
// touches the data do first.
func PrepareData(cfg *config.Config, log *slog.Logger) error {
	if err := os.MkdirAll(cfg.DataDir, 0o700); err != nil {
		return fmt.Errorf("data directory: %w", err)
	}
	generated, secretsPath, err := cfg.EnsureSecrets()
	if err != nil {
		return err
	}
	if len(generated) > 0 {
		log.Info("generated secrets on first run", "keys", generated, "file", secretsPath)
	}
	return nil
}

// OpenAuthority opens (on first run: creates) the certificate authority
// described by the configuration. The server certificate names the public
// host, the machine's host name and every local address.
func OpenAuthority(cfg *config.Config, log *slog.Logger) (*pki.Authority, error) {
	return pki.Open(authorityConfig(cfg, log))
}

// authorityConfig is the certificate authority's configuration: its files,
// and the server certificate's names (the public host, the machine's host
// name and every local address).
func authorityConfig(cfg *config.Config, log *slog.Logger) pki.Config {
	sans := []string{cfg.PublicHost, "localhost"}
	if h, err := os.Hostname(); err == nil && h != "" {
		sans = append(sans, h)
	}
	sans = append(sans, config.LocalAddresses()...)
	return pki.Config{
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
	}
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

// authorityFor opens the certificate authority of cfg (creating it, and the
// generated secrets, if this is the first use of the data directory).
func authorityFor(cfg *config.Config, log *slog.Logger) (*pki.Authority, error) {
	if err := PrepareData(cfg, log); err != nil {
		return nil, err
	}
	return OpenAuthority(cfg, log)
}

// withStore opens the appliance's database for one operation.
func withStore(ctx context.Context, cfg *config.Config, log *slog.Logger, fn func(*store.Store) error) error {
	if err := PrepareData(cfg, log); err != nil {
		return err
	}
	st, err := store.Open(ctx, cfg.DBPath(), store.Options{Logger: log, Budgets: Budgets(cfg)})
	if err != nil {
		return err
	}
	defer st.Close()
	return fn(st)
}

// Budgets are the store's budgets of the tables clients can grow, as cfg
// sets them (the server and the command line enforce the same).
func Budgets(cfg *config.Config) store.Budgets {
	return store.Budgets{
		AuditRecords: cfg.MaxAuditRecords, ExCheckDocuments: cfg.MaxExCheckDocuments, ExCheckBytes: int64(cfg.MaxExCheckBytes),
		VideoConnections: cfg.MaxVideoConnections, ServerObjects: cfg.MaxServerObjects, DataPackages: cfg.MaxDataPackages,
		Missions: store.MissionBudgets{LogEntryBytes: cfg.MissionLogEntryMaxBytes, LogEntries: cfg.MissionLogMaxEntries,
			LogBytes: int64(cfg.MissionLogMaxBytes), Contents: cfg.MissionMaxContents, Changes: cfg.MissionMaxChanges,
			ChangeBytes: int64(cfg.MissionMaxChangeBytes)},
	}
}

func clientPackagesDir(cfg *config.Config) string {
	if cfg.ClientPackages != "" {
		return cfg.ClientPackages
	}
	return filepath.Join(cfg.CertsPath, "clientpackages")
}
