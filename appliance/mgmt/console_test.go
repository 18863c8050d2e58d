package mgmt

import (
	"bytes"
	"compress/gzip"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"testing/fstest"

	"outpost/appliance/access"
	"outpost/internal/testkit"
)

var testConsole = fstest.MapFS{
	"index.html":             {Data: []byte("<!doctype html><title>Outpost</title><script type=module src=assets/app-AB12.js></script>")},
	"assets/app-AB12.js":     {Data: bytes.Repeat([]byte("console.log('outpost');\n"), 200)},
	"assets/app-CD34.css":    {Data: []byte("body{color:#fff}")},
	"assets/icon-1.svg":      {Data: []byte("<svg xmlns='http://www.w3.org/2000/svg'/>")},
	"assets/layers-EF56.png": {Data: []byte("\x89PNG\r\n\x1a\n....")},
	"assets/notes.exe":       {Data: []byte("MZ")}, // unknown type: never served
}

func consoleServer(t *testing.T) *httptest.Server {
	t.Helper()
	srv := httptest.NewServer(New(Options{Console: testConsole, Logger: testkit.Discard()}))
	t.Cleanup(srv.Close)
	return srv
}

func get(t *testing.T, url string, headers ...string) (*http.Response, []byte) {
	t.Helper()
	req, _ := http.NewRequest("GET", url, nil)
	for i := 0; i+1 < len(headers); i += 2 {
		req.Header.Set(headers[i], headers[i+1])
	}
	// Plain transport: no automatic gzip, so Content-Encoding is visible.
	resp, err := (&http.Transport{DisableCompression: true}).RoundTrip(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp, b
}

// TestConsoleSecurityHeaders: every console answer, found or not, carries
// the strict CSP and the anti-framing, no-sniff and no-referrer headers.
func TestConsoleSecurityHeaders(t *testing.T) {
	srv := consoleServer(t)
	for _, p := range []string{"/", "/assets/app-AB12.js", "/assets/app-CD34.css", "/assets/missing.js", "/assets/notes.exe",
		"/tiles/0/0/0", "/tiles/metadata.json"} {
		resp, _ := get(t, srv.URL+p)
		h := resp.Header
		csp := h.Get("Content-Security-Policy")
		for _, d := range []string{"default-src 'none'", "script-src 'self'", "style-src 'self'", "img-src 'self' data: blob:",
			"connect-src 'self'", "frame-ancestors 'none'", "base-uri 'none'"} {
			if !strings.Contains(csp, d) {
				t.Errorf("%s: CSP %q lacks %q", p, csp, d)
			}
		}
		if strings.Contains(csp, "unsafe-inline") || strings.Contains(csp, "unsafe-eval") || strings.Contains(csp, "*") {
			t.Errorf("%s: CSP allows too much: %q", p, csp)
		}
		for k, v := range map[string]string{"X-Content-Type-Options": "nosniff", "X-Frame-Options": "DENY", "Referrer-Policy": "no-referrer"} {
			if h.Get(k) != v {
				t.Errorf("%s: %s = %q, want %q", p, k, h.Get(k), v)
			}
		}
	}
}

func TestConsoleFiles(t *testing.T) {
	srv := consoleServer(t)
	cases := []struct {
		path, ctype, cache string
		status             int
	}{
		{"/", "text/html; charset=utf-8", "no-cache", 200},
		{"/assets/app-AB12.js", "text/javascript; charset=utf-8", "public, max-age=31536000, immutable", 200},
		{"/assets/app-CD34.css", "text/css; charset=utf-8", "public, max-age=31536000, immutable", 200},
		{"/assets/icon-1.svg", "image/svg+xml", "public, max-age=31536000, immutable", 200},
		{"/assets/layers-EF56.png", "image/png", "public, max-age=31536000, immutable", 200},
		{"/assets/notes.exe", "application/json", "", 404},
		{"/assets/", "application/json", "", 404},
		{"/assets/../index.html", "", "", 0}, // cleaned by the mux: a redirect, never a file outside assets
		{"/index.html", "application/json", "", 401},
	}
	for _, c := range cases {
		resp, body := get(t, srv.URL+c.path)
		if c.status == 0 {
			if resp.StatusCode == 200 && resp.Header.Get("Content-Type") != "text/html; charset=utf-8" {
				t.Errorf("%s: served %q", c.path, body)
			}
			continue
		}
		if resp.StatusCode != c.status || resp.Header.Get("Content-Type") != c.ctype || resp.Header.Get("Cache-Control") != c.cache {
			t.Errorf("%s = %d %q cache %q, want %d %q %q: %s", c.path, resp.StatusCode, resp.Header.Get("Content-Type"),
				resp.Header.Get("Cache-Control"), c.status, c.ctype, c.cache, body)
		}
		if c.status == 200 {
			key := strings.TrimPrefix(c.path, "/")
			if key == "" {
				key = "index.html"
			}
			if !bytes.Equal(body, testConsole[key].Data) {
				t.Errorf("%s: body %q", c.path, body)
			}
		}
	}
}

func TestConsoleGzipAndRevalidation(t *testing.T) {
	srv := consoleServer(t)
	js := testConsole["assets/app-AB12.js"].Data
	resp, body := get(t, srv.URL+"/assets/app-AB12.js", "Accept-Encoding", "br, gzip")
	if resp.Header.Get("Content-Encoding") != "gzip" || resp.Header.Get("Vary") != "Accept-Encoding" || len(body) >= len(js) {
		t.Fatalf("gzip not used: %v, %d bytes", resp.Header, len(body))
	}
	zr, err := gzip.NewReader(bytes.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	plain, _ := io.ReadAll(zr)
	if !bytes.Equal(plain, js) {
		t.Fatal("gzip body differs from the file")
	}
	gzTag := resp.Header.Get("ETag")
	resp, body = get(t, srv.URL+"/assets/app-AB12.js", "Accept-Encoding", "gzip;q=0")
	if resp.Header.Get("Content-Encoding") != "" || !bytes.Equal(body, js) {
		t.Fatal("gzip;q=0 still compressed")
	}
	plainTag := resp.Header.Get("ETag")
	if plainTag == gzTag || plainTag == "" {
		t.Fatalf("the two encodings share ETag %q", plainTag)
	}
	resp, body = get(t, srv.URL+"/assets/app-AB12.js", "If-None-Match", plainTag)
	if resp.StatusCode != 304 || len(body) != 0 {
		t.Fatalf("If-None-Match: %d, %d bytes", resp.StatusCode, len(body))
	}
	resp, _ = get(t, srv.URL+"/", "If-None-Match", `"other"`)
	if resp.StatusCode != 200 {
		t.Fatalf("other tag: %d", resp.StatusCode)
	}
	// Small files are not compressed.
	resp, _ = get(t, srv.URL+"/assets/app-CD34.css", "Accept-Encoding", "gzip")
	if resp.Header.Get("Content-Encoding") != "" {
		t.Fatal("a 16-byte file was gzipped")
	}
}

// TestConsolePublicOnlyWhereMeant: the console's page and files need no
// token, but the data routes it calls do.
func TestConsolePublicOnlyWhereMeant(t *testing.T) {
	a := New(Options{Console: testConsole, Logger: testkit.Discard()})
	for p, want := range map[string]bool{
		"/": true, "/assets/app-AB12.js": true, "/tiles/1/0/0": true, "/tiles/mapsource.xml": true,
		"/index.html": false, "/api/map": false, "/api/server": false, "/api/logs": false, "/assets/../api/map": false,
		"/tiles/../api/map": false, "/x/..": true,
	} {
		if got, _ := a.ruleFor(httptest.NewRequest("GET", p, nil)); (got == access.Public) != want {
			t.Errorf("ruleFor(%q) = %v, want public %v", p, got, want)
		}
	}
	srv := httptest.NewServer(a)
	defer srv.Close()
	for _, p := range []string{"/api/map", "/api/map/event?uid=x", "/api/server", "/api/logs"} {
		resp, _ := get(t, srv.URL+p)
		if resp.StatusCode != http.StatusUnauthorized {
			t.Errorf("%s without a token: %d, want 401", p, resp.StatusCode)
		}
	}
}

func TestAcceptsGzip(t *testing.T) {
	for h, want := range map[string]bool{
		"": false, "gzip": true, "deflate, gzip": true, "GZIP;q=0.5": true, "gzip;q=0": false, "gzip; q=0.000": false,
		"br": false, "x-gzip": false,
	} {
		r := httptest.NewRequest("GET", "/", nil)
		if h != "" {
			r.Header.Set("Accept-Encoding", h)
		}
		if got := acceptsGzip(r); got != want {
			t.Errorf("acceptsGzip(%q) = %v", h, got)
		}
	}
}
