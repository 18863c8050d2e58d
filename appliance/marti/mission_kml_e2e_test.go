package marti_test

import (
	"archive/zip"
	"bytes"
	"encoding/xml"
	"io"
	"strings"
	"testing"
	"time"

	"outpost/appliance/cot"
	"outpost/appliance/netx"
	"outpost/internal/testkit"
)

type kmlIn struct {
	Document struct {
		Name       string `xml:"name"`
		Placemarks []struct {
			ID          string `xml:"id,attr"`
			Name        string `xml:"name"`
			Description string `xml:"description"`
			When        string `xml:"TimeStamp>when"`
			IconColor   string `xml:"Style>IconStyle>color"`
			LineColor   string `xml:"Style>LineStyle>color"`
			PolyColor   string `xml:"Style>PolyStyle>color"`
			Point       string `xml:"Point>coordinates"`
			Line        string `xml:"LineString>coordinates"`
			Polygon     string `xml:"Polygon>outerBoundaryIs>LinearRing>coordinates"`
		} `xml:"Placemark"`
	} `xml:"Document"`
}

func drawn(uid, typ, detail string, lat, lon float64) *cot.Event {
	now := time.Now().UTC()
	return &cot.Event{Version: "2.0", UID: uid, Type: typ, How: "h-e", Time: now, Start: now, Stale: now.Add(time.Hour),
		Point: cot.Point{Lat: lat, Lon: lon, Hae: cot.Unknown, Ce: cot.Unknown, Le: cot.Unknown}, Detail: cot.Detail{XML: []byte(detail)}}
}

// TestMissionKML: a mission's marker, drawn polygon and route come back as
// placemarks of a KMZ (and of the KML routes) on both ports, with their
// callsigns, colours and times; a callsign and remarks full of markup stay
// text. Errors: no missionName 400, a bad format 400, an unknown mission
// 404, a mission another group's 404.
func TestMissionKML(t *testing.T) {
	e := start(t, nil)
	c := e.DialTCP(t)
	c.Send(saOf("kml-client"))
	testkit.WaitFor(t, "the client identified", func() bool { return len(e.Broker().Clients()) == 1 })
	c.Send(drawn("kml-m1", "a-h-G", `<contact callsign="Evil &lt;/name&gt;&amp;&quot;"/><remarks>&lt;/description&gt;&lt;script/&gt;</remarks><color argb="-65536"/>`, 59.1, 18.1))
	c.Send(drawn("kml-p1", "u-d-f", `<contact callsign="Area"/><link point="59.0,18.0"/><link point="59.0,18.2"/><link point="59.2,18.2"/><link point="59.0,18.0"/>`+
		`<strokeColor value="-16776961"/><fillColor value="1694433280"/>`, 59.1, 18.1))
	c.Send(drawn("kml-r1", "b-m-r", `<contact callsign="Route 1"/><link point="59.3,18.3"/><link point="59.4,18.4"/><link point="59.5,18.5"/>`, 59.3, 18.3))
	const m = "/Marti/api/missions/kmlm"
	e.call(t, netx.ListenerHTTP, "PUT", m+"?creatorUid=K-1", nil, 201, nil)
	e.call(t, netx.ListenerHTTP, "PUT", m+"/contents?creatorUid=K-1", map[string]any{"uids": []string{"kml-m1", "kml-p1", "kml-r1"}}, 200, nil)
	testkit.WaitFor(t, "the three events stored", func() bool {
		r := e.do(t, netx.ListenerHTTP, "GET", m+"/cot", nil)
		return bytes.Count(r.Body, []byte("<event ")) == 3
	})

	for _, l := range []string{netx.ListenerHTTP, netx.ListenerHTTPS} {
		r := e.do(t, l, "GET", "/Marti/ExportMissionKML?missionName=kmlm", nil)
		if r.Status != 200 || r.Header.Get("Content-Type") != "application/vnd.google-earth.kmz" {
			t.Fatalf("%s KMZ: %d %s %s", l, r.Status, r.Header.Get("Content-Type"), r.Body)
		}
		zr, err := zip.NewReader(bytes.NewReader(r.Body), int64(len(r.Body)))
		if err != nil || len(zr.File) != 1 || zr.File[0].Name != "doc.kml" {
			t.Fatalf("%s KMZ: %v %+v", l, err, zr)
		}
		f, _ := zr.File[0].Open()
		doc, _ := io.ReadAll(f)
		checkKML(t, l, doc)
		k := e.do(t, l, "GET", m+"/kml?download=true", nil)
		if k.Status != 200 || !strings.Contains(k.Header.Get("Content-Disposition"), "kmlm.kml") {
			t.Fatalf("%s mission kml: %d %s", l, k.Status, k.Body)
		}
		checkKML(t, l+" kml", k.Body)
		if k := e.do(t, l, "GET", "/Marti/ExportMissionKML?missionName=kmlm&format=kml", nil); k.Status != 200 {
			t.Fatalf("%s format=kml: %d", l, k.Status)
		}
	}
	for _, x := range []struct {
		path   string
		status int
		msg    string
	}{
		{"/Marti/ExportMissionKML", 400, "missionName"},
		{"/Marti/ExportMissionKML?missionName=kmlm&format=pdf", 400, "format"},
		{"/Marti/ExportMissionKML?missionName=none", 404, "no mission"},
		{"/Marti/api/missions/none/kml", 404, "no mission"},
	} {
		wantRefusal(t, x.path, e.do(t, netx.ListenerHTTP, "GET", x.path, nil), x.status, x.msg)
	}
	red, blue := e.member(t, "reddy", "Red"), e.member(t, "bluey", "Blue")
	if r := e.as(t, red, "PUT", "/Marti/api/missions/redkml?creatorUid=RED-1", nil); r.Status != 201 {
		t.Fatalf("red mission: %d %s", r.Status, r.Body)
	}
	if r := e.as(t, blue, "GET", "/Marti/ExportMissionKML?missionName=redkml", nil); r.Status != 404 {
		t.Errorf("blue exports red's mission: %d %s", r.Status, r.Body)
	}
	if r := e.as(t, red, "GET", "/Marti/ExportMissionKML?missionName=redkml", nil); r.Status != 200 {
		t.Errorf("red exports its mission: %d %s", r.Status, r.Body)
	}
}

func checkKML(t *testing.T, what string, doc []byte) {
	t.Helper()
	var k kmlIn
	if err := xml.Unmarshal(doc, &k); err != nil {
		t.Fatalf("%s: %v: %s", what, err, doc)
	}
	if k.Document.Name != "kmlm" || len(k.Document.Placemarks) != 3 {
		t.Fatalf("%s: %s", what, doc)
	}
	byID := map[string]int{}
	for i, p := range k.Document.Placemarks {
		byID[p.ID] = i
		if _, err := time.Parse(time.RFC3339, p.When); err != nil {
			t.Errorf("%s %s: time %q", what, p.ID, p.When)
		}
	}
	mk, poly, route := k.Document.Placemarks[byID["kml-m1"]], k.Document.Placemarks[byID["kml-p1"]], k.Document.Placemarks[byID["kml-r1"]]
	if mk.Name != `Evil </name>&"` || mk.Description != "</description><script/>" || mk.Point != "18.1,59.1" || mk.IconColor != "ff0000ff" {
		t.Errorf("%s marker: %+v", what, mk)
	}
	if poly.Name != "Area" || poly.Polygon != "18,59 18.2,59 18.2,59.2 18,59" || poly.LineColor != "ffff0000" || poly.PolyColor != "640000ff" {
		t.Errorf("%s polygon: %+v", what, poly)
	}
	if route.Name != "Route 1" || route.Line != "18.3,59.3 18.4,59.4 18.5,59.5" {
		t.Errorf("%s route: %+v", what, route)
	}
}
