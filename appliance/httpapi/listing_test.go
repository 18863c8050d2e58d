package httpapi

import (
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"testing"

	"outpost/appliance/fault"
)

// TestListing: items and entries are separated and closed as JSON; an
// empty listing is still whole; an error before the first item is answered
// with its status; one after it cuts the answer (the server drops the
// connection on http.ErrAbortHandler) rather than close the list.
func TestListing(t *testing.T) {
	run := func(head, tail string, fn func(l *Listing) error) (rec *httptest.ResponseRecorder, aborted bool) {
		rec = httptest.NewRecorder()
		r := httptest.NewRequest("GET", "/list", nil)
		defer func() {
			if v := recover(); v != nil {
				if v != http.ErrAbortHandler {
					panic(v)
				}
				aborted = true
			}
		}()
		l := NewListing(rec, r, "application/json", head, tail)
		l.Finish(fn(l), "internal")
		return rec, false
	}
	rec, _ := run(`{"a":[`, `]}`, func(l *Listing) error {
		for i := range 3 {
			if err := l.Item(map[string]int{"n": i}); err != nil {
				return err
			}
		}
		return nil
	})
	if got := rec.Body.String(); got != "{\"a\":[{\"n\":0}\n,{\"n\":1}\n,{\"n\":2}\n]}" || rec.Code != 200 || rec.Header().Get("Content-Type") != "application/json" {
		t.Fatalf("items: %d %q", rec.Code, got)
	}
	rec, _ = run(`{"m":{`, `}}`, func(l *Listing) error {
		if err := l.Entry("x<", "1"); err != nil {
			return err
		}
		return l.Entry("y", 2)
	})
	if got := rec.Body.String(); got != "{\"m\":{\"x\\u003c\"\n:\"1\"\n,\"y\"\n:2\n}}" {
		t.Fatalf("entries: %q", got)
	}
	if rec, _ = run("<l>", "</l>", func(*Listing) error { return nil }); rec.Body.String() != "<l></l>" {
		t.Fatalf("empty: %q", rec.Body.String())
	}
	notFound := fault.New(fault.NotFound, "test: not found")
	rec, aborted := run("[", "]", func(*Listing) error { return fmt.Errorf("%w: nothing here", notFound) })
	if aborted || rec.Code != 404 || rec.Body.String() != "{\"message\":\"nothing here\"}\n" {
		t.Fatalf("error before the first item: %d %q aborted %v", rec.Code, rec.Body.String(), aborted)
	}
	rec, aborted = run("[", "]", func(l *Listing) error {
		l.Raw([]byte("1"))
		return errors.New("the disk failed")
	})
	if !aborted || rec.Body.String() != "[1" {
		t.Fatalf("error after an item: aborted %v, body %q", aborted, rec.Body.String())
	}
}
