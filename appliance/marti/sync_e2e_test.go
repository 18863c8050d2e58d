package marti_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net/url"
	"strings"
	"testing"
	"time"

	"outpost/appliance/netx"
)

type searchResult struct {
	ResultCount int
	Results     []json.RawMessage
}

func (e *env) search(t *testing.T, listener, query string) map[string]record {
	t.Helper()
	resp := e.do(t, listener, "GET", "/Marti/sync/search"+query, nil)
	if resp.Status != 200 {
		t.Fatalf("search: %d %s", resp.Status, resp.Body)
	}
	var sr searchResult
	resp.JSON(t, &sr)
	if sr.ResultCount != len(sr.Results) {
		t.Fatalf("resultCount %d for %d results", sr.ResultCount, len(sr.Results))
	}
	out := map[string]record{}
	for _, raw := range sr.Results {
		r := decodeRecord(t, raw)
		out[r.Hash] = r
	}
	return out
}

// TestEnterpriseSync runs every enterprise sync route (api.md §4.2) on both
// listeners: uploads raw and multipart, downloads whole, by range and from
// an offset, the existence check, the search, the privacy switch and the
// metadata download. On HTTPS the submitter is the certificate's name; on
// HTTP the creatorUid. Links carry the listener's scheme and bound port.
func TestEnterpriseSync(t *testing.T) {
	e := start(t, nil)
	for i, l := range both {
		t.Run(l, func(t *testing.T) {
			creator := fmt.Sprintf("ANDROID-%d", i)
			submitter := creator
			if l == netx.ListenerHTTPS {
				submitter = "alice"
			}

			// POST /Marti/sync/upload with a raw body (node-tak and the
			// official server's clients) and name= instead of filename=.
			kml := []byte(fmt.Sprintf(`<kml xmlns="http://www.opengis.net/kml/2.2"><Placemark><name>%s</name></Placemark></kml>`, l))
			resp := e.do(t, l, "POST", "/Marti/sync/upload?name=route.kml&creatorUid="+creator+"&keywords=kml,routes", kml,
				"Content-Type", "application/vnd.google-earth.kml+xml")
			if resp.Status != 200 || resp.Header.Get("Content-Type") != "application/json; charset=utf-8" {
				t.Fatalf("upload: %d %s", resp.Status, resp.Body)
			}
			up := decodeRecord(t, resp.Body)
			if up.Hash != sha(kml) || up.UID == "" || up.MIMEType != "application/vnd.google-earth.kml+xml" ||
				up.SubmissionUser != submitter || up.CreatorUid != creator || up.Name != "route.kml" || up.Tool != "public" || up.Size.String() != fmt.Sprint(len(kml)) {
				t.Fatalf("upload record: %+v", up)
			}
			if _, err := time.Parse("2006-01-02T15:04:05.000Z", up.SubmissionDateTime); err != nil {
				t.Fatalf("SubmissionDateTime %q", up.SubmissionDateTime)
			}
			for _, kw := range []string{"missionpackage", "kml", "routes", "route.kml", submitter} {
				if !strings.Contains(strings.Join(up.Keywords, "|"), kw) {
					t.Fatalf("keywords %v lack %q", up.Keywords, kw)
				}
			}
			// The same content again, multipart and with its hash: one
			// package, the same PrimaryKey.
			body, ct := multipartFile(t, "assetfile", "route.kml", kml)
			resp = e.do(t, l, "POST", "/Marti/sync/upload?filename=route.kml&keyword=kml&creatorUid="+creator+"&hash="+strings.ToUpper(sha(kml)), body, "Content-Type", ct)
			again := decodeRecord(t, resp.Body)
			if resp.Status != 200 || again.PrimaryKey != up.PrimaryKey || again.UID != up.UID {
				t.Fatalf("second upload of the same content: %d %s (first %+v)", resp.Status, resp.Body, up)
			}

			// Downloads: by hash, by uid, HEAD, a Range, ATAK's offset.
			resp = e.do(t, l, "GET", "/Marti/sync/content?hash="+up.Hash, nil)
			if resp.Status != 200 || !bytes.Equal(resp.Body, kml) || !strings.Contains(resp.Header.Get("Content-Disposition"), `filename="route.kml"`) {
				t.Fatalf("download: %d %v", resp.Status, resp.Header)
			}
			resp = e.do(t, l, "GET", "/Marti/sync/content?uid="+up.UID, nil)
			if resp.Status != 200 || !bytes.Equal(resp.Body, kml) {
				t.Fatalf("download by uid: %d", resp.Status)
			}
			resp = e.do(t, l, "HEAD", "/Marti/sync/content?hash="+up.Hash, nil)
			if resp.Status != 200 || len(resp.Body) != 0 || resp.Header.Get("Content-Length") != fmt.Sprint(len(kml)) {
				t.Fatalf("HEAD: %d %v", resp.Status, resp.Header)
			}
			resp = e.do(t, l, "GET", "/Marti/sync/content?hash="+up.Hash, nil, "Range", "bytes=5-9")
			if resp.Status != 206 || string(resp.Body) != string(kml[5:10]) || resp.Header.Get("Content-Range") != fmt.Sprintf("bytes 5-9/%d", len(kml)) {
				t.Fatalf("range: %d %q %v", resp.Status, resp.Body, resp.Header)
			}
			resp = e.do(t, l, "GET", "/Marti/sync/content?hash="+up.Hash+"&offset=10", nil)
			if resp.Status != 200 || !bytes.Equal(resp.Body, kml[10:]) {
				t.Fatalf("offset: %d %q", resp.Status, resp.Body)
			}
			resp = e.do(t, l, "GET", fmt.Sprintf("/Marti/sync/content?hash=%s&offset=%d", up.Hash, len(kml)), nil)
			if resp.Status != 200 || len(resp.Body) != 0 {
				t.Fatalf("offset at the end: %d %q", resp.Status, resp.Body)
			}

			// ATAK's data package send: missionquery (404), missionupload,
			// metadata tool PUT with a bare word, missionquery (200).
			pkg := missionPackage(t, "pkg-"+l)
			hash := sha(pkg)
			resp = e.do(t, l, "GET", "/Marti/sync/missionquery?hash="+hash, nil)
			if resp.Status != 404 {
				t.Fatalf("missionquery before upload: %d", resp.Status)
			}
			body, ct = multipartFile(t, "assetfile", "pkg.zip", pkg)
			resp = e.do(t, l, "POST", "/Marti/sync/missionupload?hash="+hash+"&filename=Recon1.zip&creatorUid="+creator, body, "Content-Type", ct)
			scheme := "http"
			if l == netx.ListenerHTTPS {
				scheme = "https"
			}
			wantLink := fmt.Sprintf("%s://127.0.0.1:%s/Marti/api/sync/metadata/%s/tool", scheme, e.port(t, l), hash)
			if resp.Status != 200 || string(resp.Body) != wantLink || !strings.HasPrefix(resp.Header.Get("Content-Type"), "text/plain") {
				t.Fatalf("missionupload: %d %q, want %q", resp.Status, resp.Body, wantLink)
			}
			resp = e.do(t, l, "GET", "/Marti/sync/missionquery?hash="+hash, nil)
			if resp.Status != 200 || !bytes.Equal(resp.Body, pkg) || resp.Header.Get("Content-Type") != "application/zip" ||
				!strings.Contains(resp.Header.Get("Content-Disposition"), `filename="Recon1.zip"`) {
				t.Fatalf("missionquery: %d %v", resp.Status, resp.Header)
			}
			found := e.search(t, l, "?keywords=missionpackage")
			if r, ok := found[hash]; !ok || r.Name != "Recon1.zip" || r.MIMEType != "application/zip" || r.Private.String() != "0" || r.SubmissionUser != submitter {
				t.Fatalf("search: %+v", found)
			}
			if _, ok := found[up.Hash]; !ok {
				t.Fatal("the KML upload is not in the search")
			}
			if found := e.search(t, l, "?keyword=kml"); found[up.Hash].Hash == "" || found[hash].Hash != "" {
				t.Fatalf("keyword=kml: %v", found)
			}
			resp = e.do(t, l, "PUT", "/Marti/api/sync/metadata/"+hash+"/tool", "private", "Content-Type", "text/plain")
			if resp.Status != 200 || string(resp.Body) != "Okay" {
				t.Fatalf("metadata tool private: %d %q", resp.Status, resp.Body)
			}
			if _, ok := e.search(t, l, "")[hash]; ok {
				t.Fatal("a private package appears in the search")
			}
			if _, ok := e.search(t, l, "?tool=private")[hash]; ok {
				t.Fatal("a private package appears in the search of tool=private")
			}
			// Still downloadable by hash, and back to public with the
			// contract's JSON body.
			resp = e.do(t, l, "GET", "/Marti/sync/content?hash="+hash, nil)
			if resp.Status != 200 || !bytes.Equal(resp.Body, pkg) {
				t.Fatalf("private download: %d", resp.Status)
			}
			resp = e.do(t, l, "PUT", "/Marti/api/sync/metadata/"+hash+"/tool", map[string]string{"privacy": "public"})
			if resp.Status != 200 || string(resp.Body) != "Okay" {
				t.Fatalf("metadata tool JSON: %d %q", resp.Status, resp.Body)
			}
			if r, ok := e.search(t, l, "")[hash]; !ok || r.Tool != "public" {
				t.Fatal("the package did not become public again")
			}

			// The link missionupload answered downloads the package under
			// its original name, for any origin.
			u, _ := url.Parse(wantLink)
			resp = e.do(t, l, "GET", u.Path, nil)
			if resp.Status != 200 || !bytes.Equal(resp.Body, pkg) || resp.Header.Get("Access-Control-Allow-Origin") != "*" ||
				!strings.Contains(resp.Header.Get("Content-Disposition"), `filename="Recon1.zip"`) {
				t.Fatalf("metadata download: %d %v", resp.Status, resp.Header)
			}

			// PUT and POST /Marti/sync/content store a file under its hash.
			for _, method := range []string{"PUT", "POST"} {
				content := []byte(method + " content of " + l)
				body, ct = multipartFile(t, "assetfile", "c.txt", content)
				resp = e.do(t, l, method, "/Marti/sync/content?hash="+sha(content)+"&filename=c.txt&creatorUid="+creator+"&tool=private", body, "Content-Type", ct)
				r := decodeRecord(t, resp.Body)
				if resp.Status != 200 || r.Hash != sha(content) || r.Tool != "private" || r.Private.String() != "1" || r.SubmissionUser != submitter {
					t.Fatalf("%s content: %d %s", method, resp.Status, resp.Body)
				}
				if _, ok := e.search(t, l, "?keyword=c.txt")[r.Hash]; ok {
					t.Fatalf("%s content: a private upload is in the search", method)
				}
			}
		})
	}
}
