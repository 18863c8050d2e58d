package marti

// Enterprise sync uploads (api.md §4.2): /Marti/sync/upload,
// /Marti/sync/content (PUT, POST) and /Marti/sync/missionupload. The file
// arrives as the multipart field "assetfile" or as the raw body, and is
// streamed into the blob store (never whole in memory), hashed on the way
// and, when the client announced a hash, checked against it. It becomes
// visible only when its last byte and its row commit together: a mismatch,
// an upload over maxUploadBytes or a client that goes away leaves nothing.
// Content already stored is kept once (the store keeps one package per
// hash).

import (
	"bufio"
	"errors"
	"io"
	"mime"
	"net/http"
	"strconv"

	"outpost/appliance/access"
	"outpost/appliance/fault"
	"outpost/appliance/httpapi"
	"outpost/appliance/logx"
	"outpost/appliance/store"
)

// syncError starts the contract's 500 text for data packages (api.md §7);
// a short description of what failed follows (never the internal error).
const syncError = "An error occurred accessing datapackage details: "

// syncRecord is the api.md §2.9 enterprise sync record: the answer to an
// upload and an item of the search.
type syncRecord struct {
	UID                string   `json:"UID"`
	Name               string   `json:"Name"`
	Hash               string   `json:"Hash"`
	PrimaryKey         int64    `json:"PrimaryKey"` // an integer: ATAK parses it as one
	SubmissionDateTime string   `json:"SubmissionDateTime"`
	SubmissionUser     string   `json:"SubmissionUser"`
	CreatorUID         string   `json:"CreatorUid"`
	Keywords           []string `json:"Keywords"`
	MIMEType           string   `json:"MIMEType"`
	Size               int64    `json:"Size"`
	Tool               string   `json:"Tool"`
	Private            int      `json:"Private"`
	// Expiration is the official server's EXPIRATION: "-1", Outpost does
	// not expire files.
	Expiration string `json:"EXPIRATION"`
}

func newRecord(p store.DataPackage) syncRecord {
	return syncRecord{UID: p.UID, Name: p.Name, Hash: p.Hash, PrimaryKey: p.PrimaryKey,
		SubmissionDateTime: httpapi.FormatTime(p.SubmittedAt), SubmissionUser: p.SubmissionUser,
		CreatorUID: p.CreatorUID, Keywords: store.SyncKeywords(p), MIMEType: p.MIMEType, Size: p.Size,
		Tool: p.Tool, Private: p.Privacy, Expiration: "-1"}
}

// searchRecord is an item of /Marti/sync/search: the sync record with
// PrimaryKey as a string, as the official server writes every field of its
// Metadata (Metadata.toJSONObject) and node-tak's Package schema reads it;
// api.md §2.9 leaves PrimaryKey's type open ("integer or string") and fixes
// Size as an integer, which it stays (docs/api-marti.md "The sync record").
type searchRecord struct {
	syncRecord
	PrimaryKey string `json:"PrimaryKey"`
}

// metadataRecord is the answer of GET /Marti/sync/{hash}/metadata, a route
// the interface does not describe: the official server's strings for both
// PrimaryKey and Size (node-tak's Content and Package schemas).
type metadataRecord struct {
	syncRecord
	PrimaryKey string `json:"PrimaryKey"`
	Size       string `json:"Size"`
}

func newSearchRecord(p store.DataPackage) searchRecord {
	return searchRecord{syncRecord: newRecord(p), PrimaryKey: strconv.FormatInt(p.PrimaryKey, 10)}
}

func newMetadataRecord(p store.DataPackage) metadataRecord {
	return metadataRecord{syncRecord: newRecord(p), PrimaryKey: strconv.FormatInt(p.PrimaryKey, 10), Size: strconv.FormatInt(p.Size, 10)}
}

// upload is what the query of an upload says about the file.
type upload struct {
	name, creator, hash string
	private             bool
	keywords            []string
}

// uploadQuery reads filename (or name), creatorUid, hash (required when
// hashRequired), tool and keywords from the query. The file name is kept as
// a base name only (logx.FileName: no directory part, no leading dot);
// defaultName stands in when the client gave none or nothing of it is left,
// and "" makes the name required.
func uploadQuery(r *http.Request, hashRequired bool, defaultName string) (upload, error) {
	q := r.URL.Query()
	var u upload
	nameField := "filename"
	u.name = q.Get("filename")
	if u.name == "" && q.Get("name") != "" {
		nameField, u.name = "name", q.Get("name")
	}
	if u.name == "" && defaultName == "" {
		return u, httpapi.BadRequest("filename", "required (the file name; name is accepted too)")
	}
	if err := httpapi.CheckText(nameField, u.name, false, logx.MaxFileName); err != nil {
		return u, err
	}
	u.name = logx.FileName(u.name, defaultName)
	u.creator = q.Get("creatorUid")
	if err := httpapi.CheckText("creatorUid", u.creator, true, 255); err != nil {
		return u, err
	}
	if h := q.Get("hash"); h != "" || hashRequired {
		var err error
		if u.hash, err = httpapi.CheckHash("hash", h); err != nil {
			return u, err
		}
	}
	switch tool := q.Get("tool"); tool {
	case "", store.ToolPublic:
	case store.ToolPrivate:
		u.private = true
	default:
		return u, httpapi.BadRequest("tool", "must be public or private, not %q", httpapi.ClipValue(tool))
	}
	kwField, kw := "keywords", q.Get("keywords")
	if kw == "" {
		kwField, kw = "keyword", q.Get("keyword")
	}
	extra, err := store.ParseKeywords(kw)
	if err != nil {
		return u, httpapi.InField(kwField, err)
	}
	u.keywords = store.UploadKeywords(extra...)
	return u, nil
}

// upload answers POST /Marti/sync/upload with the stored file's record.
func (h *Handler) upload(w http.ResponseWriter, r *http.Request) error {
	u, err := uploadQuery(r, false, "")
	if err != nil {
		return httpapi.Internal(err, syncError)
	}
	p, ok, err := h.receive(w, r, u)
	if !ok {
		return err
	}
	httpapi.WriteJSONAs(w, http.StatusOK, httpapi.JSONText, newRecord(p))
	return nil
}

// putContent answers PUT and POST /Marti/sync/content (the response body is
// not in the contract: the stored file's record, as for upload).
func (h *Handler) putContent(w http.ResponseWriter, r *http.Request) error {
	u, err := uploadQuery(r, true, "")
	if err != nil {
		return httpapi.Internal(err, syncError)
	}
	p, ok, err := h.receive(w, r, u)
	if !ok {
		return err
	}
	httpapi.WriteJSONAs(w, http.StatusOK, httpapi.JSONText, newRecord(p))
	return nil
}

// missionUpload answers PUT and POST /Marti/sync/missionupload with the
// plain-text link to the package's metadata, in the scheme and port of the
// listener the request came on and the configured public host.
func (h *Handler) missionUpload(w http.ResponseWriter, r *http.Request) error {
	u, err := uploadQuery(r, true, "")
	if err != nil {
		return httpapi.Internal(err, syncError)
	}
	p, ok, err := h.receive(w, r, u)
	if !ok {
		return err
	}
	httpapi.WriteText(w, http.StatusOK, h.linkBase(r)+"/Marti/api/sync/metadata/"+p.Hash+"/tool")
	return nil
}

// fileType is the MIME type to store for a declared Content-Type: its media
// type, or "" (detect from the content) when absent or generic.
func fileType(ct string) string {
	mt, _, err := mime.ParseMediaType(ct)
	if err != nil || mt == "application/octet-stream" {
		return ""
	}
	return mt
}

// receive streams the request's file into the store and reports whether it
// was stored. When not, a refusal is returned, or (err nil) the upload's
// failure (too large, the disk reserve, a broken body, a refusal of the
// store) has been answered by httpapi.Upload.
func (h *Handler) receive(w http.ResponseWriter, r *http.Request, u upload) (p store.DataPackage, ok bool, err error) {
	if err := h.actFor(r, "creatorUid", u.creator); err != nil {
		return p, false, err
	}
	up := httpapi.Upload{What: "enterprise sync", Name: u.name, MaxBytes: h.opts.MaxUploadBytes, Space: h.opts.Space, Internal: syncError + "the upload could not be stored"}
	if !up.Begin(w, r) {
		return p, false, nil
	}
	var (
		content  io.Reader
		mimeType string
	)
	if httpapi.IsMultipart(r) {
		part, ok := up.File(w, r, "assetfile")
		if !ok {
			return p, false, nil
		}
		content, mimeType = part, fileType(part.Header.Get("Content-Type"))
	} else {
		ct := r.Header.Get("Content-Type")
		if ct == "" {
			return p, false, httpapi.BadRequest("Content-Type", "required: the MIME type of the file in the body, or multipart/form-data with the file in the field assetfile")
		}
		br := bufio.NewReaderSize(r.Body, 64<<10)
		if _, err := br.Peek(1); err == io.EOF {
			return p, false, httpapi.BadRequest("body", "empty: send the file as the body, or multipart/form-data with the file in the field assetfile")
		}
		content, mimeType = br, fileType(ct)
	}
	submitter, _ := h.identity(r)
	if submitter == "" {
		submitter = u.creator
	}
	p, err = h.opts.Files.PutDataPackage(r.Context(), store.DataPackageInput{
		Name: u.name, SubmissionUser: submitter, CreatorUID: u.creator, Keywords: u.keywords,
		MIMEType: mimeType, Private: u.private, ExpectedHash: u.hash,
		// Shared with the sender's IN groups (access.md "Groups").
		Groups: access.From(r).In, Owner: owner(r),
	}, content)
	if errors.Is(err, store.ErrHashMismatch) {
		h.log.Info("enterprise sync upload refused: content does not match its hash; nothing stored", "name", logx.Clip(u.name),
			"remote", httpapi.ClientAddr(r).String())
		err = httpapi.BadRequest("hash", "does not match the content (%s); nothing was stored", fault.Detail(err))
	}
	if err != nil {
		up.Failed(w, r, err)
		return store.DataPackage{}, false, nil
	}
	h.log.Info("enterprise sync file stored", "route", logx.Clip(r.URL.Path), "name", logx.Clip(p.Name), "submitter", logx.Clip(submitter),
		"creator_uid", logx.Clip(u.creator), "size", p.Size, "hash", p.Hash, "mime_type", logx.Clip(p.MIMEType),
		"primary_key", p.PrimaryKey, "tool", p.Tool)
	return p, true, nil
}
