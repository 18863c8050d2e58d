package marti_test

import (
	"archive/zip"
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"
	"testing"

	"outpost/appliance/netx"
	"outpost/internal/testkit"
)

// citrapPackage is a CI-TRAP report's mission package: a manifest, a photo
// and the report's XML (behind a byte order mark, as some clients write it).
func citrapPackage(t testing.TB, report string) []byte {
	t.Helper()
	var b bytes.Buffer
	zw := zip.NewWriter(&b)
	for _, f := range []struct{ name, body string }{
		{"MANIFEST/manifest.xml", `<MissionPackageManifest version="2"><Configuration/><Contents/></MissionPackageManifest>`},
		{"photo.jpg", "\xff\xd8\xff not really a photo"},
		{"TrapReport.xml", "\xef\xbb\xbf" + report},
	} {
		w, err := zw.Create(f.name)
		if err != nil {
			t.Fatal(err)
		}
		io.WriteString(w, f.body)
	}
	zw.Close()
	return b.Bytes()
}

// report is a report document with attrs (name="value" pairs).
func report(attrs string) string {
	return `<?xml version="1.0" encoding="UTF-8"?><report ` + attrs + `><section title="What"><option title="Count" value="3"/></section></report>`
}

// citrapOut is an item of GET /Marti/api/citrap.
type citrapOut struct {
	ID, Title, Type, UserCallsign, DateTime, Location string
	Importance                                        *string
	Status                                            *string
}

func reportIDs(list []citrapOut) string {
	var out []string
	for _, r := range list {
		out = append(out, r.ID)
	}
	return strings.Join(out, ",")
}

// TestCitrapReports runs the CI-TRAP routes on both listeners: posting a
// report's mission package (with and without an id, and again to replace
// it), the listing with each filter, in JSON and XML, one report's package
// and XML, and every refusal, which stores nothing.
func TestCitrapReports(t *testing.T) {
	e := start(t, nil)
	for i, l := range both {
		t.Run(l, func(t *testing.T) {
			uid := fmt.Sprintf("TRAP-%d", i)
			post := func(pkg []byte, query string) (int, string, http.Header) {
				t.Helper()
				resp := e.do(t, l, "POST", "/Marti/api/citrap?clientUid="+uid+query, pkg, "Content-Type", "application/octet-stream")
				return resp.Status, string(resp.Body), resp.Header
			}
			id := "rep-" + l
			first := citrapPackage(t, report(`id="`+id+`" title="Bridge out" type="Incident" userCallsign="Scout `+l+
				`" dateTime="2026-11-22T10:00:00.000Z" location="POINT (10.5 50.25)" eventScale="local"`))
			status, body, hdr := post(first, "")
			scheme := map[string]string{netx.ListenerHTTP: "http", netx.ListenerHTTPS: "https"}[l]
			if status != 201 || body != `{"id":"`+id+`"}`+"\n" || hdr.Get("Location") != fmt.Sprintf("%s://127.0.0.1:%s/Marti/api/citrap/%s", scheme, e.port(t, l), id) {
				t.Fatalf("post: %d %s %v", status, body, hdr)
			}
			noID := citrapPackage(t, report(`title="No id" type="Medical" userCallsign="Medic `+l+`" dateTime="2026-11-21T08:00:00Z" status="open"`))
			status, body, _ = post(noID, "")
			var made struct{ ID string }
			if status != 201 || json.Unmarshal([]byte(body), &made) != nil || made.ID == "" {
				t.Fatalf("post without an id: %d %s", status, body)
			}
			// The same package again would be a second report of one file.
			n := e.packages(t)
			if status, body, _ = post(noID, ""); status != 409 || !strings.Contains(body, "the package of another report already") || e.packages(t) != n {
				t.Fatalf("the same package again without an id: %d %s", status, body)
			}

			list := func(query string) []citrapOut {
				t.Helper()
				var out []citrapOut
				e.getJSONAs(t, e.client(l), l, "/Marti/api/citrap"+query, &out)
				return out
			}
			// Newest dateTime first (on 8443 the reports of 8080 too).
			all := list("")
			var mine citrapOut
			for j, r := range all {
				if r.ID == id {
					mine = r
				}
				if j > 0 && all[j-1].DateTime < r.DateTime {
					t.Fatalf("list not newest first: %+v", all)
				}
			}
			if ids := "," + reportIDs(all) + ","; !strings.Contains(ids, ","+id+",") || !strings.Contains(ids, ","+made.ID+",") {
				t.Fatalf("list: %s", ids)
			}
			if mine.Title != "Bridge out" || mine.Type != "Incident" || mine.UserCallsign != "Scout "+l || mine.Location != "POINT (10.5 50.25)" ||
				mine.Importance != nil || mine.Status != nil {
				t.Fatalf("the report: %+v", mine)
			}
			for q, want := range map[string]string{
				"?type=Incident&callsign=Scout%20" + l:                       id,
				"?keywords=SCOUT%20" + l:                                     id,
				"?keywords=nothing," + made.ID + "&type=Medical":             made.ID,
				"?callsign=Scout%20" + l + "&startTime=2026-11-22T10:00:01Z": "",
				"?callsign=Scout%20" + l + "&endTime=2026-11-22T10:00:00Z":   id,
				"?callsign=Scout%20" + l + "&bbox=10,50,11,51":               id,
				"?callsign=Scout%20" + l + "&bbox=11,51,10,50":               id,
				"?callsign=Scout%20" + l + "&bbox=-10,-10,0,0":               "",
			} {
				if got := reportIDs(list(q)); got != want {
					t.Errorf("list%s: %q, want %q", q, got, want)
				}
			}
			if got := list("?maxReportCount=1"); len(got) != 1 {
				t.Errorf("maxReportCount=1: %d reports", len(got))
			}

			// XML: the listing and one report; the package as posted.
			resp := e.do(t, l, "GET", "/Marti/api/citrap?callsign=Medic%20"+l, nil, "Accept", "application/xml")
			if resp.Status != 200 || !strings.HasPrefix(resp.Header.Get("Content-Type"), "application/xml") ||
				!strings.Contains(string(resp.Body), `<reports><report title="No id"`) || !strings.Contains(string(resp.Body), `id="`+made.ID+`"`) {
				t.Errorf("the XML listing: %d %s", resp.Status, resp.Body)
			}
			resp = e.do(t, l, "GET", "/Marti/api/citrap/"+id+"?clientUid="+uid, nil)
			if resp.Status != 200 || !bytes.Equal(resp.Body, first) || !strings.Contains(resp.Header.Get("Content-Disposition"), id+".zip") {
				t.Errorf("the report's package: %d %v", resp.Status, resp.Header)
			}
			resp = e.do(t, l, "GET", "/Marti/api/citrap/"+id, nil, "Accept", "application/xml")
			if resp.Status != 200 || !strings.Contains(string(resp.Body), `<option title="Count" value="3"/>`) {
				t.Errorf("the report's XML: %d %s", resp.Status, resp.Body)
			}
			wantRefusal(t, "an unknown report", e.do(t, l, "GET", "/Marti/api/citrap/nothing-here", nil), 404, "id: no CI-TRAP report")

			// Posting the id again replaces the report and its package.
			n = e.packages(t)
			status, body, _ = post(citrapPackage(t, report(`id="`+id+`" title="Bridge repaired" userCallsign="Scout `+l+`" dateTime="2026-11-22T11:00:00Z"`)), "")
			if status != 201 || e.packages(t) != n {
				t.Fatalf("replace: %d %s; %d packages, had %d", status, body, e.packages(t), n)
			}
			if got := list("?callsign=Scout%20" + l); len(got) != 1 || got[0].Title != "Bridge repaired" {
				t.Fatalf("after the replacement: %+v", got)
			}
			if e.do(t, l, "GET", "/Marti/sync/content?hash="+sha(first), nil).Status != 404 {
				t.Fatal("the replaced package is still there")
			}
			// Deleting the report's file deletes the report.
			current := e.do(t, l, "GET", "/Marti/api/citrap/"+id, nil).Body
			wantStatus(t, "deleting the report's file", e.do(t, l, "DELETE", "/Marti/sync/delete?hash="+sha(current), nil), 200)
			if got := list("?callsign=Scout%20" + l); len(got) != 0 {
				t.Fatalf("after its file was deleted: %+v", got)
			}
			wantRefusal(t, "the deleted report", e.do(t, l, "GET", "/Marti/api/citrap/"+id, nil), 404, "id: no CI-TRAP report")

			// Refusals store nothing.
			big := make([]byte, 8<<20+1)
			for _, c := range []struct {
				what   string
				body   []byte
				query  string
				status int
				msg    string
			}{
				{"no clientUid", first, "?clientUid=", 400, "clientUid: required"},
				{"an empty body", nil, "?clientUid=" + uid, 400, "body: empty"},
				{"not a ZIP", []byte("<report id='x'/>"), "", 400, "body: not a mission package"},
				{"no report", missionPackage(t, "no-report"), "", 400, "holds no report"},
				{"a DOCTYPE", citrapPackage(t, `<!DOCTYPE report [<!ENTITY x "y">]><report id="dt"/>`), "", 400, "DOCTYPE"},
				{"another root", citrapPackage(t, `<reports><report id="in"/></reports>`), "", 400, "not <report>"},
				{"a bad dateTime", citrapPackage(t, report(`id="bad-time" dateTime="yesterday"`)), "", 400, "dateTime: must be an ISO 8601 time"},
				{"a long title", citrapPackage(t, report(`id="long" title="`+strings.Repeat("t", 257)+`"`)), "", 400, "title: longer than 256 characters"},
				{"a control character in the id", citrapPackage(t, report(`id="a&#10;b"`)), "", 400, "id: contains a control character"},
				{"too large", big, "", 413, "at most 8388608 bytes"},
			} {
				n := e.packages(t)
				if c.query == "" {
					c.query = "?clientUid=" + uid
				}
				var resp testkit.Response
				if c.status == 413 {
					// Refused before the body is read: the client waits for
					// 100 Continue, which never comes.
					resp = e.doAs(t, e.expectContinue(l), l, "POST", "/Marti/api/citrap"+c.query, c.body, "Expect", "100-continue")
				} else {
					resp = e.do(t, l, "POST", "/Marti/api/citrap"+c.query, c.body)
				}
				wantRefusal(t, c.what, resp, c.status, c.msg)
				if e.packages(t) != n {
					t.Errorf("%s stored a package", c.what)
				}
			}
			for _, c := range []struct{ q, msg string }{
				{"?startTime=yesterday", "startTime: must be an ISO 8601 time"},
				{"?endTime=2026-13-01T00:00:00Z", "endTime:"},
				{"?bbox=1,2,3", "bbox: must be four numbers"},
				{"?bbox=a,b,c,d", "bbox:"},
				{"?maxReportCount=0", "maxReportCount: must be -1 or a whole number from 1"},
				{"?type=" + strings.Repeat("a,", 40), "type: at most 32"},
				{"?callsign=%00", "callsign: contains a control character"},
			} {
				wantRefusal(t, "list"+c.q, e.do(t, l, "GET", "/Marti/api/citrap"+c.q, nil), 400, c.msg)
			}
		})
	}
}

// TestCitrapGroups holds CI-TRAP reports to access.md "Groups" and
// "Roles": a Red report is not listed or served to Blue or to anonymous
// clients, Blue cannot take its id (409), another Red member cannot
// replace it (403), and the report stays as it was.
func TestCitrapGroups(t *testing.T) {
	e := start(t, nil)
	red, rosa, blue := e.member(t, "reddy", "Red"), e.member(t, "rosa", "Red"), e.member(t, "bluey", "Blue")
	pkg := citrapPackage(t, report(`id="red-report" title="Red only" dateTime="2026-11-22T10:00:00Z"`))
	post := func(c certHolder, uid string, body []byte) (int, string) {
		t.Helper()
		resp := e.doAs(t, c.hc, netx.ListenerHTTPS, "POST", "/Marti/api/citrap?clientUid="+uid, body)
		return resp.Status, resp.Message()
	}
	if status, msg := post(red, "RED-1", pkg); status != 201 {
		t.Fatalf("reddy posting: %d %s", status, msg)
	}
	ids := func(hc *http.Client, l string) string {
		t.Helper()
		var out []citrapOut
		e.getJSONAs(t, hc, l, "/Marti/api/citrap", &out)
		return reportIDs(out)
	}
	if got := ids(rosa.hc, netx.ListenerHTTPS); got != "red-report" {
		t.Errorf("rosa lists %q", got)
	}
	for _, c := range []struct {
		who string
		hc  *http.Client
		l   string
	}{{"bluey", blue.hc, netx.ListenerHTTPS}, {"anonymous", nil, netx.ListenerHTTP}} {
		if got := ids(c.hc, c.l); got != "" {
			t.Errorf("%s lists %q", c.who, got)
		}
		if r := e.doAs(t, c.hc, c.l, "GET", "/Marti/api/citrap/red-report", nil); r.Status != 404 {
			t.Errorf("%s reading the Red report: %d", c.who, r.Status)
		}
	}
	other := citrapPackage(t, report(`id="red-report" title="Taken over"`))
	if status, msg := post(blue, "BLUE-1", other); status != 409 || !strings.Contains(msg, "another report has the id") {
		t.Errorf("bluey posting the Red id: %d %s", status, msg)
	}
	if status, msg := post(rosa, "ROSA-1", other); status != 403 || !strings.Contains(msg, "only its owner or an administrator") {
		t.Errorf("rosa replacing reddy's report: %d %s", status, msg)
	}
	resp := e.doAs(t, red.hc, netx.ListenerHTTPS, "GET", "/Marti/api/citrap/red-report", nil)
	if resp.Status != 200 || !bytes.Equal(resp.Body, pkg) {
		t.Errorf("the Red report after the refusals: %d", resp.Status)
	}
}
