package marti_test

import (
	"archive/zip"
	"bytes"
	"context"
	"io"
	"net/url"
	"strings"
	"testing"
	"time"

	"outpost/appliance/netx"
	"outpost/appliance/store"
	"outpost/appliance/takclient"
	"outpost/internal/testkit"
)

// TestHistoryKMLExport: POST /Marti/ExportMissionKML (the official
// server's history export, as node-tak's Export sends it) and its GET
// without missionName, on both listeners: the window's events as one folder
// per uid with its latest position and its track (oldest first); one uid's
// with uid=; an interval in hours; KMZ; and the refusals (no window, all
// three of start, end and interval, an end before the start, a bad
// interval or format, an unknown group, a group the caller does not read),
// each 400 or 403.
func TestHistoryKMLExport(t *testing.T) {
	e := start(t, nil)
	ctx := context.Background()
	h := e.Store().StartHistory(store.HistoryOptions{})
	base := time.Now().UTC().Add(-30 * time.Minute).Truncate(time.Second)
	add := func(uid, callsign string, lat float64, at time.Time) {
		ev := takclient.SA(uid, callsign, lat, 18)
		if !h.Add(ev, ev.AppendXML(nil), at, "test", 0, store.AnonGroup) {
			t.Fatal("history refused an event")
		}
	}
	for i := range 3 {
		add("TRACK-A", "ALPHA", 59.0+float64(i)/10, base.Add(time.Duration(i)*time.Minute))
	}
	add("TRACK-B", "BRAVO", 58, base.Add(5*time.Minute))
	add("TRACK-OLD", "OLD", 57, base.Add(-48*time.Hour))
	if err := h.Close(ctx); err != nil {
		t.Fatal(err)
	}
	form := func(kv ...string) url.Values {
		v := url.Values{}
		for i := 0; i < len(kv); i += 2 {
			v.Add(kv[i], kv[i+1])
		}
		return v
	}
	start, end := base.Add(-time.Minute).Format(time.RFC3339), base.Add(10*time.Minute).Format(time.RFC3339)
	post := func(l string, v url.Values) (int, string) {
		t.Helper()
		r := e.do(t, l, "POST", "/Marti/ExportMissionKML", []byte(v.Encode()), "Content-Type", "application/x-www-form-urlencoded")
		return r.Status, string(r.Body)
	}
	for _, l := range both {
		status, doc := post(l, form("startTime", start, "endTime", end, "format", "kml", "groups", "__ANON__"))
		if status != 200 || strings.Count(doc, "<Folder>") != 2 || !strings.Contains(doc, "<name>ALPHA</name>") ||
			!strings.Contains(doc, "<name>ALPHA track</name>") || !strings.Contains(doc, "<name>BRAVO</name>") ||
			strings.Contains(doc, "BRAVO track") || strings.Contains(doc, "OLD") ||
			!strings.Contains(doc, "<coordinates>18,59 18,59.1 18,59.2</coordinates>") {
			t.Fatalf("%s export: %d %s", l, status, doc)
		}
		if status, doc = post(l, form("startTime", start, "endTime", end, "uid", "TRACK-B")); status != 200 ||
			strings.Count(doc, "<Folder>") != 1 || !strings.Contains(doc, "BRAVO") {
			t.Fatalf("%s export of one uid: %d %s", l, status, doc)
		}
		r := e.do(t, l, "GET", "/Marti/ExportMissionKML?interval=1&format=kmz", nil)
		if r.Status != 200 || r.Header.Get("Content-Type") != "application/vnd.google-earth.kmz" {
			t.Fatalf("%s GET kmz: %d %s", l, r.Status, r.Header)
		}
		zr, err := zip.NewReader(bytes.NewReader(r.Body), int64(len(r.Body)))
		if err != nil || len(zr.File) != 1 || zr.File[0].Name != "doc.kml" {
			t.Fatalf("%s kmz: %v", l, err)
		}
		rc, _ := zr.File[0].Open()
		kml, _ := io.ReadAll(rc)
		rc.Close()
		if strings.Count(string(kml), "<Folder>") != 2 {
			t.Fatalf("%s kmz doc: %s", l, kml)
		}
		if status, doc = post(l, form("startTime", base.Add(-72*time.Hour).Format(time.RFC3339), "interval", "1")); status != 200 || strings.Contains(doc, "<Folder>") {
			t.Fatalf("%s an empty window: %d %s", l, status, doc)
		}
		for _, c := range []struct {
			v      url.Values
			status int
			msg    string
		}{
			{form("format", "kml"), 400, "missionName or startTime: required"},
			{form("startTime", start, "endTime", end, "interval", "2"), 400, "interval: give at most two"},
			{form("startTime", end, "endTime", start), 400, "endTime: must not be before startTime"},
			{form("interval", "-1"), 400, "interval: must be a number of hours"},
			{form("interval", "soon"), 400, "interval"},
			{form("startTime", "yesterday"), 400, "startTime: must be an ISO 8601 time"},
			{form("interval", "1", "format", "pdf"), 400, "format: must be kml or kmz"},
			{form("interval", "1", "groups", "Nope"), 400, `groups: no group "Nope"`},
			{form("interval", "1", "optimizeExport", "maybe"), 400, "optimizeExport"},
		} {
			r := e.do(t, l, "POST", "/Marti/ExportMissionKML", []byte(c.v.Encode()), "Content-Type", "application/x-www-form-urlencoded")
			wantRefusal(t, c.v.Encode(), r, c.status, c.msg)
		}
	}
	// A Red member reads Red, not __ANON__: asking for __ANON__ is 403,
	// its own groups show none of the anonymous events.
	red := e.member(t, "reddy", "Red")
	body := []byte(form("interval", "1", "groups", "__ANON__").Encode())
	if r := e.as(t, red, "POST", "/Marti/ExportMissionKML", body, "Content-Type", "application/x-www-form-urlencoded"); r.Status != 403 || !strings.Contains(r.Msg, "you do not read group") {
		t.Fatalf("red asks for __ANON__: %d %s", r.Status, r.Body)
	}
	if r := e.as(t, red, "POST", "/Marti/ExportMissionKML", []byte(form("interval", "1").Encode()), "Content-Type", "application/x-www-form-urlencoded"); r.Status != 200 || strings.Contains(string(r.Body), "ALPHA") {
		t.Fatalf("red's own export: %d %s", r.Status, r.Body)
	}
}

// TestNodeTakExport drives the history export with @tak-ps/node-tak
// 8.9.0's Export class on both listeners (marti-export.mjs): KML and KMZ
// of the last hour holding a client's stored position, and a refused
// window.
func TestNodeTakExport(t *testing.T) {
	testkit.RequireInterop(t, "@tak-ps/node-tak")
	e := start(t, nil)
	storedSA(t, e, "ANDROID-EXPORT", "XCALL")
	certFile, keyFile := writePEM(t, e, "nodeexport")
	for _, l := range both {
		env := []string{"OUTPOST_URL=" + strings.TrimSuffix(e.URL(t, l, "/"), "/"), "CONTACT_UID=ANDROID-EXPORT"}
		if l == netx.ListenerHTTPS {
			env = append(env, "CERT="+certFile, "KEY="+keyFile)
		}
		steps := runNode(t, "marti-export.mjs", env...)
		for _, name := range []string{"kml", "kmz", "bad", "done"} {
			if s, ok := steps[name]; !ok || !s.OK {
				t.Errorf("%s step %s: %+v", l, name, s)
			}
		}
	}
}
