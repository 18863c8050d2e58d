package marti

// Enterprise sync reads and privacy (api.md §4.2): downloads by hash or uid
// with Range and ATAK's offset, the existence check of missionquery, and
// the privacy switch of
// /Marti/api/sync/metadata/{hash}/tool. Downloads stream from the blob
// store chunk by chunk.

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"mime"
	"net/http"
	"strconv"
	"strings"

	"outpost/appliance/access"
	"outpost/appliance/httpapi"
	"outpost/appliance/logx"
	"outpost/appliance/store"
)

// packageByQuery finds the package named by the hash (or, when hashOnly is
// false, the uid) query parameter.
func (h *Handler) packageByQuery(r *http.Request, hashOnly bool) (store.DataPackage, error) {
	q := r.URL.Query()
	if raw := q.Get("hash"); raw != "" || hashOnly || q.Get("uid") == "" {
		hash, err := httpapi.CheckHash("hash", raw)
		if err != nil {
			if raw == "" && !hashOnly {
				return store.DataPackage{}, httpapi.BadRequest("hash", "required (or uid)")
			}
			return store.DataPackage{}, err
		}
		return h.readablePackage(r, hash)
	}
	uid := q.Get("uid")
	if err := httpapi.CheckText("uid", uid, true, 255); err != nil {
		return store.DataPackage{}, err
	}
	p, err := h.opts.Files.DataPackageByUID(r.Context(), uid)
	if errors.Is(err, store.ErrNotFound) || (err == nil && !access.From(r).CanRead(p.Groups, p.Owner)) {
		return store.DataPackage{}, httpapi.Errorf(http.StatusNotFound, "uid: no file with uid %q", httpapi.ClipValue(uid))
	}
	return p, err
}

// readablePackage is the package of hash when the caller may read it
// (access.md "Groups"); any other is answered as a missing one.
func (h *Handler) readablePackage(r *http.Request, hash string) (store.DataPackage, error) {
	p, err := h.opts.Files.DataPackageByHash(r.Context(), hash)
	if errors.Is(err, store.ErrNotFound) || (err == nil && !access.From(r).CanRead(p.Groups, p.Owner)) {
		return store.DataPackage{}, httpapi.Errorf(http.StatusNotFound, "hash: no file with hash %s", hash)
	}
	return p, err
}

// packageByPath is the readable package of the {hash} path value.
func (h *Handler) packageByPath(r *http.Request) (store.DataPackage, error) {
	hash, err := httpapi.CheckHash("hash", r.PathValue("hash"))
	if err != nil {
		return store.DataPackage{}, err
	}
	return h.readablePackage(r, hash)
}

// mayChange refuses a change of p by a caller who is neither its owner nor
// an administrator (access.md "Roles"; what anonymous clients stored anyone
// who sees it may change).
func mayChange(r *http.Request, p store.DataPackage) error {
	if !access.From(r).CanChange(p.Owner) {
		return fmt.Errorf("%w: another user's file; only its owner or an administrator may change or delete it", access.ErrForbidden)
	}
	return nil
}

// lookupError is the failure of packageByQuery or a lookup by hash.
func lookupError(err error) error {
	return httpapi.Internal(err, syncError+"the file could not be read")
}

// getContent answers GET and HEAD /Marti/sync/content?hash=|uid= with the
// file: 200, 206 for a Range, 404 when unknown. ATAK resumes a download
// with offset=N: the file from byte N on, answered 200 (a Range header, if
// present, wins).
func (h *Handler) getContent(w http.ResponseWriter, r *http.Request) error {
	p, err := h.packageByQuery(r, r.Method == http.MethodHead && r.URL.Query().Get("uid") == "")
	if err != nil {
		if h.serveTemplate(w, r, err) { // the ExCheck templates' contents (excheck_routes.go)
			return nil
		}
		return lookupError(err)
	}
	var offset int64
	if v := r.URL.Query().Get("offset"); v != "" && r.Header.Get("Range") == "" {
		offset, err = strconv.ParseInt(v, 10, 64)
		if err != nil || offset < 0 {
			return httpapi.BadRequest("offset", "must be a whole number of bytes, not %q", httpapi.ClipValue(v))
		}
		if offset > p.Size {
			w.Header().Set("Content-Range", "bytes */"+strconv.FormatInt(p.Size, 10))
			return httpapi.Errorf(http.StatusRequestedRangeNotSatisfiable, "offset: beyond the end of the file (%d bytes)", p.Size)
		}
	}
	return h.serve(w, r, p, offset)
}

// serve streams a package as an attachment under its file name, from
// offset on (0: whole, with Range support). A blob that cannot be opened
// is a fault of ours, whatever the store says (its row is there).
func (h *Handler) serve(w http.ResponseWriter, r *http.Request, p store.DataPackage, offset int64) error {
	br, err := h.opts.Files.OpenBlob(r.Context(), p.BlobID)
	if err != nil {
		return ours(err, syncError+"the file could not be read", "opening the enterprise sync file "+p.Hash)
	}
	defer br.Close()
	d := httpapi.Download{Name: p.Name, MIMEType: p.MIMEType, Hash: p.Hash, ModTime: p.SubmittedAt, Content: br}
	if offset > 0 {
		// The rest of the file is another entity: no tag, no ranges over it.
		d.Hash, d.Content = "", io.NewSectionReader(br, offset, p.Size-offset)
		r.Header.Del("If-Range")
	}
	h.log.Debug("enterprise sync file served", "hash", p.Hash, "name", logx.Clip(p.Name), "offset", offset, "method", r.Method)
	httpapi.ServeDownload(w, r, d)
	return nil
}

// missionQuery answers GET /Marti/sync/missionquery?hash= with the package
// (200) or 404: ATAK asks it before uploading, as an existence check.
func (h *Handler) missionQuery(w http.ResponseWriter, r *http.Request) error {
	p, err := h.packageByQuery(r, true)
	if err != nil {
		return lookupError(err)
	}
	return h.serve(w, r, p, 0)
}

// maxPrivacyBody bounds the body of the privacy switch.
const maxPrivacyBody = 4 << 10

// readPrivacy reads the privacy switch's body: JSON {"privacy": "..."}
// (the contract) or the bare word ATAK sends (private, public).
func readPrivacy(w http.ResponseWriter, r *http.Request) (string, error) {
	body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, maxPrivacyBody))
	var mbe *http.MaxBytesError
	if errors.As(err, &mbe) {
		return "", httpapi.Errorf(http.StatusRequestEntityTooLarge, "request body larger than %d bytes", maxPrivacyBody)
	}
	if err != nil {
		return "", httpapi.BadRequest("privacy", "the body could not be read")
	}
	text := strings.TrimSpace(string(body))
	mt, _, _ := mime.ParseMediaType(r.Header.Get("Content-Type"))
	if mt == "application/json" || strings.HasPrefix(text, "{") {
		var v struct {
			Privacy *string `json:"privacy"`
		}
		r.Body = io.NopCloser(bytes.NewReader(body))
		if err := httpapi.DecodeJSON(r, maxPrivacyBody, &v); err != nil {
			return "", err
		}
		if v.Privacy == nil {
			return "", httpapi.BadRequest("privacy", "required")
		}
		text = strings.TrimSpace(*v.Privacy)
	}
	if text == "" {
		return "", httpapi.BadRequest("privacy", `required: send private or public as the body, or {"privacy": "private"}`)
	}
	if err := httpapi.CheckText("privacy", text, true, 64); err != nil {
		return "", err
	}
	return text, nil
}

// setPrivacy answers PUT /Marti/api/sync/metadata/{hash}/tool: "private"
// makes the package private (Privacy 1, Tool private), any other value
// public (api.md §3). The answer is the plain text "Okay".
func (h *Handler) setPrivacy(w http.ResponseWriter, r *http.Request) error {
	if _, err := httpapi.CheckHash("hash", r.PathValue("hash")); err != nil {
		return err
	}
	privacy, err := readPrivacy(w, r)
	if err != nil {
		return err
	}
	private := privacy == store.ToolPrivate
	p, err := h.updatePackage(r, store.DataPackageUpdate{Private: &private}, "the privacy could not be changed")
	if err != nil {
		return err
	}
	h.log.Info("enterprise sync file privacy set", "hash", p.Hash, "name", logx.Clip(p.Name), "private", private)
	httpapi.WriteText(w, http.StatusOK, "Okay")
	return nil
}

// updatePackage applies up to the package of the {hash} path value when
// the caller may change it. Its failures: 404, 403, or a fault of ours
// answered with syncError and internal.
func (h *Handler) updatePackage(r *http.Request, up store.DataPackageUpdate, internal string) (store.DataPackage, error) {
	p, err := h.packageByPath(r)
	if err != nil {
		return p, lookupError(err)
	}
	if err := mayChange(r, p); err != nil {
		return p, err
	}
	up.PrimaryKey = p.PrimaryKey
	err = h.opts.Files.UpdateDataPackages(r.Context(), []store.DataPackageUpdate{up})
	if errors.Is(err, store.ErrNotFound) { // deleted meanwhile
		return p, httpapi.Errorf(http.StatusNotFound, "hash: no file with hash %s", p.Hash)
	}
	if err != nil {
		return p, httpapi.Internal(err, syncError+internal)
	}
	return p, nil
}

// metadataDownload answers GET /Marti/api/sync/metadata/{hash}/tool with
// the package under its original file name; any origin may read it (web
// clients fetch it across origins).
func (h *Handler) metadataDownload(w http.ResponseWriter, r *http.Request) error {
	w.Header().Set("Access-Control-Allow-Origin", "*")
	p, err := h.packageByPath(r)
	if err != nil {
		return lookupError(err)
	}
	return h.serve(w, r, p, 0)
}
