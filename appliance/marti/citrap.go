package marti

// CI-TRAP reports (api-marti.md "CI-TRAP reports"), the official server's
// CITrapReportAPI:
//
//	POST /Marti/api/citrap?clientUid=    a report's mission package: stored, 201 {"id": "<id>"}
//	GET  /Marti/api/citrap               the reports the caller sees, JSON (or XML <reports>)
//	GET  /Marti/api/citrap/{id}          one report's mission package (or its XML)
//
// A report's mission package is kept as a data package tagged citrap,
// shared with the poster's IN groups; who sees and changes a report is who
// sees and changes that file (access.md "Groups", "Roles").

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"
	"time"

	"outpost/appliance/access"
	"outpost/appliance/httpapi"
	"outpost/appliance/logx"
	"outpost/appliance/store"
)

// Bounds of the CI-TRAP routes.
const (
	maxCitrapBytes  = 8 << 20 // a posted mission package, read whole (it is a ZIP)
	citrapParallel  = 2       // packages read at once; more wait with 429
	maxCitrapList   = 10_000  // maxReportCount
	maxCitrapFilter = 32      // items of a comma-separated filter
	maxCitrapID     = 250     // bytes of a report's id (its file is <id>.zip)
	citrapError     = "An error occurred accessing the CI-TRAP reports: "
)

// citrapItem is one report of the JSON listing; absent attributes are null,
// as the official server writes them, and status is left out.
type citrapItem struct {
	ID                  string  `json:"id"`
	Type                *string `json:"type"`
	Title               *string `json:"title"`
	UserCallsign        *string `json:"userCallsign"`
	UserDescription     *string `json:"userDescription"`
	DateTime            *string `json:"dateTime"`
	DateTimeDescription *string `json:"dateTimeDescription"`
	Location            *string `json:"location"`
	LocationDescription *string `json:"locationDescription"`
	EventScale          *string `json:"eventScale"`
	Importance          *string `json:"importance"`
	Status              *string `json:"status,omitempty"`
}

// orNull is nil for "".
func orNull(s string) *string {
	if s == "" {
		return nil
	}
	return &s
}

func newCitrapItem(r store.CitrapReport) citrapItem {
	return citrapItem{ID: r.ID, Type: orNull(r.Type), Title: orNull(r.Title), UserCallsign: orNull(r.UserCallsign),
		UserDescription: orNull(r.UserDescription), DateTime: orNull(r.DateTime), DateTimeDescription: orNull(r.DateTimeDescription),
		Location: orNull(r.Location), LocationDescription: orNull(r.LocationDescription), EventScale: orNull(r.EventScale),
		Importance: orNull(r.Importance), Status: orNull(r.Status)}
}

// readPackage reads the posted mission package, whole and bounded. A
// refusal is returned (ok false); a failure of the upload itself (the disk
// reserve, a broken body) has been answered by httpapi.Upload when ok is
// false and err nil.
func (h *Handler) readPackage(w http.ResponseWriter, r *http.Request) (pkg []byte, ok bool, err error) {
	limit := min(int64(maxCitrapBytes), h.opts.MaxUploadBytes)
	tooLarge := httpapi.Errorf(http.StatusRequestEntityTooLarge, "body: a report's mission package is at most %d bytes here; nothing was stored", limit)
	if r.ContentLength > limit {
		w.Header().Set("Connection", "close")
		return nil, false, tooLarge
	}
	up := httpapi.Upload{What: "CI-TRAP report", Name: "report", MaxBytes: limit, Space: h.opts.Space, Internal: citrapError + "the report could not be stored"}
	if !up.Begin(w, r) {
		return nil, false, nil
	}
	body, err := io.ReadAll(r.Body)
	var mbe *http.MaxBytesError
	if errors.As(err, &mbe) || int64(len(body)) > limit {
		w.Header().Set("Connection", "close")
		return nil, false, tooLarge
	}
	if err != nil {
		up.Failed(w, r, err)
		return nil, false, nil
	}
	if len(body) == 0 {
		return nil, false, httpapi.BadRequest("body", "empty: send the report's mission package (a ZIP file)")
	}
	return body, true, nil
}

// postReport answers POST /Marti/api/citrap?clientUid=: the body is a
// mission package holding the report's XML. 201 with {"id"} and the
// report's link as Location. A report of a known id is replaced, when the
// caller may change it (403 otherwise; 409 when the caller's groups do not
// see it).
func (h *Handler) postReport(w http.ResponseWriter, r *http.Request) error {
	creator := r.URL.Query().Get("clientUid")
	if err := httpapi.CheckText("clientUid", creator, true, 255); err != nil {
		return err
	}
	if err := h.actFor(r, "clientUid", creator); err != nil {
		return err
	}
	select {
	case h.citrapSlots <- struct{}{}:
		defer func() { <-h.citrapSlots }()
	default:
		return httpapi.TooManyRequests(time.Second, "other CI-TRAP reports are being read; try again in a second")
	}
	pkg, ok, err := h.readPackage(w, r)
	if !ok {
		return err // nil: the upload answered its failure
	}
	doc, err := reportXML(pkg)
	var rep store.CitrapReport
	if err == nil {
		rep, err = parseReport(doc, h.opts.Now())
	}
	if err == nil {
		err = h.mayReplace(r, rep.ID)
	}
	if err != nil {
		return httpapi.Internal(err, citrapError+"the report could not be stored")
	}
	submitter, _ := h.identity(r)
	if submitter == "" {
		submitter = creator
	}
	rep, err = h.opts.Files.PutCitrapReport(r.Context(), store.DataPackageInput{
		Name: rep.ID + ".zip", SubmissionUser: submitter, CreatorUID: creator, Keywords: []string{store.CitrapKeyword},
		MIMEType: "application/zip", Groups: access.From(r).In, Owner: owner(r),
	}, bytes.NewReader(pkg), rep)
	if err != nil {
		return httpapi.Internal(err, citrapError+"the report could not be stored")
	}
	h.log.Info("CI-TRAP report stored", "id", logx.Clip(rep.ID), "title", logx.Clip(rep.Title), "submitter", logx.Clip(submitter),
		"hash", rep.Hash, "size", len(pkg))
	w.Header().Set("Location", h.linkBase(r)+"/Marti/api/citrap/"+url.PathEscape(rep.ID))
	httpapi.WriteJSON(w, http.StatusCreated, map[string]string{"id": rep.ID})
	return nil
}

// mayReplace refuses to post a report under the id of one the caller may
// not replace.
func (h *Handler) mayReplace(r *http.Request, id string) error {
	old, err := h.opts.Files.CitrapReport(r.Context(), id)
	switch {
	case errors.Is(err, store.ErrNotFound):
		return nil
	case err != nil:
		return err
	case !access.From(r).CanRead(old.Groups, old.Owner):
		return fmt.Errorf("%w: id: another report has the id %q", store.ErrConflict, httpapi.ClipValue(id))
	case !access.From(r).CanChange(old.Owner):
		return fmt.Errorf("%w: another user's report; only its owner or an administrator may replace it", access.ErrForbidden)
	}
	return nil
}

// listFilter reads a comma-separated filter of at most maxCitrapFilter
// items.
func listFilter(r *http.Request, name string) ([]string, error) {
	v := r.URL.Query().Get(name)
	if err := httpapi.CheckText(name, v, false, 4096); err != nil || v == "" {
		return nil, err
	}
	var out []string
	for _, item := range strings.Split(v, ",") {
		if item = strings.TrimSpace(item); item != "" {
			out = append(out, item)
		}
	}
	if len(out) > maxCitrapFilter {
		return nil, httpapi.BadRequest(name, "at most %d comma-separated items", maxCitrapFilter)
	}
	return out, nil
}

// citrapQuery reads the listing's filters: keywords, type and callsign
// (comma-separated), startTime and endTime, bbox, maxReportCount; clientUid
// and subscribe are checked and not used (there are no report missions to
// subscribe to).
func citrapQuery(r *http.Request) (store.CitrapQuery, error) {
	p := access.From(r)
	q := store.CitrapQuery{Sees: p.Reads(), Owner: p.Owner()}
	var err error
	for _, f := range []struct {
		name string
		dst  *[]string
	}{{"keywords", &q.Keywords}, {"type", &q.Types}, {"callsign", &q.Callsigns}} {
		if *f.dst, err = listFilter(r, f.name); err != nil {
			return q, err
		}
	}
	if q.From, err = timeParam(r, "startTime"); err != nil {
		return q, err
	}
	if q.To, err = timeParam(r, "endTime"); err != nil {
		return q, err
	}
	qv := r.URL.Query()
	if v := qv.Get("bbox"); v != "" {
		if q.BBox, err = parseBBox(v); err != nil {
			return q, httpapi.BadRequest("bbox", "%s, not %q", err.Error(), httpapi.ClipValue(v))
		}
		q.HasBBox = true
	}
	if q.Limit, err = intParam(r, "maxReportCount", 1, maxCitrapList); err != nil {
		return q, err
	}
	q.Limit = max(q.Limit, 0) // -1: all
	for _, name := range []string{"clientUid", "subscribe"} {
		if err := httpapi.CheckText(name, qv.Get(name), false, 255); err != nil {
			return q, err
		}
	}
	return q, nil
}

// wantsXML reports whether the Accept header asks for XML and not JSON.
func wantsXML(r *http.Request) bool {
	a := strings.ToLower(r.Header.Get("Accept"))
	return strings.Contains(a, "application/xml") && !strings.Contains(a, "json") && !strings.Contains(a, "*/*")
}

// listReports answers GET /Marti/api/citrap: a JSON array of the reports
// the caller sees (newest dateTime first), or <reports> of their XML when
// the client accepts XML only; written as the reports are read.
func (h *Handler) listReports(w http.ResponseWriter, r *http.Request) error {
	q, err := citrapQuery(r)
	if err != nil {
		return err
	}
	var l *httpapi.Listing
	if q.WithXML = wantsXML(r); q.WithXML {
		l = httpapi.NewListing(w, r, "application/xml; charset=utf-8", `<?xml version="1.0" encoding="UTF-8"?>`+"\n<reports>", "</reports>\n")
	} else {
		l = httpapi.NewListing(w, r, "application/json", "[", "]\n")
	}
	err = h.opts.Files.EachCitrapReport(r.Context(), q, func(rep store.CitrapReport) error {
		if q.WithXML {
			return l.Raw([]byte(rep.XML))
		}
		return l.Item(newCitrapItem(rep))
	})
	l.Finish(err, citrapError+"the reports could not be listed")
	return nil
}

// getReport answers GET /Marti/api/citrap/{id}: the report's mission
// package as {id}.zip, or its XML when the client accepts XML only. 404
// for a report the caller's groups do not see.
func (h *Handler) getReport(w http.ResponseWriter, r *http.Request) error {
	id := r.PathValue("id")
	err := httpapi.CheckText("id", id, true, maxCitrapID)
	if err == nil {
		err = httpapi.CheckText("clientUid", r.URL.Query().Get("clientUid"), false, 255)
	}
	if err != nil {
		return err
	}
	rep, err := h.opts.Files.CitrapReport(r.Context(), id)
	if errors.Is(err, store.ErrNotFound) || (err == nil && !access.From(r).CanRead(rep.Groups, rep.Owner)) {
		return httpapi.Errorf(http.StatusNotFound, "id: no CI-TRAP report %q", httpapi.ClipValue(id))
	}
	if err != nil {
		return httpapi.Internal(err, citrapError+"the report could not be read")
	}
	if wantsXML(r) {
		w.Header().Set("Content-Disposition", httpapi.Attachment(rep.ID+".xml"))
		httpapi.WriteBody(w, http.StatusOK, "application/xml; charset=utf-8", []byte(`<?xml version="1.0" encoding="UTF-8"?>`+"\n"+rep.XML))
		return nil
	}
	p, err := h.readablePackage(r, rep.Hash)
	if err != nil {
		return lookupError(err)
	}
	return h.serve(w, r, p, 0)
}
