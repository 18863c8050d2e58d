package mgmt

// POST /DataPackageTable?filename=&creatorUid= (api.md §4.1, §2.8): the
// multipart field "assetfile" is streamed part by part into the blob store
// (never whole in memory), hashed with SHA-256 on the way, its MIME type
// detected from its first bytes, and tagged "missionpackage". It becomes
// visible only when its last byte and its row commit together: a client
// that disconnects mid-upload, or an upload larger than maxUploadBytes (413),
// leaves nothing behind. The file name is kept as a base name
// (logx.FileName).

import (
	"errors"
	"net/http"
	"strconv"

	"outpost/appliance/httpapi"
	"outpost/appliance/logx"
	"outpost/appliance/store"
)

func (a *API) uploadPackage(w http.ResponseWriter, r *http.Request) error {
	q := r.URL.Query()
	name, creator := q.Get("filename"), q.Get("creatorUid")
	if err := checkText("filename", name, true, logx.MaxFileName); err != nil {
		return err
	}
	name = logx.FileName(name, "") // a base name only: "../../x" is x
	if err := checkText("creatorUid", creator, true, 255); err != nil {
		return err
	}
	up := httpapi.Upload{What: "data package", Name: name, MaxBytes: a.opts.MaxUploadBytes, Space: a.opts.Space, Internal: packagesError + "the upload could not be stored"}
	// The upload answers its own failures, through httpapi.Fail.
	if !up.Begin(w, r) {
		return nil
	}
	part, ok := up.File(w, r, "assetfile")
	if !ok {
		return nil
	}
	groups, err := a.shareWith(r, "groups", r.URL.Query().Get("groups"))
	if err != nil {
		up.Failed(w, r, err)
		return nil
	}
	p, err := a.opts.Files.PutDataPackage(r.Context(), store.DataPackageInput{
		Name:           name,
		SubmissionUser: creator,
		CreatorUID:     creator,
		Keywords:       store.UploadKeywords(),
		Groups:         groups,
		Owner:          owner(r),
	}, part)
	if errors.Is(err, store.ErrInvalid) {
		err = httpapi.InField("filename", err)
	}
	if err != nil {
		up.Failed(w, r, err)
		return nil
	}
	setAuditNote(r, "<upload: assetfile %q, %d bytes, sha256 %s>", name, p.Size, p.Hash)
	a.log.Info("data package uploaded", "name", logx.Clip(name), "creator_uid", logx.Clip(creator),
		"size", p.Size, "hash", p.Hash, "mime_type", p.MIMEType, "primary_key", p.PrimaryKey)
	httpapi.WriteJSON(w, http.StatusOK, struct {
		Message string `json:"message"`
		ID      string `json:"id"`
	}{"success", strconv.FormatInt(p.PrimaryKey, 10)})
	return nil
}
