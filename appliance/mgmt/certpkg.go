package mgmt

// Certificate packages of system users (api.md §5.10): a user created with
// Certs "true" gets a client certificate and the connection package of its
// device, stored as a private data package (it holds the private key) and
// named in certificatePackageName. The administrator downloads it with
//
//	GET /ManageSystemUser/certificatePackage?id=<uid>   (or ?username=<name>)
//
// or, knowing its hash, GET /DataPackageTable/<hash>. Deleting the user
// revokes the certificate and removes the package.

import (
	"context"
	"errors"
	"fmt"
	"net/http"

	"outpost/appliance/httpapi"
	"outpost/appliance/logx"
	"outpost/appliance/pki"
	"outpost/appliance/store"
)

// issueCertificatePackage builds and stores u's package and records it on
// the user. On failure nothing usable is left behind: the certificate is
// revoked and the package removed.
func (a *API) issueCertificatePackage(ctx context.Context, u store.User, d pki.Device) (name, hash string, err error) {
	if a.opts.Authority == nil {
		return "", "", errors.New("no certificate authority is configured")
	}
	up, err := a.opts.Authority.IssueUserPackage(ctx, u.Name, d, a.opts.Files)
	if err != nil {
		return "", "", fmt.Errorf("certificate package for %q: %w", u.Name, err)
	}
	if err := a.opts.Accounts.SetUserCertificatePackage(ctx, u.UID, up.FileName, up.Hash); err != nil {
		bg := context.WithoutCancel(ctx)
		if rerr := a.opts.Authority.Revoke(up.Cert.Cert.SerialNumber, "cessation_of_operation"); rerr != nil {
			a.log.Error("could not revoke the certificate of a failed user package", "user", logx.Clip(u.Name), "err", rerr)
		}
		if derr := a.opts.Files.DeleteDataPackageByHash(bg, up.Hash); derr != nil {
			a.log.Error("could not remove a failed user package", "user", logx.Clip(u.Name), "err", derr)
		}
		a.opts.Authority.RemoveUserPackageFile(up.FileName)
		return "", "", fmt.Errorf("certificate package for %q: %w", u.Name, err)
	}
	return up.FileName, up.Hash, nil
}

// removeCertificatePackage deletes a deleted user's package (data package
// and file); failures are logged.
func (a *API) removeCertificatePackage(u store.User) {
	if u.CertificatePackageHash != "" {
		err := a.opts.Files.DeleteDataPackageByHash(context.Background(), u.CertificatePackageHash)
		if err != nil && !errors.Is(err, store.ErrNotFound) {
			a.log.Error("could not remove a deleted user's certificate package", "user", logx.Clip(u.Name), "err", err)
		}
	}
	if u.CertificatePackageHash != "" && u.CertificatePackageName != "" && a.opts.Authority != nil {
		if err := a.opts.Authority.RemoveUserPackageFile(u.CertificatePackageName); err != nil {
			a.log.Error("could not remove a deleted user's certificate package file", "user", logx.Clip(u.Name), "err", err)
		}
	}
}

// certificatePackage answers GET /ManageSystemUser/certificatePackage?id=
// (or ?username=) with the user's connection package.
func (a *API) certificatePackage(w http.ResponseWriter, r *http.Request) {
	q := r.URL.Query()
	id, name := q.Get("id"), q.Get("username")
	var (
		u   store.User
		err error
	)
	switch {
	case id != "":
		u, err = a.opts.Accounts.UserByUID(r.Context(), id)
	case name != "":
		u, err = a.opts.Accounts.UserByName(r.Context(), name)
	default:
		httpapi.Fail(w, r, httpapi.BadRequest("id or username", "one is required in the query string"), usersError)
		return
	}
	if errors.Is(err, store.ErrNotFound) {
		httpapi.WriteMessage(w, http.StatusNotFound, "no such system user")
		return
	}
	if err != nil {
		httpapi.Fail(w, r, err, usersError)
		return
	}
	if u.CertificatePackageHash == "" {
		httpapi.WriteMessage(w, http.StatusNotFound, "this user has no certificate package")
		return
	}
	p, err := a.opts.Files.DataPackageByHash(r.Context(), u.CertificatePackageHash)
	if errors.Is(err, store.ErrNotFound) {
		httpapi.WriteMessage(w, http.StatusNotFound, "this user's certificate package is gone")
		return
	}
	if err != nil {
		httpapi.Fail(w, r, err, usersError)
		return
	}
	a.servePackage(w, r, p)
}

// servePackage streams a data package chunk by chunk, with Range support,
// as an attachment under its file name.
func (a *API) servePackage(w http.ResponseWriter, r *http.Request, p store.DataPackage) {
	br, err := a.opts.Files.OpenBlob(r.Context(), p.BlobID)
	if err != nil {
		httpapi.Fail(w, r, err, packagesError+"the content could not be read")
		return
	}
	defer br.Close()
	httpapi.ServeDownload(w, r, httpapi.Download{Name: p.Name, MIMEType: p.MIMEType, Hash: p.Hash, ModTime: p.SubmittedAt, Content: br})
}
