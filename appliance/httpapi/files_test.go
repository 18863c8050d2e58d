package httpapi

import (
	"bytes"
	"fmt"
	"io"
	"mime/multipart"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"
)

func multipartRequest(t *testing.T, fields ...string) *http.Request {
	t.Helper()
	var body bytes.Buffer
	mw := multipart.NewWriter(&body)
	for i := 0; i+1 < len(fields); i += 2 {
		fw, err := mw.CreateFormFile(fields[i], "f.bin")
		if err != nil {
			t.Fatal(err)
		}
		io.WriteString(fw, fields[i+1])
	}
	mw.Close()
	r := httptest.NewRequest("POST", "/", &body)
	r.Header.Set("Content-Type", mw.FormDataContentType())
	return r
}

func TestFilePart(t *testing.T) {
	part, err := FilePart(multipartRequest(t, "note", "skip me", "assetfile", "the file"), "assetfile")
	if err != nil {
		t.Fatal(err)
	}
	if b, _ := io.ReadAll(part); string(b) != "the file" {
		t.Fatalf("part %q", b)
	}
	many := []string{}
	for i := range 20 {
		many = append(many, fmt.Sprint("f", i), "x")
	}
	for name, tc := range map[string]struct {
		r    *http.Request
		want string
	}{
		"not multipart":  {httptest.NewRequest("POST", "/", strings.NewReader("raw")), "assetfile: the body must be multipart/form-data"},
		"missing field":  {multipartRequest(t, "other", "x"), "assetfile: required: no file field named assetfile"},
		"too many parts": {multipartRequest(t, append(many, "assetfile", "late")...), "assetfile: not among the first 16 parts"},
	} {
		_, err := FilePart(tc.r, "assetfile")
		if e, ok := err.(*Error); !ok || e.Status != 400 || !strings.HasPrefix(e.Msg, tc.want) {
			t.Errorf("%s: %v", name, err)
		}
	}
	// A body cut short is a read error for the caller, not a 400.
	r := multipartRequest(t, "assetfile", "content")
	b, _ := io.ReadAll(r.Body)
	r.Body = io.NopCloser(bytes.NewReader(b[:20]))
	if _, err := FilePart(r, "assetfile"); err == nil {
		t.Fatal("a truncated body gave a part")
	} else if _, ok := err.(*Error); ok {
		t.Fatalf("a truncated body is not the client's malformed request: %v", err)
	}
}

func TestServeDownload(t *testing.T) {
	content := strings.Repeat("0123456789", 100)
	h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		ServeDownload(w, r, Download{Name: "café map.zip", MIMEType: "application/zip", Hash: "ABCD", ModTime: time.Unix(1e9, 0),
			Content: strings.NewReader(content)})
	})
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, httptest.NewRequest("GET", "/", nil))
	if rec.Code != 200 || rec.Body.String() != content || rec.Header().Get("Content-Type") != "application/zip" ||
		rec.Header().Get("ETag") != `"abcd"` || rec.Header().Get("Content-Disposition") != `attachment; filename="caf_ map.zip"; filename*=UTF-8''caf%C3%A9%20map.zip` {
		t.Fatalf("%d %v", rec.Code, rec.Header())
	}
	req := httptest.NewRequest("GET", "/", nil)
	req.Header.Set("Range", "bytes=990-")
	rec = httptest.NewRecorder()
	h.ServeHTTP(rec, req)
	if rec.Code != 206 || rec.Body.String() != "0123456789" || rec.Header().Get("Content-Range") != "bytes 990-999/1000" {
		t.Fatalf("range: %d %q %v", rec.Code, rec.Body, rec.Header())
	}
	req.Header.Set("Range", "bytes=5000-")
	rec = httptest.NewRecorder()
	h.ServeHTTP(rec, req)
	if rec.Code != 416 {
		t.Fatalf("unsatisfiable range: %d", rec.Code)
	}
}
