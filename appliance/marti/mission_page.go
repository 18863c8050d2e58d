package marti

// Pages of the long mission listings (api-marti.md "Limits and paging"):
// the change history, log entries and the mission list answer a bounded
// page, newest records first by default, name the next page in a header,
// and encode their elements one at a time into the answer, so a long
// listing is never held whole.

import (
	"encoding/json"
	"io"
	"net/http"
	"strconv"

	"outpost/appliance/httpapi"
	"outpost/appliance/store"
)

// The bounds of a page.
const (
	pageDefault  = 500     // records of a page when the request names no limit
	pageMax      = 5000    // the most a request's limit may ask for
	pageMaxBytes = 2 << 20 // text of one page's records (a page holds at least one)
)

// The headers naming the next page: the cursor to send as before= (the
// mission list: the name to send as after=). Absent on the last page.
const (
	headerNextChanges  = "Outpost-Next-Changes"
	headerNextLogs     = "Outpost-Next-Logs"
	headerNextMissions = "Outpost-Next-Missions"
)

// pageLimit reads limit=, 1 to pageMax (pageDefault when absent).
func pageLimit(r *http.Request) (int, error) {
	v := r.URL.Query().Get("limit")
	if v == "" {
		return pageDefault, nil
	}
	n, err := strconv.Atoi(v)
	if err != nil || n < 1 || n > pageMax {
		return 0, httpapi.BadRequest("limit", "must be a whole number from 1 to %d, not %q", pageMax, httpapi.ClipValue(v))
	}
	return n, nil
}

// readPage reads a page of records: limit= and, when the route pages by
// cursor, before= (a cursor a previous page named).
func readPage(r *http.Request, withCursor bool) (store.Page, error) {
	n, err := pageLimit(r)
	if err != nil {
		return store.Page{}, err
	}
	p := store.Page{Limit: n, MaxBytes: pageMaxBytes}
	if v := r.URL.Query().Get("before"); v != "" && withCursor {
		if p.Before, err = store.ParseCursor(v); err != nil {
			return store.Page{}, httpapi.InField("before", err)
		}
	}
	return p, nil
}

// setNext names the next page in header key when there is one.
func setNext(w http.ResponseWriter, key string, next string) {
	if next != "" {
		w.Header().Set(key, next)
	}
}

// listWriter answers 200 with the §2.13 envelope, writing its data one
// element at a time.
type listWriter struct {
	w    io.Writer
	enc  *json.Encoder
	n    int
	tail string // envelopeListing's
}

// startList writes the status and the envelope up to its data.
func (h *Handler) startList(w http.ResponseWriter, typ string) *listWriter {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(http.StatusOK)
	head, tail := h.envelopeListing(typ)
	io.WriteString(w, head)
	return &listWriter{w: w, enc: json.NewEncoder(w), tail: tail}
}

// add writes one element.
func (l *listWriter) add(v any) {
	if l.n > 0 {
		io.WriteString(l.w, ",")
	}
	l.n++
	l.enc.Encode(v)
}

// end closes the envelope.
func (l *listWriter) end() { io.WriteString(l.w, l.tail) }

// abortList ends an answer that failed after its status was sent: the
// connection is cut, so the client sees a broken answer, never a short
// list that looks whole.
func (h *Handler) abortList(r *http.Request, err error) {
	if r.Context().Err() == nil {
		h.log.Error("listing failed after its answer began; connection cut", "route", r.Pattern, "err", err)
	}
	panic(http.ErrAbortHandler)
}
