package marti

// The official server's history export (its MissionKMLServlet at
// /Marti/ExportMissionKML, node-tak's Export class; api-marti.md "History
// KML export"): the stored events of a time window, one folder per uid with
// its track (a line through its positions, oldest first) and its latest
// position, as KML or KMZ. Asked by POST (a form, as node-tak sends it) or
// by GET without missionName (with missionName, GET is the mission export:
// mission_kml.go).
//
// Parameters (the servlet's): startTime, endTime (ISO 8601), interval
// (hours: with neither time, the hours before now; with one, the hours
// after startTime or before endTime), uid (one uid's track), groups (the
// caller's groups to draw from, repeated; none: all it reads), format (kml,
// the default, or kmz). multiTrackThreshold, extendedData and
// optimizeExport are read and checked, and change nothing here.

import (
	"archive/zip"
	"bytes"
	"encoding/xml"
	"fmt"
	"io"
	"math"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"time"

	"outpost/appliance/access"
	"outpost/appliance/httpapi"
	"outpost/appliance/logx"
	"outpost/appliance/store"
)

const (
	// maxExportTracks bounds the uids one export draws (the latest ones
	// of the window).
	maxExportTracks = 1000
	// maxExportPoints bounds the positions of all tracks together.
	maxExportPoints = 20000
	// maxExportForm bounds a POSTed form.
	maxExportForm = 64 << 10
	// maxExportHours bounds interval (ten years).
	maxExportHours = 24 * 366 * 10
)

type exportFolder struct {
	Name       string         `xml:"name"`
	Placemarks []kmlPlacemark `xml:"Placemark"`
}

type exportDoc struct {
	XMLName  xml.Name `xml:"kml"`
	NS       string   `xml:"xmlns,attr"`
	Document struct {
		Name    string         `xml:"name"`
		Folders []exportFolder `xml:"Folder"`
	} `xml:"Document"`
}

// exportQuery is a checked export request.
type exportQuery struct {
	from, to time.Time
	uid      string
	groups   uint64
	kmz      bool
}

// readExportQuery reads the parameters from the query and, for a POST, the
// form body.
func (h *Handler) readExportQuery(r *http.Request) (exportQuery, error) {
	var q exportQuery
	if r.Method == http.MethodPost {
		r.Body = http.MaxBytesReader(nil, r.Body, maxExportForm)
		if err := r.ParseForm(); err != nil {
			return q, httpapi.BadRequest("", "the form could not be read (at most %d bytes of application/x-www-form-urlencoded)", maxExportForm)
		}
	} else {
		r.Form = r.URL.Query()
	}
	get := func(k string) string { return strings.TrimSpace(r.Form.Get(k)) }
	for _, k := range []string{"startTime", "endTime", "interval", "uid", "format", "multiTrackThreshold", "extendedData", "optimizeExport"} {
		if err := httpapi.CheckText(k, get(k), false, 255); err != nil {
			return q, err
		}
	}
	switch f := strings.ToLower(get("format")); f {
	case "", "kml":
	case "kmz":
		q.kmz = true
	default:
		return q, httpapi.BadRequest("format", "must be kml or kmz, not %q", httpapi.ClipValue(f))
	}
	if v := get("multiTrackThreshold"); v != "" {
		if _, err := strconv.Atoi(v); err != nil {
			return q, httpapi.BadRequest("multiTrackThreshold", "must be a whole number, not %q", httpapi.ClipValue(v))
		}
	}
	for _, k := range []string{"extendedData", "optimizeExport"} {
		if v := get(k); v != "" {
			if _, err := strconv.ParseBool(v); err != nil {
				return q, httpapi.BadRequest(k, "must be true or false, not %q", httpapi.ClipValue(v))
			}
		}
	}
	var err error
	if q.from, q.to, err = exportWindow(get("startTime"), get("endTime"), get("interval"), h.opts.Now()); err != nil {
		return q, err
	}
	q.uid = get("uid")
	q.groups, err = h.exportGroups(r, r.Form["groups"])
	return q, err
}

// exportWindow decides the window as the official servlet does.
func exportWindow(start, end, interval string, now time.Time) (from, to time.Time, err error) {
	parse := func(name, v string) (time.Time, error) {
		if v == "" {
			return time.Time{}, nil
		}
		t, err := parseTime(v)
		if err != nil {
			return t, httpapi.BadRequest(name, "must be an ISO 8601 time (2026-11-22T10:00:00.000Z), not %q", httpapi.ClipValue(v))
		}
		return t, nil
	}
	if from, err = parse("startTime", start); err != nil {
		return
	}
	if to, err = parse("endTime", end); err != nil {
		return
	}
	var span time.Duration
	if interval != "" {
		hours, perr := strconv.ParseFloat(interval, 64)
		if perr != nil || math.IsNaN(hours) || hours <= 0 || hours > maxExportHours {
			return from, to, httpapi.BadRequest("interval", "must be a number of hours above 0 and at most %d, not %q", maxExportHours, httpapi.ClipValue(interval))
		}
		span = time.Duration(hours * float64(time.Hour))
	}
	switch {
	case !from.IsZero() && !to.IsZero() && span > 0:
		return from, to, httpapi.BadRequest("interval", "give at most two of startTime, endTime and interval")
	case from.IsZero() && to.IsZero() && span == 0:
		return from, to, httpapi.BadRequest("missionName or startTime", "required: missionName (a mission's export) or a window (startTime and endTime, or an interval in hours with one of them or alone)")
	case from.IsZero() && to.IsZero():
		to = now
		from = to.Add(-span)
	case from.IsZero() && span > 0:
		from = to.Add(-span)
	case from.IsZero():
		return from, to, httpapi.BadRequest("startTime", "required with endTime (or give an interval)")
	case to.IsZero() && span > 0:
		to = from.Add(span)
	case to.IsZero():
		to = now
	}
	if to.Before(from) {
		return from, to, httpapi.BadRequest("endTime", "must not be before startTime")
	}
	return from, to, nil
}

// exportGroups is the mask of the groups named (repeated or comma-
// separated) among those the caller reads: 400 for a group that does not
// exist, 403 for one the caller does not read; none named: all it reads.
func (h *Handler) exportGroups(r *http.Request, named []string) (uint64, error) {
	p := access.From(r)
	var names []string
	for _, v := range named {
		names = append(names, splitList(v)...)
	}
	if len(names) == 0 {
		return p.Reads(), nil
	}
	if len(names) > store.MaxGroups {
		return 0, httpapi.BadRequest("groups", "at most %d groups", store.MaxGroups)
	}
	groups, err := h.groupList(r.Context())
	if err != nil {
		return 0, err
	}
	var mask uint64
	for _, n := range names {
		m := access.MaskOf(groups, []string{n})
		if m == 0 || !slices.ContainsFunc(groups, func(g store.Group) bool { return g.Name == n }) {
			return 0, httpapi.BadRequest("groups", "no group %q", httpapi.ClipValue(n))
		}
		if p.Reads() != store.AllGroups && m&p.Reads() != m {
			return 0, fmt.Errorf("%w: groups: you do not read group %q", access.ErrForbidden, logx.Cut(n, 64))
		}
		mask |= m
	}
	return mask, nil
}

// exportHistoryKML answers POST /Marti/ExportMissionKML and its GET without
// missionName.
func (h *Handler) exportHistoryKML(w http.ResponseWriter, r *http.Request) error {
	q, err := h.readExportQuery(r)
	if err != nil {
		return err
	}
	ctx := r.Context()
	ev := h.opts.Events
	var uids []string
	if q.uid != "" {
		uids = []string{q.uid}
	} else {
		latest, _, err := ev.LatestInWindow(ctx, q.from, q.to, nil, q.groups, maxExportTracks, 0)
		if err != nil {
			return err
		}
		for _, e := range latest {
			uids = append(uids, e.UID)
		}
		slices.Sort(uids)
	}
	perTrack := maxExportPoints
	if len(uids) > 0 {
		perTrack = max(1, maxExportPoints/len(uids))
	}
	var doc exportDoc
	doc.NS = "http://www.opengis.net/kml/2.2"
	doc.Document.Name = "Outpost export " + httpapi.FormatTime(q.from) + " to " + httpapi.FormatTime(q.to)
	for _, uid := range uids {
		events, _, err := ev.EventsOfUID(ctx, uid, q.from, q.to, q.groups, store.Page{Limit: perTrack})
		if err != nil {
			return err
		}
		if len(events) == 0 {
			continue
		}
		doc.Document.Folders = append(doc.Document.Folders, exportTrack(uid, events))
	}
	b, err := encodeKML(doc)
	if err != nil {
		return err
	}
	file := q.from.UTC().Format("2006-01-02T15:04:05.000Z")
	h.log.Debug("history KML exported", "tracks", len(doc.Document.Folders), "from", file, "uid", logx.Clip(q.uid))
	return writeKMLExport(w, b, file, q.kmz)
}

// exportTrack is one uid's folder: its latest position (the mission
// export's placemark of that event) and, with two or more positions, its
// track through them, oldest first, spanning their times. events is newest
// first.
func exportTrack(uid string, events []store.StoredEvent) exportFolder {
	last := placemark(events[0])
	f := exportFolder{Name: last.Name, Placemarks: []kmlPlacemark{last}}
	if len(events) < 2 {
		return f
	}
	coords := make([]string, 0, len(events))
	for i := len(events) - 1; i >= 0; i-- {
		coords = append(coords, lonLat(events[i].Lat, events[i].Lon))
	}
	track := kmlPlacemark{ID: uid + "-track", Name: last.Name + " track", When: last.When, LineString: &struct {
		Coordinates string `xml:"coordinates"`
	}{strings.Join(coords, " ")}}
	f.Placemarks = append(f.Placemarks, track)
	return f
}

// kmz zips a KML document as doc.kml.
func kmz(doc []byte) ([]byte, error) {
	var z bytes.Buffer
	zw := zip.NewWriter(&z)
	f, err := zw.Create("doc.kml")
	if err == nil {
		_, err = io.Copy(f, bytes.NewReader(doc))
	}
	if err == nil {
		err = zw.Close()
	}
	return z.Bytes(), err
}
