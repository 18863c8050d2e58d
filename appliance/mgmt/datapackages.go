package mgmt

// /DataPackageTable (api.md §4.1, §2.8): list, change, delete and download
// data packages. Uploads are in upload.go. These are the rows the client
// API's enterprise sync serves (api.md §2.9): one table, two interfaces.

import (
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strconv"
	"strings"

	"outpost/appliance/access"
	"outpost/appliance/fault"
	"outpost/appliance/httpapi"
	"outpost/appliance/logx"
	"outpost/appliance/store"
)

// packagesError starts the contract's 500 text for data packages (api.md §7);
// a short description of what failed follows (never the internal error).
const packagesError = "An error occurred accessing datapackage details: "

// packageItem is one package as api.md §2.8 lists it.
type packageItem struct {
	PrimaryKey         string `json:"PrimaryKey"`
	Name               string `json:"Name"`
	Hash               string `json:"Hash"`
	SubmissionUser     string `json:"SubmissionUser"`
	SubmissionDateTime string `json:"SubmissionDateTime"`
	Size               int64  `json:"Size"`
	Privacy            int    `json:"Privacy"`
	Keywords           string `json:"Keywords"`
	// Owner and Editable are additions: who uploaded it ("" for an
	// anonymous client), and whether the caller may change or delete it
	// (access.md "Roles"), so the console offers only what will work.
	Owner    string `json:"Owner"`
	Editable bool   `json:"Editable"`
}

// listPackages answers GET /DataPackageTable: {"json_list": [...]}, newest
// first, written as the packages are read.
func (a *API) listPackages(w http.ResponseWriter, r *http.Request) error {
	caller := access.From(r)
	l := httpapi.NewListing(w, r, "application/json", `{"json_list":[`, "]}\n")
	err := a.opts.Files.EachDataPackage(r.Context(), func(p store.DataPackage) error {
		if !caller.CanRead(p.Groups, p.Owner) {
			return nil // access.md "Groups"
		}
		return l.Item(packageItem{
			PrimaryKey:         strconv.FormatInt(p.PrimaryKey, 10),
			Name:               p.Name,
			Hash:               p.Hash,
			SubmissionUser:     p.SubmissionUser,
			SubmissionDateTime: httpapi.FormatTime(p.SubmittedAt),
			Size:               p.Size,
			Privacy:            p.Privacy,
			Keywords:           store.JoinKeywords(p.Keywords),
			Owner:              p.Owner,
			Editable:           caller.CanChange(p.Owner),
		})
	})
	l.Finish(err, packagesError+"the list could not be read")
	return nil
}

// packageBatch reads {"DataPackages": [...]} with 1 to maxPackageBatch items.
func packageBatch(r *http.Request) ([]json.RawMessage, error) {
	var body struct {
		DataPackages []json.RawMessage `json:"DataPackages"`
	}
	if err := httpapi.DecodeJSON(r, maxJSONBody, &body); err != nil {
		return nil, err
	}
	if body.DataPackages == nil {
		return nil, httpapi.BadRequest("DataPackages", "required")
	}
	if len(body.DataPackages) == 0 || len(body.DataPackages) > maxPackageBatch {
		return nil, httpapi.BadRequest("DataPackages", "must hold 1 to %d items", maxPackageBatch)
	}
	return body.DataPackages, nil
}

// updatePackages answers PUT /DataPackageTable: every item's PrimaryKey
// (required) gets its Name, Keywords and Privacy (each optional), all in one
// transaction.
func (a *API) updatePackages(w http.ResponseWriter, r *http.Request) error {
	items, err := packageBatch(r)
	if err != nil {
		return err
	}
	ups := make([]store.DataPackageUpdate, 0, len(items))
	fields := map[int64]string{}
	for i, raw := range items {
		field := fmt.Sprintf("DataPackages[%d]", i)
		var it struct {
			PrimaryKey any     `json:"PrimaryKey"`
			Name       *string `json:"Name"`
			Keywords   any     `json:"Keywords"`
			Privacy    any     `json:"Privacy"`
		}
		if err := httpapi.DecodeValue(raw, &it, field); err != nil {
			return err
		}
		var up store.DataPackageUpdate
		if up.PrimaryKey, err = asKey(field+".PrimaryKey", it.PrimaryKey); err != nil {
			return err
		}
		if it.Name != nil {
			if err := checkText(field+".Name", *it.Name, true, logx.MaxFileName); err != nil {
				return err
			}
			name := logx.FileName(*it.Name, "") // a base name only, as uploads
			up.Name = &name
		}
		if it.Keywords != nil {
			kw, err := asKeywords(field+".Keywords", it.Keywords)
			if err != nil {
				return err
			}
			up.Keywords = &kw
		}
		if it.Privacy != nil {
			priv, err := asPrivacy(field+".Privacy", it.Privacy)
			if err != nil {
				return err
			}
			up.Private = &priv
		}
		if _, ok := fields[up.PrimaryKey]; !ok {
			fields[up.PrimaryKey] = field
		}
		// access.md "Roles": a user changes its own packages only; one it
		// cannot see is not there.
		if p, err := a.opts.Files.DataPackageByID(r.Context(), up.PrimaryKey); err == nil {
			if !access.From(r).CanRead(p.Groups, p.Owner) {
				return httpapi.Errorf(http.StatusNotFound, "%s.PrimaryKey: no data package %d", field, up.PrimaryKey)
			}
			if !access.From(r).CanChange(p.Owner) {
				return fmt.Errorf("%w: %s: another user's data package; only its owner or an administrator may change it", access.ErrForbidden, field)
			}
		} else if !errors.Is(err, store.ErrNotFound) {
			return httpapi.Internal(err, packagesError+"the packages could not be read")
		}
		ups = append(ups, up)
	}
	if err := a.opts.Files.UpdateDataPackages(r.Context(), ups); err != nil {
		if errors.Is(err, store.ErrNotFound) {
			err = httpapi.Errorf(http.StatusNotFound, "%s", notFoundKey(err, fields))
		}
		return httpapi.Internal(httpapi.InField("DataPackages", err), packagesError+"the packages could not be updated")
	}
	a.log.Info("data packages updated", "packages", len(ups))
	httpapi.WriteMessage(w, http.StatusOK, "success")
	return nil
}

// notFoundKey names the item whose PrimaryKey the store did not find.
func notFoundKey(err error, fields map[int64]string) string {
	for key, field := range fields {
		if strings.HasSuffix(err.Error(), fmt.Sprintf("PrimaryKey %d", key)) {
			return fmt.Sprintf("%s.PrimaryKey: no data package %d", field, key)
		}
	}
	return "DataPackages: " + fault.Detail(err)
}

// deletePackages answers DELETE /DataPackageTable: every item's hash must
// name a package, or nothing is deleted.
func (a *API) deletePackages(w http.ResponseWriter, r *http.Request) error {
	items, err := packageBatch(r)
	if err != nil {
		return err
	}
	hashes := make([]string, 0, len(items))
	for i, raw := range items {
		field := fmt.Sprintf("DataPackages[%d].hash", i)
		var it struct {
			Hash *string `json:"hash"`
		}
		if err := httpapi.DecodeValue(raw, &it, fmt.Sprintf("DataPackages[%d]", i)); err != nil {
			return err
		}
		h, err := httpapi.CheckHash(field, str(it.Hash))
		if err != nil {
			return err
		}
		p, err := a.opts.Files.DataPackageByHash(r.Context(), h)
		if errors.Is(err, store.ErrNotFound) || (err == nil && !access.From(r).CanRead(p.Groups, p.Owner)) {
			return httpapi.Errorf(http.StatusNotFound, "%s: no data package with hash %s", field, h)
		} else if err != nil {
			return httpapi.Internal(err, packagesError+"the packages could not be read")
		}
		if !access.From(r).CanChange(p.Owner) {
			return fmt.Errorf("%w: %s: another user's data package; only its owner or an administrator may delete it", access.ErrForbidden, field)
		}
		hashes = append(hashes, h)
	}
	if err := a.opts.Files.DeleteDataPackagesByHash(r.Context(), hashes); err != nil {
		return httpapi.Internal(httpapi.InField("DataPackages", err), packagesError+"the packages could not be deleted")
	}
	a.log.Info("data packages deleted", "packages", len(hashes))
	httpapi.WriteMessage(w, http.StatusOK, "success")
	return nil
}

// downloadPackage answers GET /DataPackageTable/{hash} with the content.
func (a *API) downloadPackage(w http.ResponseWriter, r *http.Request) error {
	h, err := httpapi.CheckHash("hash", r.PathValue("hash"))
	if err != nil {
		return err
	}
	p, err := a.opts.Files.DataPackageByHash(r.Context(), h)
	if errors.Is(err, store.ErrNotFound) || (err == nil && !access.From(r).CanRead(p.Groups, p.Owner)) {
		return notFound("hash: no data package with hash " + h)
	}
	if err != nil {
		return httpapi.Internal(err, packagesError+"the package could not be read")
	}
	a.log.Debug("data package downloaded", "name", logx.Clip(p.Name), "hash", p.Hash)
	return a.servePackage(w, r, p)
}
