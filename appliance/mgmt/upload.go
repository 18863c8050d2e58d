package mgmt

// POST /DataPackageTable?filename=&creatorUid= (api.md §4.1, §2.8): the
// multipart field "assetfile" is streamed part by part into the blob store
// (never whole in memory), hashed with SHA-256 on the way, its MIME type
// detected from its first bytes, and tagged "missionpackage". It becomes
// visible only when its last byte and its row commit together: a client
// that disconnects mid-upload, or an upload larger than maxUploadBytes (413),
// leaves nothing behind.

import (
	"context"
	"errors"
	"io"
	"net/http"
	"strconv"

	"outpost/appliance/httpapi"
	"outpost/appliance/logx"
	"outpost/appliance/store"
)

func (a *API) uploadPackage(w http.ResponseWriter, r *http.Request) {
	q := r.URL.Query()
	name, creator := q.Get("filename"), q.Get("creatorUid")
	if err := checkText("filename", name, true, 255); err != nil {
		httpapi.WriteError(w, err, packagesError)
		return
	}
	if err := checkText("creatorUid", creator, true, 255); err != nil {
		httpapi.WriteError(w, err, packagesError)
		return
	}
	limit := a.opts.MaxUploadBytes
	if r.ContentLength > limit+httpapi.MultipartSlack {
		a.refuseTooLarge(w, r, name, r.ContentLength)
		return
	}
	r.Body = http.MaxBytesReader(w, r.Body, limit+httpapi.MultipartSlack)
	part, err := httpapi.FilePart(r, "assetfile")
	if err != nil {
		var he *httpapi.Error
		if errors.As(err, &he) {
			httpapi.WriteError(w, err, packagesError)
		} else {
			a.uploadReadError(w, r, name, err)
		}
		return
	}
	p, err := a.opts.Store.PutDataPackage(r.Context(), store.DataPackageInput{
		Name:           name,
		SubmissionUser: creator,
		CreatorUID:     creator,
		Keywords:       store.UploadKeywords(),
	}, part)
	if err != nil {
		a.uploadFailed(w, r, name, err)
		return
	}
	setAuditNote(r, "<upload: assetfile %q, %d bytes, sha256 %s>", name, p.Size, p.Hash)
	a.log.Info("data package uploaded", "name", logx.Clip(name), "creator_uid", logx.Clip(creator),
		"size", p.Size, "hash", p.Hash, "mime_type", p.MIMEType, "primary_key", p.PrimaryKey)
	httpapi.WriteJSON(w, http.StatusOK, struct {
		Message string `json:"message"`
		ID      string `json:"id"`
	}{"success", strconv.FormatInt(p.PrimaryKey, 10)})
}

// uploadFailed answers a failed store.PutDataPackage.
func (a *API) uploadFailed(w http.ResponseWriter, r *http.Request, name string, err error) {
	var mbe *http.MaxBytesError
	switch {
	case errors.Is(err, store.ErrTooLarge) || errors.As(err, &mbe):
		a.refuseTooLarge(w, r, name, -1)
	case errors.Is(err, store.ErrInvalid):
		httpapi.WriteError(w, httpapi.BadRequest("filename", "%s", storeDetail(err, store.ErrInvalid)), packagesError)
	case r.Context().Err() != nil || isReadError(err):
		a.uploadReadError(w, r, name, err)
	default:
		a.fail(w, r, err, packagesError+"the upload could not be stored", "storing an uploaded data package failed")
	}
}

// isReadError reports whether the store failed reading the client's body
// (as opposed to writing the database).
func isReadError(err error) bool {
	return errors.Is(err, io.ErrUnexpectedEOF) || errors.Is(err, context.Canceled)
}

// uploadReadError answers an upload whose body could not be read: the
// client went away (nothing to answer; nothing was stored) or sent a
// broken multipart body.
func (a *API) uploadReadError(w http.ResponseWriter, r *http.Request, name string, err error) {
	var mbe *http.MaxBytesError
	if errors.As(err, &mbe) {
		a.refuseTooLarge(w, r, name, -1)
		return
	}
	a.log.Info("data package upload abandoned; nothing stored", "name", logx.Clip(name),
		"remote", httpapi.ClientAddr(r).String(), "reason", logx.Clip(err.Error()))
	if r.Context().Err() != nil {
		return
	}
	httpapi.WriteError(w, httpapi.BadRequest("assetfile", "the upload ended early or is malformed"), packagesError)
}

func (a *API) refuseTooLarge(w http.ResponseWriter, r *http.Request, name string, size int64) {
	a.log.Warn("data package upload refused: too large", "name", logx.Clip(name), "remote", httpapi.ClientAddr(r).String(),
		"content_length", size, "max_upload_bytes", a.opts.MaxUploadBytes)
	w.Header().Set("Connection", "close")
	httpapi.WriteMessage(w, http.StatusRequestEntityTooLarge,
		"assetfile: larger than the "+strconv.FormatInt(a.opts.MaxUploadBytes, 10)+" bytes this server accepts (maxUploadBytes)")
}
