package appliance

import (
	"context"
	"crypto/rand"
	"encoding/base64"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"sort"
	"time"

	"outpost/appliance/config"
	"outpost/appliance/pki"
	"outpost/appliance/store"
)

// The functions in this file are what `outpost` subcommands do to an
// appliance's data, running or not: they read the same configuration as
// `outpost run` and open the same files.

// Backup writes a consistent copy of the appliance's database to dest
// (VACUUM INTO). It works while a server process has the database open and
// refuses to overwrite dest.
func Backup(ctx context.Context, cfg config.Config, dest string) error {
	if _, err := os.Stat(cfg.DBPath()); err != nil {
		return fmt.Errorf("no database at %s: %w", cfg.DBPath(), err)
	}
	return store.BackupFile(ctx, cfg.DBPath(), dest)
}

// prepareData makes the data directory (0700) and the generated secrets on
// the first use of a data directory: what `run` and every subcommand that
// touches the data do first.
func prepareData(cfg *config.Config, log *slog.Logger) error {
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

// authorityFor opens the certificate authority of cfg (creating it, and the
// generated secrets, if this is the first use of the data directory).
func authorityFor(cfg *config.Config, log *slog.Logger) (*pki.Authority, error) {
	if err := prepareData(cfg, log); err != nil {
		return nil, err
	}
	return openAuthority(cfg, log)
}

// CertIssue issues a client certificate for name and writes NAME.pem,
// NAME.key (0600), NAME.p12 and the device's connection package into outDir
// (default: the ClientPackages directory). It returns the files written.
func CertIssue(cfg config.Config, log *slog.Logger, name, device, outDir string) ([]string, error) {
	if err := pki.ValidateName(name); err != nil {
		return nil, err
	}
	d, err := pki.ParseDevice(device)
	if err != nil {
		return nil, err
	}
	a, err := authorityFor(&cfg, log)
	if err != nil {
		return nil, err
	}
	if outDir == "" {
		outDir = clientPackagesDir(&cfg)
	}
	if err := os.MkdirAll(outDir, 0o700); err != nil {
		return nil, fmt.Errorf("output directory: %w", err)
	}
	cc, err := a.IssueClient(name)
	if err != nil {
		return nil, err
	}
	files, err := a.WriteClientFiles(cc, outDir)
	if err != nil {
		return nil, err
	}
	fname, zip, err := a.ClientPackage(cc, d)
	if err != nil {
		return files, err
	}
	zpath := filepath.Join(outDir, fname)
	if err := os.WriteFile(zpath, zip, 0o600); err != nil {
		return files, fmt.Errorf("write connection package: %w", err)
	}
	return append(files, zpath), nil
}

// EnrollmentPackage writes the enrollment-only connection package for a
// device (server address and CA truststore; the client then enrolls with
// its user name and password) into outDir and returns its path.
func EnrollmentPackage(cfg config.Config, log *slog.Logger, device, outDir string) (string, error) {
	d, err := pki.ParseDevice(device)
	if err != nil {
		return "", err
	}
	a, err := authorityFor(&cfg, log)
	if err != nil {
		return "", err
	}
	if outDir == "" {
		outDir = clientPackagesDir(&cfg)
	}
	if err := os.MkdirAll(outDir, 0o700); err != nil {
		return "", fmt.Errorf("output directory: %w", err)
	}
	fname, zip, err := a.EnrollmentPackage(d)
	if err != nil {
		return "", err
	}
	path := filepath.Join(outDir, fname)
	if err := os.WriteFile(path, zip, 0o644); err != nil {
		return "", fmt.Errorf("write enrollment package: %w", err)
	}
	return path, nil
}

func clientPackagesDir(cfg *config.Config) string {
	if cfg.ClientPackages != "" {
		return cfg.ClientPackages
	}
	return filepath.Join(cfg.CertsPath, "clientpackages")
}

// CertRevoke revokes every certificate issued to name (api.md §5.11). A
// running server notices within seconds and disconnects the holder.
func CertRevoke(cfg config.Config, log *slog.Logger, name, reason string) (int, error) {
	a, err := authorityFor(&cfg, log)
	if err != nil {
		return 0, err
	}
	return a.RevokeName(name, reason)
}

// CertInfo is one issued certificate as `outpost cert list` shows it.
type CertInfo struct {
	Name      string
	Serial    string
	NotAfter  time.Time
	Revoked   bool
	RevokedAt time.Time
	Reason    string
}

// CertList lists the certificates issued to name (every name when empty),
// with their revocation state.
func CertList(cfg config.Config, log *slog.Logger, name string) ([]CertInfo, error) {
	a, err := authorityFor(&cfg, log)
	if err != nil {
		return nil, err
	}
	issued, err := a.Issued(name)
	if err != nil {
		return nil, err
	}
	revoked := map[string]pki.Revocation{}
	for _, r := range a.Revocations() {
		revoked[r.Serial.String()] = r
	}
	out := make([]CertInfo, 0, len(issued))
	for _, c := range issued {
		ci := CertInfo{Name: c.Name, Serial: c.Serial.String(), NotAfter: c.NotAfter, Revoked: c.Revoked}
		if r, ok := revoked[ci.Serial]; ok {
			ci.RevokedAt, ci.Reason = r.Date, r.Reason
		}
		out = append(out, ci)
	}
	sort.Slice(out, func(i, j int) bool {
		if out[i].Name != out[j].Name {
			return out[i].Name < out[j].Name
		}
		return out[i].NotAfter.Before(out[j].NotAfter)
	})
	return out, nil
}

// withStore opens the appliance's database for one operation.
func withStore(ctx context.Context, cfg *config.Config, log *slog.Logger, fn func(*store.Store) error) error {
	if err := prepareData(cfg, log); err != nil {
		return err
	}
	st, err := store.Open(ctx, cfg.DBPath(), store.Options{Logger: log})
	if err != nil {
		return err
	}
	defer st.Close()
	return fn(st)
}

// UserAdd creates a system user (api.md §2.1) who can enroll for a
// certificate with name and password. An empty password is generated and
// returned, as is the user's bearer token; both are shown only once.
func UserAdd(ctx context.Context, cfg config.Config, log *slog.Logger, name, password, group string) (user store.User, generatedPassword string, err error) {
	if password == "" {
		b := make([]byte, 12)
		if _, err := rand.Read(b); err != nil {
			return store.User{}, "", err
		}
		password = base64.RawURLEncoding.EncodeToString(b)
		generatedPassword = password
	}
	err = withStore(ctx, &cfg, log, func(st *store.Store) error {
		var err error
		user, err = st.Accounts().CreateUser(ctx, store.UserInput{Name: name, Password: password, Group: group})
		return err
	})
	return user, generatedPassword, err
}

// UserDelete deletes a system user and revokes every certificate issued to
// that name (api.md: deleting a user revokes its certificate).
func UserDelete(ctx context.Context, cfg config.Config, log *slog.Logger, name string) (revoked int, err error) {
	err = withStore(ctx, &cfg, log, func(st *store.Store) error {
		u, err := st.Accounts().UserByName(ctx, name)
		if err != nil {
			return err
		}
		return st.Accounts().DeleteUser(ctx, u.UID)
	})
	if err != nil {
		return 0, err
	}
	a, err := authorityFor(&cfg, log)
	if err != nil {
		return 0, fmt.Errorf("user deleted, but certificates not revoked: %w", err)
	}
	n, err := a.RevokeName(name, "cessation_of_operation")
	if err != nil {
		return n, fmt.Errorf("user deleted, but certificates not revoked: %w", err)
	}
	return n, nil
}

// UserList lists the system users.
func UserList(ctx context.Context, cfg config.Config, log *slog.Logger) ([]store.User, error) {
	var users []store.User
	err := withStore(ctx, &cfg, log, func(st *store.Store) error {
		var err error
		users, err = st.Accounts().Users(ctx)
		return err
	})
	return users, err
}
