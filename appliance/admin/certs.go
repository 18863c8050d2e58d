package admin

import (
	"context"
	"errors"
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

// Certificates on the command line (`outpost cert`): issue, revoke, list,
// and the enrollment-only package.

// CertIssue issues a client certificate for name and writes NAME.pem,
// NAME.key (0600), NAME.p12 and the device's connection package into outDir
// (default: the ClientPackages directory). It returns the files written and
// whether the certificate identifies a system user (access.md
// "Principals": a certificate named after no user is a certificate
// principal, anonymous but for its stable identity).
func CertIssue(cfg config.Config, log *slog.Logger, name, device, outDir string) (files []string, isUser bool, err error) {
	if err := pki.ValidateName(name); err != nil {
		return nil, false, err
	}
	d, err := pki.ParseDevice(device)
	if err != nil {
		return nil, false, err
	}
	a, err := authorityFor(&cfg, log)
	if err != nil {
		return nil, false, err
	}
	err = withStore(context.Background(), &cfg, log, func(st *store.Store) error {
		_, err := st.Accounts().UserByName(context.Background(), name)
		isUser = err == nil
		if errors.Is(err, store.ErrNotFound) {
			return nil
		}
		return err
	})
	if err != nil {
		return nil, false, err
	}
	if outDir == "" {
		outDir = clientPackagesDir(&cfg)
	}
	if err := os.MkdirAll(outDir, 0o700); err != nil {
		return nil, isUser, fmt.Errorf("output directory: %w", err)
	}
	cc, err := a.IssueClient(name)
	if err != nil {
		return nil, isUser, err
	}
	if files, err = a.WriteClientFiles(cc, outDir); err != nil {
		return nil, isUser, err
	}
	fname, zip, err := a.ClientPackage(cc, d)
	if err != nil {
		return files, isUser, err
	}
	zpath := filepath.Join(outDir, fname)
	if err := os.WriteFile(zpath, zip, 0o600); err != nil {
		return files, isUser, fmt.Errorf("write connection package: %w", err)
	}
	return append(files, zpath), isUser, nil
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
