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
func (h *Handler) syncMetadata(w http.ResponseWriter, r *http.Request) error {
	p, err := h.packageByPath(r)
	if err != nil {
		return lookupError(err)
	}
	httpapi.WriteJSONAs(w, http.StatusOK, httpapi.JSONText, newMetadataRecord(p))
	return nil
}

// setKeywords answers PUT /Marti/api/sync/metadata/{hash}/keywords: the
// body, a JSON array of keywords, replaces the file's keywords (the file's
// name and its submitter stay keywords of its record). 200 with an empty
// body, as the official server answers.
func (h *Handler) setKeywords(w http.ResponseWriter, r *http.Request) error {
	if _, err := httpapi.CheckHash("hash", r.PathValue("hash")); err != nil {
		return err
	}
	var kw []string
	if err := httpapi.DecodeJSON(r, maxKeywordsBody, &kw); err != nil {
		return err
	}
	if kw == nil {
		return httpapi.BadRequest("body", "must be an array of keywords, not null")
	}
	clean, err := store.CleanKeywords(kw)
	if err != nil {
		return httpapi.InField("body", err) // ErrInvalid: a 400
	}
	p, err := h.updatePackage(r, store.DataPackageUpdate{Keywords: &clean}, "the keywords could not be changed")
	if err != nil {
		return err
	}
	h.log.Info("enterprise sync file keywords set", "hash", p.Hash, "name", logx.Clip(p.Name), "keywords", len(clean))
	w.WriteHeader(http.StatusOK)
	return nil
}

// deleteFile answers DELETE (and POST) /Marti/sync/delete?hash=: the file
// goes, with its place in every mission. 200 {"message": "deleted ..."}.
func (h *Handler) deleteFile(w http.ResponseWriter, r *http.Request) error {
	hash, err := httpapi.CheckHash("hash", r.URL.Query().Get("hash"))
	if err != nil {
		return err
	}
	p, err := h.readablePackage(r, hash)
	if err != nil {
		return lookupError(err)
	}
	if err := mayChange(r, p); err != nil {
		return err
	}
	err = h.opts.Files.DeleteDataPackageByHash(r.Context(), hash)
	if errors.Is(err, store.ErrNotFound) { // deleted meanwhile
		return httpapi.Errorf(http.StatusNotFound, "hash: no file with hash %s", hash)
	}
	if err != nil {
		return httpapi.Internal(err, syncError+"the file could not be deleted")
	}
	h.log.Info("enterprise sync file deleted", "hash", hash, "name", logx.Clip(p.Name), "remote", httpapi.ClientAddr(r).String())
	httpapi.WriteMessage(w, http.StatusOK, "deleted the file "+hash)
	return nil
}
