package marti

// Enterprise sync reads and privacy (api.md §4.2): downloads by hash or uid
// with Range and ATAK's offset, the existence check of missionquery, the
// search of public packages, and the privacy switch of
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

// lookupFailed answers an error of packageByQuery or a lookup by hash.
func (h *Handler) lookupFailed(w http.ResponseWriter, r *http.Request, err error) {
	httpapi.Fail(w, r, err, syncError+"the file could not be read")
}

// getContent answers GET and HEAD /Marti/sync/content?hash=|uid= with the
// file: 200, 206 for a Range, 404 when unknown. ATAK resumes a download
// with offset=N: the file from byte N on, answered 200 (a Range header, if
// present, wins).
func (h *Handler) getContent(w http.ResponseWriter, r *http.Request) {
	p, err := h.packageByQuery(r, r.Method == http.MethodHead && r.URL.Query().Get("uid") == "")
	if err != nil {
		if h.serveTemplate(w, r, err) { // the ExCheck templates' contents (excheck_routes.go)
			return
		}
		h.lookupFailed(w, r, err)
		return
	}
	var offset int64
	if v := r.URL.Query().Get("offset"); v != "" && r.Header.Get("Range") == "" {
		offset, err = strconv.ParseInt(v, 10, 64)
		if err != nil || offset < 0 {
			httpapi.Fail(w, r, httpapi.BadRequest("offset", "must be a whole number of bytes, not %q", httpapi.ClipValue(v)), "")
			return
		}
		if offset > p.Size {
			w.Header().Set("Content-Range", "bytes */"+strconv.FormatInt(p.Size, 10))
			httpapi.WriteMessage(w, http.StatusRequestedRangeNotSatisfiable,
				"offset: beyond the end of the file ("+strconv.FormatInt(p.Size, 10)+" bytes)")
			return
		}
	}
	h.serve(w, r, p, offset)
}

// serve streams a package as an attachment under its file name, from
// offset on (0: whole, with Range support).
func (h *Handler) serve(w http.ResponseWriter, r *http.Request, p store.DataPackage, offset int64) {
	br, err := h.opts.Files.OpenBlob(r.Context(), p.BlobID)
	if err != nil {
		h.log.Error("opening an enterprise sync file failed", "hash", p.Hash, "err", err)
		httpapi.WriteMessage(w, http.StatusInternalServerError, syncError+"the file could not be read")
		return
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
}

// missionQuery answers GET /Marti/sync/missionquery?hash= with the package
// (200) or 404: ATAK asks it before uploading, as an existence check.
func (h *Handler) missionQuery(w http.ResponseWriter, r *http.Request) {
	p, err := h.packageByQuery(r, true)
	if err != nil {
		h.lookupFailed(w, r, err)
		return
	}
	h.serve(w, r, p, 0)
}

// search answers GET /Marti/sync/search: the public packages carrying the
// keyword (keyword, or ATAK's keywords; default missionpackage) whose tool
// is tool (default public). Private packages never appear.
func (h *Handler) search(w http.ResponseWriter, r *http.Request) {
	q := r.URL.Query()
	field, kw := "keyword", q.Get("keyword")
	if kw == "" {
		field, kw = "keywords", q.Get("keywords")
	}
	if kw == "" {
		kw = store.MissionPackageKeyword
	}
	if err := httpapi.CheckText(field, kw, true, 256); err != nil {
		httpapi.Fail(w, r, err, "")
		return
	}
	tool := q.Get("tool")
	if tool == "" {
		tool = store.ToolPublic
	}
	if err := httpapi.CheckText("tool", tool, true, 64); err != nil {
		httpapi.Fail(w, r, err, "")
		return
	}
	// Written as the packages are read; resultCount follows the results,
	// whose number is known only then.
	caller := access.From(r)
	l := httpapi.NewListing(w, r, httpapi.JSONText, `{"results":[`, "")
	err := h.opts.Files.EachSearchDataPackage(r.Context(), kw, func(p store.DataPackage) error {
		if p.Tool != tool || p.Privacy != 0 || !caller.CanRead(p.Groups, p.Owner) {
			return nil
		}
		return l.Item(newRecord(p))
	})
	l.SetTail(fmt.Sprintf(`],"resultCount":%d}`+"\n", l.Count()))
	l.Finish(err, syncError+"the search failed")
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
func (h *Handler) setPrivacy(w http.ResponseWriter, r *http.Request) {
	hash, err := httpapi.CheckHash("hash", r.PathValue("hash"))
	if err != nil {
		httpapi.Fail(w, r, err, "")
		return
	}
	privacy, err := readPrivacy(w, r)
	if err != nil {
		httpapi.Fail(w, r, err, "")
		return
	}
	p, err := h.readablePackage(r, hash)
	if err != nil {
		h.lookupFailed(w, r, err)
		return
	}
	if !access.From(r).CanChange(p.Owner) {
		httpapi.Fail(w, r, fmt.Errorf("%w: another user's file; only its owner may change it", access.ErrForbidden), "")
		return
	}
	private := privacy == store.ToolPrivate
	err = h.opts.Files.UpdateDataPackages(r.Context(), []store.DataPackageUpdate{{PrimaryKey: p.PrimaryKey, Private: &private}})
	if errors.Is(err, store.ErrNotFound) { // deleted meanwhile
		httpapi.WriteMessage(w, http.StatusNotFound, "hash: no file with hash "+hash)
		return
	}
	if err != nil {
		h.log.Error("changing the privacy of an enterprise sync file failed", "hash", hash, "err", err)
		httpapi.WriteMessage(w, http.StatusInternalServerError, syncError+"the privacy could not be changed")
		return
	}
	h.log.Info("enterprise sync file privacy set", "hash", hash, "name", logx.Clip(p.Name), "private", private)
	httpapi.WriteText(w, http.StatusOK, "Okay")
}

// metadataDownload answers GET /Marti/api/sync/metadata/{hash}/tool with
// the package under its original file name; any origin may read it (web
// clients fetch it across origins).
func (h *Handler) metadataDownload(w http.ResponseWriter, r *http.Request) {
	w.Header().Set("Access-Control-Allow-Origin", "*")
	hash, err := httpapi.CheckHash("hash", r.PathValue("hash"))
	if err != nil {
		httpapi.Fail(w, r, err, "")
		return
	}
	p, err := h.readablePackage(r, hash)
	if err != nil {
		h.lookupFailed(w, r, err)
		return
	}
	h.serve(w, r, p, 0)
}
