package marti

// The official server's file manager routes (api-marti.md "Files"), what
// WebTAK, CloudTAK and node-tak call to list what is stored:
//
//	GET /Marti/api/files/metadata         the envelope "Files" of one item per file
//	GET /Marti/api/files/metadata/count   the envelope "Count" of their number
//	GET /files/api/config                 {"uploadSizeLimit": <MiB>}
//
// A caller sees the files its groups see and its own (access.md "Groups"),
// private ones included: privacy hides a file from the search only.

import (
	"net/http"
	"strconv"
	"strings"

	"outpost/appliance/access"
	"outpost/appliance/httpapi"
	"outpost/appliance/store"
)

// maxFilesPage bounds limit= of the listing.
const maxFilesPage = 10_000

// fileItem is one file of /Marti/api/files/metadata, every value a string
// as the official server writes them.
type fileItem struct {
	Name       string `json:"Name"`
	User       string `json:"User"`    // the submitter
	Creator    string `json:"Creator"` // the creator's callsign, or its uid
	Size       string `json:"Size"`    // "12kB"
	Time       string `json:"Time"`
	MimeType   string `json:"MimeType"`
	Keywords   string `json:"Keywords"` // comma-separated
	Expiration string `json:"Expiration"`
	Hash       string `json:"Hash"`
	Groups     string `json:"Groups"` // those of the file's groups the caller sees, comma-separated
	Tool       string `json:"Tool"`
}

// sizeText is a size as the official file manager shows it: whole bytes,
// kB, MB or GB (units of 1024, rounded down).
func sizeText(n int64) string {
	switch {
	case n < 1<<10:
		return strconv.FormatInt(n, 10) + "B"
	case n < 1<<20:
		return strconv.FormatInt(n>>10, 10) + "kB"
	case n < 1<<30:
		return strconv.FormatInt(n>>20, 10) + "MB"
	}
	return strconv.FormatInt(n>>30, 10) + "GB"
}

// fileFilter reads what both file manager routes filter by: mission= (a
// mission the caller may read: 404 or 403 otherwise) and missionPackage=.
func (h *Handler) fileFilter(r *http.Request) (store.FileQuery, error) {
	p := access.From(r)
	fq := store.FileQuery{Sees: p.Reads(), Owner: p.Owner()}
	qv := r.URL.Query()
	var err error
	if fq.MissionPackages, err = boolParam(r, "missionPackage", false); err != nil {
		return fq, err
	}
	if name := qv.Get("mission"); name != "" {
		if err := httpapi.CheckText("mission", name, true, store.MaxMissionName); err != nil {
			return fq, err
		}
		m, err := h.missionByName(r, name, readMission)
		if err != nil {
			return fq, httpapi.InField("mission", err)
		}
		fq.Mission = m.Name
	}
	return fq, nil
}

// fileSorts are the official sort= values and the store's orders.
var fileSorts = map[string]string{"": "", "name": store.FileSortName, "updateTime": store.FileSortTime, "size": store.FileSortSize}

// fileQuery reads the listing's parameters: the filter, name=, sort=
// (name, updateTime, size), ascending= (default true), and the page: limit=
// files after skipping page= pages of them (both -1 or absent: every file).
func (h *Handler) fileQuery(r *http.Request) (store.FileQuery, error) {
	fq, err := h.fileFilter(r)
	if err != nil {
		return fq, err
	}
	qv := r.URL.Query()
	fq.Name = qv.Get("name")
	if err := httpapi.CheckText("name", fq.Name, false, 255); err != nil {
		return fq, err
	}
	sort, ok := fileSorts[qv.Get("sort")]
	if !ok {
		return fq, httpapi.BadRequest("sort", "must be name, updateTime or size, not %q", httpapi.ClipValue(qv.Get("sort")))
	}
	fq.Sort = sort
	if fq.Ascending, err = boolParam(r, "ascending", true); err != nil {
		return fq, err
	}
	page, err := intParam(r, "page", 0, 1<<20)
	if err != nil {
		return fq, err
	}
	limit, err := intParam(r, "limit", 1, maxFilesPage)
	if err != nil {
		return fq, err
	}
	if page != -1 && limit != -1 {
		fq.Limit, fq.Offset = limit, page*limit
	}
	return fq, nil
}

// filesMetadata answers GET /Marti/api/files/metadata, newest first unless
// sorted, written as the files are read.
func (h *Handler) filesMetadata(w http.ResponseWriter, r *http.Request) error {
	const failed = syncError + "the files could not be listed"
	fq, err := h.fileQuery(r)
	if err != nil {
		return httpapi.Internal(err, failed)
	}
	groups, err := h.groupList(r.Context())
	if err != nil {
		return httpapi.Internal(err, failed)
	}
	callsigns := map[string]string{}
	if h.opts.Broker != nil {
		for _, c := range h.opts.Broker.Clients() {
			callsigns[c.UID] = c.Callsign
		}
	}
	head, tail := h.envelopeListing("Files")
	l := httpapi.NewListing(w, r, "application/json", head, tail)
	err = h.opts.Files.EachFile(r.Context(), fq, func(p store.DataPackage) error {
		creator := p.CreatorUID
		if cs := callsigns[creator]; cs != "" {
			creator = cs
		}
		return l.Item(fileItem{Name: p.Name, User: p.SubmissionUser, Creator: creator, Size: sizeText(p.Size),
			Time: httpapi.FormatTime(p.SubmittedAt), MimeType: p.MIMEType, Keywords: store.JoinKeywords(p.Keywords),
			Expiration: "none", Hash: p.Hash, Groups: strings.Join(access.NamesOf(groups, p.Groups&fq.Sees), ","), Tool: p.Tool})
	})
	l.Finish(err, failed)
	return nil
}

// filesCount answers GET /Marti/api/files/metadata/count: how many files
// the caller would list (mission= and missionPackage= apply).
func (h *Handler) filesCount(w http.ResponseWriter, r *http.Request) error {
	const failed = syncError + "the files could not be counted"
	fq, err := h.fileFilter(r)
	if err != nil {
		return httpapi.Internal(err, failed)
	}
	n, err := h.opts.Files.CountFiles(r.Context(), fq)
	if err != nil {
		return httpapi.Internal(err, failed)
	}
	httpapi.WriteJSON(w, http.StatusOK, h.envelope("Count", n))
	return nil
}

// filesConfig answers GET /files/api/config: the largest upload, in MiB
// (maxUploadBytes, rounded down), as node-tak's Files.config reads it.
func (h *Handler) filesConfig(w http.ResponseWriter, r *http.Request) error {
	httpapi.WriteJSON(w, http.StatusOK, map[string]int64{"uploadSizeLimit": h.opts.MaxUploadBytes >> 20})
	return nil
}
