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
	"errors"
	"net/http"

	"outpost/appliance/access"
	"outpost/appliance/httpapi"
	"outpost/appliance/store"
)

// certificatePackage answers GET /ManageSystemUser/certificatePackage?id=
// (or ?username=) with the user's connection package.
func (a *API) certificatePackage(w http.ResponseWriter, r *http.Request) error {
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
		return httpapi.BadRequest("id or username", "one is required in the query string")
	}
	if errors.Is(err, store.ErrNotFound) {
		return notFound("no such system user")
	}
	if err != nil {
		return httpapi.Internal(err, usersError)
	}
	// access.md "Roles": a user's package holds its private key; only it
	// and administrators may fetch it.
	if err := access.SelfOrAdmin(access.From(r), u.UID); err != nil {
		return err
	}
	p, err := a.opts.Users.CertificatePackage(r.Context(), u)
	if err != nil {
		return httpapi.Internal(err, usersError)
	}
	return a.servePackage(w, r, p)
}

// servePackage streams a data package chunk by chunk, with Range support,
// as an attachment under its file name.
func (a *API) servePackage(w http.ResponseWriter, r *http.Request, p store.DataPackage) error {
	br, err := a.opts.Files.OpenBlob(r.Context(), p.BlobID)
	if err != nil {
		return httpapi.Internal(err, packagesError+"the content could not be read")
	}
	defer br.Close()
	httpapi.ServeDownload(w, r, httpapi.Download{Name: p.Name, MIMEType: p.MIMEType, Hash: p.Hash, ModTime: p.SubmittedAt, Content: br})
	return nil
}
