package marti_test

import (
	"bytes"
	"crypto/tls"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"

	"outpost/appliance/apptest"
	"outpost/appliance/config"
	"outpost/appliance/netx"
	"outpost/internal/testkit"
)

// TestBadInput: every route refuses bad input with a clear 4xx
// {"message": "<field>: ..."} on both listeners, and nothing is stored.
func TestBadInput(t *testing.T) {
	e := start(t, func(c *config.Config) { c.MaxUploadBytes = 1 << 20 })
	// One stored package for the routes that need an existing hash.
	stored := []byte("stored content")
	if resp := e.do(t, both[0], "POST", "/Marti/sync/upload?filename=s.txt&creatorUid=U", stored, "Content-Type", "text/plain"); resp.Status != 200 {
		t.Fatalf("setup upload: %d %s", resp.Status, resp.Body)
	}
	h := sha(stored)
	unknown := strings.Repeat("ab", 32)
	file, ct := multipartFile(t, "assetfile", "f.bin", []byte("file content"))
	noFile, noFileCT := multipartFile(t, "other", "f.bin", []byte("file content"))
	big := bytes.Repeat([]byte("x"), 3<<19) // over maxUploadBytes, under the listener's own bound (maxUploadBytes + 1 MiB)
	bigMP, bigCT := multipartFile(t, "assetfile", "big.bin", big)

	cases := []struct {
		name, method, path string
		body               any
		headers            []string
		status             int
		msg                string
	}{
		// Uploads.
		{"upload without filename", "POST", "/Marti/sync/upload?creatorUid=U", "x", []string{"Content-Type", "text/plain"}, 400, "filename: required"},
		{"upload without creatorUid", "POST", "/Marti/sync/upload?filename=a.txt", "x", []string{"Content-Type", "text/plain"}, 400, "creatorUid: required"},
		{"upload with a control character", "POST", "/Marti/sync/upload?filename=a%01.txt&creatorUid=U", "x", []string{"Content-Type", "text/plain"}, 400, "filename: contains a control character"},
		{"upload with a long name", "POST", "/Marti/sync/upload?name=" + strings.Repeat("n", 300) + "&creatorUid=U", "x", []string{"Content-Type", "text/plain"}, 400, "name: longer than 255 bytes"},
		{"upload with a bad hash", "POST", "/Marti/sync/upload?filename=a.txt&creatorUid=U&hash=xyz", "x", []string{"Content-Type", "text/plain"}, 400, "hash: must be a SHA-256"},
		{"upload with another content's hash", "POST", "/Marti/sync/upload?filename=a.txt&creatorUid=U&hash=" + unknown, "x", []string{"Content-Type", "text/plain"}, 400, "hash: does not match the content"},
		{"upload with an unknown tool", "POST", "/Marti/sync/upload?filename=a.txt&creatorUid=U&tool=secret", "x", []string{"Content-Type", "text/plain"}, 400, "tool: must be public or private"},
		{"upload without Content-Type", "POST", "/Marti/sync/upload?filename=a.txt&creatorUid=U", "x", nil, 400, "Content-Type: required"},
		{"upload of nothing", "POST", "/Marti/sync/upload?filename=a.txt&creatorUid=U", "", []string{"Content-Type", "text/plain"}, 400, "body: empty"},
		{"upload without assetfile", "POST", "/Marti/sync/upload?filename=a.txt&creatorUid=U", noFile, []string{"Content-Type", noFileCT}, 400, "assetfile: required"},
		{"upload of a broken multipart body", "POST", "/Marti/sync/upload?filename=a.txt&creatorUid=U", "--xx\r\nbroken", []string{"Content-Type", "multipart/form-data; boundary=xx"}, 400, "assetfile:"},
		{"upload with a bad keyword", "POST", "/Marti/sync/upload?filename=a.txt&creatorUid=U&keywords=a%02b", "x", []string{"Content-Type", "text/plain"}, 400, "keywords: keyword contains a control character"},
		{"upload too large (raw)", "POST", "/Marti/sync/upload?filename=a.txt&creatorUid=U", big, []string{"Content-Type", "text/plain"}, 413, "assetfile: larger than the 1048576 bytes"},
		{"upload too large (multipart)", "POST", "/Marti/sync/upload?filename=a.txt&creatorUid=U", bigMP, []string{"Content-Type", bigCT}, 413, "assetfile: larger than the 1048576 bytes"},
		{"content without hash", "PUT", "/Marti/sync/content?filename=a.txt&creatorUid=U", file, []string{"Content-Type", ct}, 400, "hash: required"},
		{"content with another hash", "POST", "/Marti/sync/content?filename=a.txt&creatorUid=U&hash=" + unknown, file, []string{"Content-Type", ct}, 400, "hash: does not match"},
		{"missionupload without hash", "POST", "/Marti/sync/missionupload?filename=a.zip&creatorUid=U", file, []string{"Content-Type", ct}, 400, "hash: required"},
		{"missionupload without creatorUid", "PUT", "/Marti/sync/missionupload?filename=a.zip&hash=" + unknown, file, []string{"Content-Type", ct}, 400, "creatorUid: required"},
		// Downloads.
		{"content without hash or uid", "GET", "/Marti/sync/content", nil, nil, 400, "hash: required (or uid)"},
		{"content with a bad hash", "GET", "/Marti/sync/content?hash=123", nil, nil, 400, "hash: must be a SHA-256"},
		{"content of an unknown hash", "GET", "/Marti/sync/content?hash=" + unknown, nil, nil, 404, "hash: no file with hash " + unknown},
		{"content of an unknown uid", "GET", "/Marti/sync/content?uid=nope", nil, nil, 404, `uid: no file with uid "nope"`},
		{"content with a negative offset", "GET", "/Marti/sync/content?hash=" + h + "&offset=-1", nil, nil, 400, "offset: must be a whole number"},
		{"content from beyond its end", "GET", "/Marti/sync/content?hash=" + h + "&offset=9999", nil, nil, 416, "offset: beyond the end of the file (14 bytes)"},
		{"missionquery without hash", "GET", "/Marti/sync/missionquery", nil, nil, 400, "hash: required"},
		{"missionquery of an unknown hash", "GET", "/Marti/sync/missionquery?hash=" + unknown, nil, nil, 404, "hash: no file"},
		{"search with a control character", "GET", "/Marti/sync/search?keywords=a%00", nil, nil, 400, "keywords: contains a control character"},
		{"search with a long tool", "GET", "/Marti/sync/search?tool=" + strings.Repeat("t", 100), nil, nil, 400, "tool: longer than 64 bytes"},
		// Privacy switch and metadata download.
		{"privacy of a bad hash", "PUT", "/Marti/api/sync/metadata/zz/tool", "private", nil, 400, "hash: must be a SHA-256"},
		{"privacy of an unknown hash", "PUT", "/Marti/api/sync/metadata/" + unknown + "/tool", "private", nil, 404, "hash: no file with hash"},
		{"privacy without a body", "PUT", "/Marti/api/sync/metadata/" + h + "/tool", "", nil, 400, "privacy: required"},
		{"privacy as JSON without the field", "PUT", "/Marti/api/sync/metadata/" + h + "/tool", map[string]string{"other": "x"}, nil, 400, "privacy: required"},
		{"privacy as a JSON number", "PUT", "/Marti/api/sync/metadata/" + h + "/tool", map[string]int{"privacy": 1}, nil, 400, "privacy: must be a string"},
		{"privacy as broken JSON", "PUT", "/Marti/api/sync/metadata/" + h + "/tool", `{"privacy":`, []string{"Content-Type", "application/json"}, 400, "malformed JSON"},
		{"privacy too long", "PUT", "/Marti/api/sync/metadata/" + h + "/tool", strings.Repeat("p", 5000), nil, 413, "request body larger than 4096 bytes"},
		{"metadata of an unknown hash", "GET", "/Marti/api/sync/metadata/" + unknown + "/tool", nil, nil, 404, "hash: no file"},
		{"metadata of a bad hash", "GET", "/Marti/api/sync/metadata/abc/tool", nil, nil, 400, "hash: must be a SHA-256"},
		// Connect routes.
		{"clientEndPoints with a bad secago", "GET", "/Marti/api/clientEndPoints?secago=soon", nil, nil, 400, "secago: must be a whole number"},
		{"clientEndPoints with a negative secAgo", "GET", "/Marti/api/clientEndPoints?secAgo=-5", nil, nil, 400, "secAgo: must be a whole number"},
		{"cot of a control-character uid", "GET", "/Marti/api/cot/xml/a%01b", nil, nil, 400, "uid: contains a control character"},
		// The mux.
		{"unknown route", "GET", "/Marti/api/nothing", nil, nil, 404, "no such endpoint: GET /Marti/api/nothing"},
		{"wrong method", "DELETE", "/Marti/sync/upload", nil, nil, 405, "method DELETE not allowed"},
	}
	before := e.packages(t)
	for _, l := range both {
		for _, tc := range cases {
			c := e.client(l)
			if tc.status == http.StatusRequestEntityTooLarge {
				// As careful clients do for large bodies: announce the body
				// and wait for 100 Continue, so the refusal arrives before
				// any of it is sent (a server that refuses without reading
				// closes the connection, and a client still writing would
				// see a reset instead of the answer).
				c = e.expectContinue(l)
				tc.headers = append(tc.headers, "Expect", "100-continue")
			}
			resp := testkit.Do(t, c, tc.method, e.URL(t, l, tc.path), tc.body, tc.headers...)
			if resp.Status != tc.status || !strings.Contains(resp.Message(), tc.msg) {
				t.Errorf("%s %s: %d %s, want %d with %q", l, tc.name, resp.Status, resp.Body, tc.status, tc.msg)
			}
			if ct := resp.Header.Get("Content-Type"); ct != "application/json" {
				t.Errorf("%s %s: error answered as %q", l, tc.name, ct)
			}
		}
	}
	if n := e.packages(t); n != before {
		t.Fatalf("refused requests stored %d packages", n-before)
	}
	// The privacy of the stored package is untouched by the refusals.
	if resp := e.do(t, both[0], "GET", "/Marti/sync/search?keyword=s.txt", nil); !strings.Contains(string(resp.Body), h) {
		t.Fatalf("the stored package left the search: %s", resp.Body)
	}
}

// expectContinue is a client of the listener that waits for 100 Continue
// before sending a body announced with Expect.
func (e *env) expectContinue(listener string) *http.Client {
	tr := &http.Transport{ExpectContinueTimeout: 10 * time.Second}
	if listener == netx.ListenerHTTPS {
		tr.TLSClientConfig = e.ClientTLS(e.cert)
	}
	return &http.Client{Timeout: 30 * time.Second, Transport: tr}
}

// TestUploadTooLargeChunked: an upload without Content-Length that grows
// past maxUploadBytes is cut off with 413 and leaves nothing.
func TestUploadTooLargeChunked(t *testing.T) {
	e := start(t, func(c *config.Config) { c.MaxUploadBytes = 1 << 20 })
	for _, l := range both {
		pr, pw := io.Pipe()
		go func() {
			chunk := bytes.Repeat([]byte("y"), 64<<10)
			for i := 0; i < 40; i++ {
				if _, err := pw.Write(chunk); err != nil {
					return
				}
			}
			pw.Close()
		}()
		req, _ := http.NewRequest("POST", e.URL(t, l, "/Marti/sync/upload?filename=big.bin&creatorUid=U"), pr)
		req.Header.Set("Content-Type", "application/octet-stream")
		resp, err := e.client(l).Do(req)
		if err != nil {
			t.Fatalf("%s: %v", l, err)
		}
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		pr.CloseWithError(io.ErrClosedPipe)
		if resp.StatusCode != 413 || !strings.Contains(string(b), "maxUploadBytes") {
			t.Fatalf("%s: %d %s", l, resp.StatusCode, b)
		}
	}
	if n := e.packages(t); n != 0 {
		t.Fatalf("%d packages stored", n)
	}
}

// TestUploadAbandoned: a client that goes away in the middle of an upload
// leaves nothing visible, on both listeners.
func TestUploadAbandoned(t *testing.T) {
	logs := &testkit.Buffer{}
	app := apptest.StartWithLog(t, nil, slog.New(slog.NewTextHandler(logs, nil)))
	e := &env{App: app}
	e.cert = app.Issue(t, "alice")
	for i, l := range both {
		var nc net.Conn
		var err error
		if l == netx.ListenerHTTPS {
			nc, err = tls.Dial("tcp", e.Addr(t, l), app.ClientTLS(e.cert))
		} else {
			nc, err = net.Dial("tcp", e.Addr(t, l))
		}
		if err != nil {
			t.Fatal(err)
		}
		fmt.Fprintf(nc, "POST /Marti/sync/upload?filename=half.bin&creatorUid=U HTTP/1.1\r\nHost: x\r\nContent-Type: application/octet-stream\r\nContent-Length: %d\r\n\r\n", 4<<20)
		nc.Write(bytes.Repeat([]byte("z"), 1<<20))
		nc.Close()
		testkit.WaitFor(t, "the abandoned upload logged", func() bool {
			return strings.Count(logs.String(), "enterprise sync upload abandoned; nothing stored") == i+1
		})
	}
	if n := e.packages(t); n != 0 {
		t.Fatalf("%d packages stored", n)
	}
	// The server is fine afterwards. (U is alice's now: the HTTPS upload
	// acted for it, access.md "Uids belong to identities".)
	resp := e.do(t, both[0], "POST", "/Marti/sync/upload?filename=whole.bin&creatorUid=W", "whole", "Content-Type", "text/plain")
	if resp.Status != 200 || e.packages(t) != 1 {
		t.Fatalf("upload after the abandoned ones: %d %s", resp.Status, resp.Body)
	}
}
