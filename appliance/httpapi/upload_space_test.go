package httpapi

import (
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"

	"outpost/appliance/diskspace"
)

// TestUploadKeepsTheReserve: Begin answers 507 below the reserve and 413
// for an announced length that would cross it; a body read through it is
// cut with 507 once the reserve is crossed.
func TestUploadKeepsTheReserve(t *testing.T) {
	const mib = 1 << 20
	var free atomic.Int64
	g := diskspace.New("/data", diskspace.Options{Reserve: diskspace.Amount{Set: true, Bytes: 10 * mib},
		MaxAge: 1, Logger: slog.New(slog.DiscardHandler),
		Stat: func(string) (diskspace.Usage, error) {
			return diskspace.Usage{Free: free.Load(), Total: 100 * mib}, nil
		}})
	up := Upload{What: "test", Name: "f.bin", MaxBytes: 64 * mib, Space: g, Internal: "internal"}
	serve := func(r *http.Request) *httptest.ResponseRecorder {
		w := httptest.NewRecorder()
		if up.Begin(w, r) {
			part, ok := up.File(w, r, "assetfile")
			if !ok {
				return w
			}
			// The "store": every byte read takes a byte of free space.
			_, err := io.Copy(diskWriter{&free}, part)
			if err != nil {
				up.Failed(w, r, err)
				return w
			}
			w.WriteHeader(http.StatusOK)
		}
		return w
	}
	free.Store(50 * mib)
	if w := serve(multipartRequest(t, "assetfile", "small")); w.Code != http.StatusOK {
		t.Fatalf("above the reserve: %d %s", w.Code, w.Body)
	}
	r := multipartRequest(t, "assetfile", "small")
	r.ContentLength = 45 * mib
	if w := serve(r); w.Code != http.StatusRequestEntityTooLarge || !strings.Contains(w.Body.String(), "reserve") {
		t.Fatalf("announced 45 MiB of 50 free: %d %s", w.Code, w.Body)
	}
	free.Store(9 * mib)
	if w := serve(multipartRequest(t, "assetfile", "small")); w.Code != http.StatusInsufficientStorage ||
		!strings.Contains(w.Body.String(), "below the server's reserve") || w.Header().Get("Connection") != "close" {
		t.Fatalf("below the reserve: %d %v %s", w.Code, w.Header(), w.Body)
	}
	free.Store(12 * mib)
	r = multipartRequest(t, "assetfile", strings.Repeat("x", 4*mib))
	r.ContentLength = -1 // streamed: no length announced
	if w := serve(r); w.Code != http.StatusInsufficientStorage || !strings.Contains(w.Body.String(), "the upload was cut") {
		t.Fatalf("crossing the reserve mid-stream: %d %s", w.Code, w.Body)
	}
}

// diskWriter takes what is written from the free space.
type diskWriter struct{ free *atomic.Int64 }

func (d diskWriter) Write(p []byte) (int, error) { d.free.Add(-int64(len(p))); return len(p), nil }
