package marti

// A file's metadata and removal on the enterprise sync routes (api-marti.md
// "Enterprise sync"):
//
//	GET    /Marti/sync/{hash}/metadata                the file's sync record
//	PUT    /Marti/api/sync/metadata/{hash}/keywords   ["kw", ...]: its keywords, replaced
//	DELETE /Marti/sync/delete?hash=                   removes it (POST too)
//
// Who may do what follows the data packages' rule (access.md "Roles"): a
// file the caller's groups do not see is answered as a missing one; only
// its owner or an administrator may change or delete another user's file.

import (
	"errors"
	"net/http"

	"outpost/appliance/httpapi"
	"outpost/appliance/logx"
	"outpost/appliance/store"
)

// maxKeywordsBody bounds the body of the keywords route: 128 keywords of
// 256 bytes, as JSON, fit.
const maxKeywordsBody = 64 << 10

// syncMetadata answers GET /Marti/sync/{hash}/metadata with the file's
// sync record (api.md §2.9) in the official server's types (PrimaryKey and
// Size as strings), what node-tak's Files.meta reads.
func (h *Handler) syncMetadata(w http.ResponseWriter, r *http.Request) {
	p, err := h.packageByPath(r)
	if err != nil {
		h.lookupFailed(w, r, err)
		return
	}
	httpapi.WriteJSONAs(w, http.StatusOK, httpapi.JSONText, newMetadataRecord(p))
}

// setKeywords answers PUT /Marti/api/sync/metadata/{hash}/keywords: the
// body, a JSON array of keywords, replaces the file's keywords (the file's
// name and its submitter stay keywords of its record). 200 with an empty
// body, as the official server answers.
func (h *Handler) setKeywords(w http.ResponseWriter, r *http.Request) {
	if _, err := httpapi.CheckHash("hash", r.PathValue("hash")); err != nil {
		httpapi.Fail(w, r, err, "")
		return
	}
	var kw []string
	if err := httpapi.DecodeJSON(r, maxKeywordsBody, &kw); err != nil {
		httpapi.Fail(w, r, err, "")
		return
	}
	if kw == nil {
		httpapi.Fail(w, r, httpapi.BadRequest("body", "must be an array of keywords, not null"), "")
		return
	}
	clean, err := store.CleanKeywords(kw)
	if err != nil {
		httpapi.Fail(w, r, httpapi.InField("body", err), "")
		return
	}
	if p, ok := h.updatePackage(w, r, store.DataPackageUpdate{Keywords: &clean}, "the keywords could not be changed"); ok {
		h.log.Info("enterprise sync file keywords set", "hash", p.Hash, "name", logx.Clip(p.Name), "keywords", len(clean))
		w.WriteHeader(http.StatusOK)
	}
}

// deleteFile answers DELETE (and POST) /Marti/sync/delete?hash=: the file
// goes, with its place in every mission. 200 {"message": "deleted ..."}.
func (h *Handler) deleteFile(w http.ResponseWriter, r *http.Request) {
	hash, err := httpapi.CheckHash("hash", r.URL.Query().Get("hash"))
	if err != nil {
		httpapi.Fail(w, r, err, "")
		return
	}
	p, err := h.readablePackage(r, hash)
	if err != nil {
		h.lookupFailed(w, r, err)
		return
	}
	if err := mayChange(r, p); err != nil {
		httpapi.Fail(w, r, err, "")
		return
	}
	err = h.opts.Files.DeleteDataPackageByHash(r.Context(), hash)
	if errors.Is(err, store.ErrNotFound) { // deleted meanwhile
		httpapi.WriteMessage(w, http.StatusNotFound, "hash: no file with hash "+hash)
		return
	}
	if err != nil {
		httpapi.Fail(w, r, err, syncError+"the file could not be deleted")
		return
	}
	h.log.Info("enterprise sync file deleted", "hash", hash, "name", logx.Clip(p.Name), "remote", httpapi.ClientAddr(r).String())
	httpapi.WriteMessage(w, http.StatusOK, "deleted the file "+hash)
}
