package pki

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"

	"outpost/appliance/atomicfile"
)

// PackageSink stores a connection package as a data package (the store's
// blob table behind /Marti/sync and /DataPackageTable), submitted by the
// server and owned by the user it is for.
type PackageSink interface {
	PutPackage(ctx context.Context, filename, submitter, owner string, r io.Reader) (hash string, err error)
}

// UserPackage describes a package made by IssueUserPackage.
type UserPackage struct {
	Name     string
	Device   Device
	FileName string // the package's file name, also its name under ClientPackagesDir
	Hash     string // SHA-256 reported by the sink ("" without a sink)
	Cert     *ClientCert
}

// IssueUserPackage is what user creation with Certs "true" does (api.md §5.10):
// issue a client certificate for name, build the device's connection package,
// write it under ClientPackagesDir (mode 0600: it holds the private key) and
// store it through sink as a data package (sink may be nil). If any step after
// issuance fails, the new certificate is revoked and the file removed, so no
// usable credential is left behind.
func (a *Authority) IssueUserPackage(ctx context.Context, name string, d Device, sink PackageSink) (*UserPackage, error) {
	if err := ValidateName(name); err != nil {
		return nil, fmt.Errorf("user package: %w", err)
	}
	if _, err := ParseDevice(string(d)); err != nil {
		return nil, fmt.Errorf("user package: %w", err)
	}
	if _, err := a.connectHost(); err != nil {
		return nil, fmt.Errorf("user package: %w", err)
	}
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	cc, err := a.IssueClient(name)
	if err != nil {
		return nil, fmt.Errorf("user package: %w", err)
	}
	var written string
	undo := func(cause error) error {
		if written != "" {
			_ = os.Remove(written)
		}
		if rerr := a.Revoke(cc.Cert.SerialNumber, "cessation_of_operation"); rerr != nil {
			a.log.Error("could not revoke the certificate of a failed user package",
				"name", name, "serial", cc.Cert.SerialNumber.String(), "err", rerr)
			return errors.Join(cause, rerr)
		}
		return cause
	}
	filename, data, err := a.ClientPackage(cc, d)
	if err != nil {
		return nil, undo(fmt.Errorf("user package: %w", err))
	}
	path := filepath.Join(a.cfg.ClientPackagesDir, filename)
	if err := atomicfile.Write(path, data, 0o600); err != nil {
		return nil, undo(fmt.Errorf("user package: %w", err))
	}
	written = path
	up := &UserPackage{Name: name, Device: d, FileName: filename, Cert: cc}
	if sink != nil {
		hash, err := sink.PutPackage(ctx, filename, a.cfg.ServerName, name, bytes.NewReader(data))
		if err != nil {
			return nil, undo(fmt.Errorf("user package: store %s: %w", filename, err))
		}
		up.Hash = hash
	}
	a.log.Info("created user connection package", "name", name, "device", string(d),
		"file", path, "serial", cc.Cert.SerialNumber.String(), "stored", sink != nil)
	return up, nil
}

// RemoveUserPackageFile removes a connection package written by
// IssueUserPackage from ClientPackagesDir (deleting its user: the package
// holds a private key of a now revoked certificate). filename must be a bare
// file name; a missing file is not an error.
func (a *Authority) RemoveUserPackageFile(filename string) error {
	if filename == "" || filename != filepath.Base(filename) || filename == "." || filename == ".." {
		return fmt.Errorf("remove user package: %q is not a file name", filename)
	}
	err := os.Remove(filepath.Join(a.cfg.ClientPackagesDir, filename))
	if err != nil && !errors.Is(err, os.ErrNotExist) {
		return fmt.Errorf("remove user package: %w", err)
	}
	return nil
}
