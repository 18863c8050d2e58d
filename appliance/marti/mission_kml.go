package marti

// A mission as KML (api-marti.md "Mission KML"): a placemark for the
// latest stored event of each of the mission's CoT uids, as the official
// server's mission KML has it: markers as points, drawn lines and routes
// as line strings, closed shapes as polygons, each named by its callsign,
// coloured as the client drew it and stamped with its time. The document
// is written with encoding/xml, so no callsign or remark can add markup.

import (
	"bytes"
	"encoding/xml"
	"fmt"
	"net/http"
	"net/url"
	"runtime"
	"strconv"
	"strings"
	"sync"

	"outpost/appliance/httpapi"
	"outpost/appliance/logx"
	"outpost/appliance/store"
)

// maxKMLLinks bounds the vertices read from one shape.
const maxKMLLinks = 4096

type kmlDoc struct {
	XMLName  xml.Name `xml:"kml"`
	NS       string   `xml:"xmlns,attr"`
	Document struct {
		Name       string         `xml:"name"`
		Placemarks []kmlPlacemark `xml:"Placemark"`
	} `xml:"Document"`
}

type kmlPlacemark struct {
	ID          string    `xml:"id,attr"`
	Name        string    `xml:"name"`
	Description string    `xml:"description,omitempty"`
	When        string    `xml:"TimeStamp>when"`
	Style       *kmlStyle `xml:"Style,omitempty"`
	Point       *struct {
		Coordinates string `xml:"coordinates"`
	} `xml:"Point,omitempty"`
	LineString *struct {
		Coordinates string `xml:"coordinates"`
	} `xml:"LineString,omitempty"`
	Polygon *struct {
		Coordinates string `xml:"outerBoundaryIs>LinearRing>coordinates"`
	} `xml:"Polygon,omitempty"`
}

type kmlColor struct {
	Color string `xml:"color"`
}

type kmlStyle struct {
	Icon *kmlColor `xml:"IconStyle,omitempty"`
	Line *kmlColor `xml:"LineStyle,omitempty"`
	Poly *kmlColor `xml:"PolyStyle,omitempty"`
}

// kmlDetail is what a placemark takes from an event's detail.
type kmlDetail struct {
	Contact struct {
		Callsign string `xml:"callsign,attr"`
	} `xml:"contact"`
	Remarks string `xml:"remarks"`
	Color   struct {
		ARGB string `xml:"argb,attr"`
	} `xml:"color"`
	Stroke struct {
		Value string `xml:"value,attr"`
	} `xml:"strokeColor"`
	Fill struct {
		Value string `xml:"value,attr"`
	} `xml:"fillColor"`
	Links []struct {
		Point string `xml:"point,attr"`
	} `xml:"link"`
}

// kmlColour turns a TAK colour (a signed 32-bit ARGB integer) into KML's
// aabbggrr; "" when there is none or it is not a number.
func kmlColour(v string) string {
	n, err := strconv.ParseInt(strings.TrimSpace(v), 10, 64)
	if err != nil || n < -1<<31 || n > 1<<32-1 {
		return ""
	}
	c := uint32(n)
	return fmt.Sprintf("%02x%02x%02x%02x", c>>24, c&0xff, c>>8&0xff, c>>16&0xff)
}

// placemark is the placemark of one stored event.
func placemark(e store.StoredEvent) kmlPlacemark {
	var d kmlDetail
	if ev, err := e.Event(); err == nil && len(ev.Detail.XML) > 0 {
		if kmlWanted(ev.Detail.XML) {
			// A detail that does not parse gives a plain point.
			_ = xml.Unmarshal(append(append([]byte("<detail>"), ev.Detail.XML...), "</detail>"...), &d)
		} else if ev.Detail.Contact != nil {
			// A position report has none of them: the decoder's contact
			// is all (and reading the detail again was most of the time
			// of a large mission's export).
			d.Contact.Callsign = ev.Detail.Contact.Callsign
		}
	}
	p := kmlPlacemark{ID: e.UID, Name: d.Contact.Callsign, Description: d.Remarks, When: httpapi.FormatTime(e.Time)}
	if p.Name == "" {
		p.Name = e.Callsign
	}
	if p.Name == "" {
		p.Name = e.UID
	}
	var coords []string
	for i, l := range d.Links {
		if i == maxKMLLinks {
			break
		}
		if c, ok := kmlPoint(l.Point); ok {
			coords = append(coords, c)
		}
	}
	stroke, fill := kmlColour(d.Stroke.Value), kmlColour(d.Fill.Value)
	switch {
	case len(coords) >= 3 && (coords[0] == coords[len(coords)-1] || strings.HasPrefix(e.Type, "u-d-r")):
		if coords[0] != coords[len(coords)-1] {
			coords = append(coords, coords[0])
		}
		p.Polygon = &struct {
			Coordinates string `xml:"outerBoundaryIs>LinearRing>coordinates"`
		}{strings.Join(coords, " ")}
		p.Style = &kmlStyle{Line: colour(stroke), Poly: colour(fill)}
	case len(coords) >= 2:
		p.LineString = &struct {
			Coordinates string `xml:"coordinates"`
		}{strings.Join(coords, " ")}
		p.Style = &kmlStyle{Line: colour(stroke)}
	default:
		p.Point = &struct {
			Coordinates string `xml:"coordinates"`
		}{lonLat(e.Lat, e.Lon)}
		if c := kmlColour(d.Color.ARGB); c != "" {
			p.Style = &kmlStyle{Icon: colour(c)}
		}
	}
	if p.Style != nil && p.Style.Icon == nil && p.Style.Line == nil && p.Style.Poly == nil {
		p.Style = nil
	}
	return p
}

// placemarks builds the placemarks of events, in their order, on every
// processor: parsing each event's detail is most of a large mission's
// export (BENCHMARKS.md "Missions"), and each placemark is its event's
// alone.
func placemarks(events []store.StoredEvent) []kmlPlacemark {
	out := make([]kmlPlacemark, len(events))
	workers := min(runtime.GOMAXPROCS(0), len(events)/kmlChunk+1)
	var wg sync.WaitGroup
	for w := range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := w; i < len(events); i += workers {
				out[i] = placemark(events[i])
			}
		}()
	}
	wg.Wait()
	return out
}

// kmlChunk is how many events make another worker worth starting.
const kmlChunk = 256

// kmlWanted says whether a detail holds an element a placemark reads
// beyond the contact: remarks, a colour, shape colours or vertices.
func kmlWanted(detail []byte) bool {
	for _, tag := range kmlTags {
		if bytes.Contains(detail, tag) {
			return true
		}
	}
	return false
}

var kmlTags = [][]byte{[]byte("<remarks"), []byte("<color"), []byte("<strokeColor"), []byte("<fillColor"), []byte("<link")}

func colour(c string) *kmlColor {
	if c == "" {
		return nil
	}
	return &kmlColor{c}
}

func lonLat(lat, lon float64) string {
	return strconv.FormatFloat(lon, 'f', -1, 64) + "," + strconv.FormatFloat(lat, 'f', -1, 64)
}

// kmlPoint reads a link's point "lat,lon[,hae]".
func kmlPoint(v string) (string, bool) {
	parts := strings.Split(v, ",")
	if len(parts) < 2 {
		return "", false
	}
	lat, err1 := strconv.ParseFloat(strings.TrimSpace(parts[0]), 64)
	lon, err2 := strconv.ParseFloat(strings.TrimSpace(parts[1]), 64)
	if err1 != nil || err2 != nil || lat < -90 || lat > 90 || lon < -180 || lon > 180 {
		return "", false
	}
	return lonLat(lat, lon), true
}

// missionKML is the KML document of mission m.
func (h *Handler) missionKML(r *http.Request, m store.Mission) ([]byte, error) {
	events, err := h.opts.Missions.MissionCoT(r.Context(), m.Name)
	if err != nil {
		return nil, err
	}
	doc := kmlDoc{NS: "http://www.opengis.net/kml/2.2"}
	doc.Document.Name = m.Name
	doc.Document.Placemarks = placemarks(events)
	return encodeKML(doc)
}

// encodeKML is doc as an XML document.
func encodeKML(doc any) ([]byte, error) {
	var b bytes.Buffer
	b.WriteString(xml.Header)
	if err := xml.NewEncoder(&b).Encode(doc); err != nil {
		return nil, err
	}
	return b.Bytes(), nil
}

// writeKMLExport answers with KML document doc as an attachment named
// file: doc.kml in a KMZ when asKMZ, else the KML itself.
func writeKMLExport(w http.ResponseWriter, doc []byte, file string, asKMZ bool) error {
	if !asKMZ {
		w.Header().Set("Content-Disposition", `attachment; filename="`+file+`.kml"`)
		httpapi.WriteBody(w, http.StatusOK, "application/vnd.google-earth.kml+xml", doc)
		return nil
	}
	z, err := kmz(doc)
	if err != nil {
		return err
	}
	w.Header().Set("Content-Disposition", `attachment; filename="`+file+`.kmz"`)
	httpapi.WriteBody(w, http.StatusOK, "application/vnd.google-earth.kmz", z)
	return nil
}

// exportMissionKML answers GET /Marti/ExportMissionKML?missionName=: the
// mission's KML in a KMZ (doc.kml in a zip), or the KML itself with
// format=kml.
func (h *Handler) exportMissionKML(w http.ResponseWriter, r *http.Request) error {
	q := r.URL.Query()
	name, format := q.Get("missionName"), strings.ToLower(q.Get("format"))
	if err := httpapi.CheckText("missionName", name, true, store.MaxMissionName); err != nil {
		return err
	}
	if format != "" && format != "kmz" && format != "kml" {
		return httpapi.BadRequest("format", "must be kmz or kml, not %q", httpapi.ClipValue(format))
	}
	m, err := h.missionByName(r, name, readMission)
	if err != nil {
		return err
	}
	doc, err := h.missionKML(r, m)
	if err != nil {
		return err
	}
	h.log.Debug("mission KML exported", "mission", logx.Clip(m.Name), "bytes", len(doc), "format", format)
	return writeKMLExport(w, doc, url.PathEscape(m.Name), format != "kml")
}

// exportKML answers /Marti/ExportMissionKML: a request whose query names
// missionName is the mission's export, anything else the official server's
// history export (kml_export.go).
func (h *Handler) exportKML(w http.ResponseWriter, r *http.Request) error {
	if r.URL.Query().Has("missionName") {
		return h.exportMissionKML(w, r)
	}
	return h.exportHistoryKML(w, r)
}

// missionKMLRoute answers GET /Marti/api/missions/{mission_id}/kml, the
// official server's mission KML (download=true: as an attachment).
func (h *Handler) missionKMLRoute(w http.ResponseWriter, r *http.Request) error {
	m, err := h.openMission(r, "mission_id", readMission)
	if err != nil {
		return err
	}
	doc, err := h.missionKML(r, m)
	if err != nil {
		return err
	}
	if r.URL.Query().Get("download") == "true" {
		w.Header().Set("Content-Disposition", `attachment; filename="`+url.PathEscape(m.Name)+`.kml"`)
	}
	httpapi.WriteBody(w, http.StatusOK, "application/vnd.google-earth.kml+xml", doc)
	return nil
}
