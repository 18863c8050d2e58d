package marti

// Reading a CI-TRAP report out of the mission package a client posts
// (api-marti.md "CI-TRAP reports"): the first XML file of the ZIP holding
// a <report> element, read with the bounded ExCheck reader (no DOCTYPE, no
// entities, size and depth caps), and the report's attributes as the
// official server's schema has them (each at most 256 characters).

import (
	"archive/zip"
	"bytes"
	"errors"
	"io"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/google/uuid"

	"outpost/appliance/excheck"
	"outpost/appliance/httpapi"
	"outpost/appliance/store"
)

// Bounds of a posted report.
const (
	maxCitrapXML      = 256 << 10 // the report's XML
	maxCitrapEntries  = 1024      // ZIP entries looked at
	maxCitrapXMLFiles = 64        // XML files read while looking for the report
	maxCitrapAttr     = 256       // characters of an attribute (the schema's stringType)
)

var utf8BOM = []byte{0xEF, 0xBB, 0xBF}

// reportXML finds the report in the mission package pkg: the first XML
// file that holds "<report". Refusals are 400s naming the body.
func reportXML(pkg []byte) ([]byte, error) {
	zr, err := zip.NewReader(bytes.NewReader(pkg), int64(len(pkg)))
	if err != nil {
		return nil, httpapi.BadRequest("body", "not a mission package (a ZIP file): %s", httpapi.ClipValue(err.Error()))
	}
	read := 0
	for i, f := range zr.File {
		if i == maxCitrapEntries || read == maxCitrapXMLFiles {
			break
		}
		if !strings.HasSuffix(strings.ToLower(f.Name), ".xml") || f.UncompressedSize64 > maxCitrapXML {
			continue
		}
		read++
		rc, err := f.Open()
		if err != nil {
			continue
		}
		b, err := io.ReadAll(io.LimitReader(rc, maxCitrapXML+1))
		rc.Close()
		if err != nil || len(b) > maxCitrapXML {
			continue
		}
		b = bytes.TrimPrefix(b, utf8BOM)
		if bytes.Contains(b, []byte("<report")) {
			return b, nil
		}
	}
	return nil, httpapi.BadRequest("body", "the mission package holds no report (an XML file of at most %d bytes with a <report> element)", maxCitrapXML)
}

// reportAttrs are the attributes of <report> kept as fields.
var reportAttrs = map[string]func(r *store.CitrapReport) *string{
	"id":                  func(r *store.CitrapReport) *string { return &r.ID },
	"type":                func(r *store.CitrapReport) *string { return &r.Type },
	"title":               func(r *store.CitrapReport) *string { return &r.Title },
	"userCallsign":        func(r *store.CitrapReport) *string { return &r.UserCallsign },
	"userDescription":     func(r *store.CitrapReport) *string { return &r.UserDescription },
	"dateTime":            func(r *store.CitrapReport) *string { return &r.DateTime },
	"dateTimeDescription": func(r *store.CitrapReport) *string { return &r.DateTimeDescription },
	"location":            func(r *store.CitrapReport) *string { return &r.Location },
	"locationDescription": func(r *store.CitrapReport) *string { return &r.LocationDescription },
	"eventScale":          func(r *store.CitrapReport) *string { return &r.EventScale },
	"importance":          func(r *store.CitrapReport) *string { return &r.Importance },
	"status":              func(r *store.CitrapReport) *string { return &r.Status },
}

// parseReport reads the report document b. A report without an id gets a
// new one, written into the XML kept.
func parseReport(b []byte, now time.Time) (store.CitrapReport, error) {
	root, err := excheck.Parse(b)
	if err != nil {
		return store.CitrapReport{}, httpapi.BadRequest("body", "the report: %s",
			strings.TrimPrefix(err.Error(), excheck.ErrInvalid.Error()+": "))
	}
	if local(root.Name) != "report" {
		return store.CitrapReport{}, httpapi.BadRequest("body", "the report's root element is <%s>, not <report>", httpapi.ClipValue(root.Name))
	}
	rep := store.CitrapReport{Created: now}
	for _, a := range root.Attrs {
		field, ok := reportAttrs[a.Name]
		if !ok {
			continue
		}
		if utf8.RuneCountInString(a.Value) > maxCitrapAttr {
			return rep, httpapi.BadRequest(a.Name, "longer than %d characters", maxCitrapAttr)
		}
		*field(&rep) = a.Value
	}
	if rep.ID == "" {
		rep.ID = uuid.NewString()
		root.Attrs = append(root.Attrs, excheck.Attr{Name: "id", Value: rep.ID})
	}
	if err := httpapi.CheckText("id", rep.ID, true, maxCitrapID); err != nil {
		return rep, err
	}
	if rep.DateTime != "" {
		if rep.When, err = time.Parse(time.RFC3339Nano, rep.DateTime); err != nil {
			return rep, httpapi.BadRequest("dateTime", "must be an ISO 8601 time (2026-11-22T10:00:00.000Z), not %q", httpapi.ClipValue(rep.DateTime))
		}
	}
	rep.Extent, rep.HasExtent = wktExtent(rep.Location)
	rep.XML = string(excheck.Append(nil, root))
	return rep, nil
}

// local is an element name without its prefix.
func local(name string) string {
	_, after, found := strings.Cut(name, ":")
	if found {
		return after
	}
	return name
}

// wktExtent is the box (min lon, min lat, max lon, max lat) of the
// coordinates of a WKT geometry ("POINT (lon lat)", "POLYGON ((...))"):
// each comma-separated group of numbers is one position, its first two
// numbers longitude and latitude. ok is false when there are none.
func wktExtent(wkt string) (box [4]float64, ok bool) {
	clean := strings.Map(func(r rune) rune {
		if (r >= '0' && r <= '9') || r == '.' || r == '-' || r == '+' || r == ',' || r == 'e' || r == 'E' {
			return r
		}
		return ' '
	}, strings.TrimLeft(strings.ToUpper(wkt), "ABCDEFGHIJKLMNOPQRSTUVWXYZ _"))
	for _, pos := range strings.Split(clean, ",") {
		f := strings.Fields(pos)
		if len(f) < 2 {
			continue
		}
		lon, err1 := strconv.ParseFloat(f[0], 64)
		lat, err2 := strconv.ParseFloat(f[1], 64)
		if err1 != nil || err2 != nil || lon < -180 || lon > 180 || lat < -90 || lat > 90 {
			continue
		}
		if !ok {
			box, ok = [4]float64{lon, lat, lon, lat}, true
			continue
		}
		box = [4]float64{min(box[0], lon), min(box[1], lat), max(box[2], lon), max(box[3], lat)}
	}
	return box, ok
}

// errNoBBox is a bbox= that is not four numbers.
var errNoBBox = errors.New("must be four numbers: west,south,east,north")

// parseBBox reads bbox= (lon,lat,lon,lat of two corners, the official
// server's order) as a box.
func parseBBox(v string) ([4]float64, error) {
	f := strings.Fields(strings.ReplaceAll(v, ",", " "))
	if len(f) != 4 {
		return [4]float64{}, errNoBBox
	}
	var n [4]float64
	for i, s := range f {
		x, err := strconv.ParseFloat(s, 64)
		if err != nil {
			return n, errNoBBox
		}
		n[i] = x
	}
	return [4]float64{min(n[0], n[2]), min(n[1], n[3]), max(n[0], n[2]), max(n[1], n[3])}, nil
}
