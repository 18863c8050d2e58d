package mgmt

// The web console's files (console.md "Web console"): index.html at / and the
// bundled assets under /assets/, from Options.Console (the embedded
// web/dist). They are public routes: the page holds no data and the console
// authenticates in the browser, calling the same bearer-token routes as any
// other client. Every answer carries a strict Content-Security-Policy (no
// inline script or style, connections to this origin only, no framing), and
// text assets are sent gzip-compressed to clients that accept it (the mesh
// may be slow). Asset names carry a content hash, so they are cached for a
// year; index.html is revalidated on every load.

import (
	"bytes"
	"compress/gzip"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io/fs"
	"net/http"
	"path"
	"strings"
	"sync"

	"outpost/appliance/logx"
)

// consoleCSP is the console's Content-Security-Policy: scripts, styles and
// fonts from this origin only; images also from data: and blob: URLs (map
// symbols are SVG data URLs); fetch and websockets to this origin only; no
// plugins, no framing, no <base>, forms post here only.
const consoleCSP = "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data: blob:; " +
	"font-src 'self'; connect-src 'self'; manifest-src 'self'; base-uri 'none'; form-action 'self'; " +
	"frame-ancestors 'none'"

// Cache lifetimes of the console's files.
const (
	cacheImmutable  = "public, max-age=31536000, immutable" // hashed asset names
	cacheRevalidate = "no-cache"                            // index.html
)

// consoleFile is one file of the console, read once at startup.
type consoleFile struct {
	data  []byte
	ctype string
	etag  string

	gzOnce sync.Once
	gz     []byte // gzip of data; nil when it does not pay
}

// consoleFiles holds every file of the console by its path ("index.html",
// "assets/app-3F2A.js").
type consoleFiles map[string]*consoleFile

// loadConsole reads every file of fsys. Files of unknown type are skipped
// (and logged): they would be served without a safe Content-Type.
func (a *API) loadConsole(fsys fs.FS) consoleFiles {
	files := consoleFiles{}
	err := fs.WalkDir(fsys, ".", func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		ctype, ok := consoleTypes[strings.ToLower(path.Ext(p))]
		if !ok {
			a.log.Warn("console file of unknown type not served", "file", p)
			return nil
		}
		data, err := fs.ReadFile(fsys, p)
		if err != nil {
			return err
		}
		sum := sha256.Sum256(data)
		files[p] = &consoleFile{data: data, ctype: ctype, etag: `"` + hex.EncodeToString(sum[:12]) + `"`}
		return nil
	})
	if err != nil {
		a.log.Error("console files could not be read; the console is not served", "err", err)
		return consoleFiles{}
	}
	if files["index.html"] == nil {
		a.log.Warn("the console build has no index.html; the console is not served")
	}
	return files
}

// consoleTypes maps the extensions the console build produces to their
// Content-Type (explicit: the system's MIME tables differ by platform).
var consoleTypes = map[string]string{
	".html":  "text/html; charset=utf-8",
	".js":    "text/javascript; charset=utf-8",
	".css":   "text/css; charset=utf-8",
	".json":  "application/json",
	".svg":   "image/svg+xml",
	".png":   "image/png",
	".ico":   "image/x-icon",
	".woff2": "font/woff2",
	".txt":   "text/plain; charset=utf-8",
}

// compressible are the types worth gzipping.
func compressible(ctype string) bool {
	return strings.HasPrefix(ctype, "text/") || strings.HasPrefix(ctype, "application/json") ||
		strings.HasPrefix(ctype, "image/svg")
}

// gzipped returns the gzip form of the file, computed once; nil when the file
// is not worth compressing.
func (f *consoleFile) gzipped() []byte {
	f.gzOnce.Do(func() {
		if !compressible(f.ctype) || len(f.data) < 512 {
			return
		}
		var b bytes.Buffer
		zw, _ := gzip.NewWriterLevel(&b, gzip.BestCompression)
		zw.Write(f.data)
		zw.Close()
		if b.Len() < len(f.data) {
			f.gz = b.Bytes()
		}
	})
	return f.gz
}

// setSecurityHeaders are sent with every console file and tile answer.
func setSecurityHeaders(h http.Header) {
	h.Set("Content-Security-Policy", consoleCSP)
	h.Set("X-Content-Type-Options", "nosniff")
	h.Set("X-Frame-Options", "DENY")
	h.Set("Referrer-Policy", "no-referrer")
	h.Set("Cross-Origin-Opener-Policy", "same-origin")
	h.Set("Cross-Origin-Resource-Policy", "same-origin")
	h.Set("Permissions-Policy", "camera=(), microphone=(), geolocation=(), payment=(), usb=()")
}

// consoleIndex serves GET / (index.html).
func (a *API) consoleIndex(w http.ResponseWriter, r *http.Request) error {
	return a.serveConsoleFile(w, r, "index.html", cacheRevalidate)
}

// consoleAsset serves GET /assets/<name>.
func (a *API) consoleAsset(w http.ResponseWriter, r *http.Request) error {
	name := strings.TrimPrefix(r.URL.Path, "/")
	if name != path.Clean(name) || strings.Contains(name, "..") {
		setSecurityHeaders(w.Header())
		return notFound("no such file: " + logx.Clip(r.URL.Path))
	}
	return a.serveConsoleFile(w, r, name, cacheImmutable)
}

// serveConsoleFile answers one file with its headers, 304 when the client's
// copy is current, gzip when accepted.
func (a *API) serveConsoleFile(w http.ResponseWriter, r *http.Request, name, cache string) error {
	h := w.Header()
	setSecurityHeaders(h)
	f := a.console[name]
	if f == nil {
		return notFound("no such file: " + logx.Clip(r.URL.Path))
	}
	body, etag := f.data, f.etag
	gz := f.gzipped()
	if gz != nil {
		h.Set("Vary", "Accept-Encoding")
		if acceptsGzip(r) {
			body, etag = gz, strings.TrimSuffix(f.etag, `"`)+`-gz"`
			h.Set("Content-Encoding", "gzip")
		}
	}
	h.Set("Content-Type", f.ctype)
	h.Set("Cache-Control", cache)
	h.Set("ETag", etag)
	if etagMatches(r.Header.Get("If-None-Match"), etag) {
		h.Del("Content-Encoding")
		w.WriteHeader(http.StatusNotModified)
		return nil
	}
	h.Set("Content-Length", fmt.Sprint(len(body)))
	w.WriteHeader(http.StatusOK)
	if r.Method != http.MethodHead {
		w.Write(body)
	}
	return nil
}

// acceptsGzip reports whether Accept-Encoding lists gzip without q=0.
func acceptsGzip(r *http.Request) bool {
	for _, v := range r.Header.Values("Accept-Encoding") {
		for _, part := range strings.Split(v, ",") {
			coding, params, _ := strings.Cut(strings.TrimSpace(part), ";")
			if !strings.EqualFold(strings.TrimSpace(coding), "gzip") {
				continue
			}
			q := strings.ReplaceAll(strings.TrimSpace(params), " ", "")
			return q != "q=0" && q != "q=0.0" && q != "q=0.00" && q != "q=0.000"
		}
	}
	return false
}

// etagMatches applies If-None-Match (a list of tags, or *; weak tags match).
func etagMatches(header, etag string) bool {
	if header == "" {
		return false
	}
	for _, t := range strings.Split(header, ",") {
		t = strings.TrimPrefix(strings.TrimSpace(t), "W/")
		if t == "*" || t == etag {
			return true
		}
	}
	return false
}
