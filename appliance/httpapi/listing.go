package httpapi

// Listings written as their rows are read (RELIABILITY.md "Budgets"): a
// route that lists a table a client can grow never holds the whole table,
// only the row at hand, and clients that send no paging parameters still
// get everything.

import (
	"encoding/json"
	"net/http"
)

// Listing is a 200 answer written item by item: head (`{"json_list":[`),
// the items, tail (`]}`). Nothing is written before the first item or
// Finish, so a listing that fails before its first row is still answered
// with its error's status.
type Listing struct {
	w           http.ResponseWriter
	r           *http.Request
	contentType string
	head, tail  string
	enc         *json.Encoder
	n           int // items written
	started     bool
	writeErr    error // the first failed write: the client went away
}

// Write writes b to the answer, keeping the first error (the listing's
// JSON encoder writes through it).
func (l *Listing) Write(b []byte) (int, error) {
	if l.writeErr != nil {
		return 0, l.writeErr
	}
	n, err := l.w.Write(b)
	if err != nil {
		l.writeErr = err
	}
	return n, err
}

// NewListing starts a listing of r answered in w.
func NewListing(w http.ResponseWriter, r *http.Request, contentType, head, tail string) *Listing {
	return &Listing{w: w, r: r, contentType: contentType, head: head, tail: tail}
}

func (l *Listing) start() error {
	if l.started {
		return nil
	}
	l.started = true
	l.w.Header().Set("Content-Type", l.contentType)
	l.w.WriteHeader(http.StatusOK)
	_, err := l.Write([]byte(l.head))
	return err
}

// sep starts the listing if needed and separates an item from the one
// before it.
func (l *Listing) sep(comma bool) error {
	if err := l.start(); err != nil {
		return err
	}
	l.n++
	if comma && l.n > 1 {
		_, err := l.Write([]byte{','})
		return err
	}
	return nil
}

// Item writes v as the next JSON element of an array.
func (l *Listing) Item(v any) error {
	if err := l.sep(true); err != nil {
		return err
	}
	return l.encoder().Encode(v)
}

// Entry writes the next member of a JSON object: key and v.
func (l *Listing) Entry(key string, v any) error {
	if err := l.sep(true); err != nil {
		return err
	}
	enc := l.encoder()
	if err := enc.Encode(key); err != nil {
		return err
	}
	if _, err := l.Write([]byte{':'}); err != nil {
		return err
	}
	return enc.Encode(v)
}

// Raw writes b as the next item, without a separator (XML elements).
func (l *Listing) Raw(b []byte) error {
	if err := l.sep(false); err != nil {
		return err
	}
	_, err := l.Write(b)
	return err
}

// SetTail changes what ends the listing (a tail that depends on the
// items, such as their count).
func (l *Listing) SetTail(tail string) { l.tail = tail }

// Count is how many items were written.
func (l *Listing) Count() int { return l.n }

func (l *Listing) encoder() *json.Encoder {
	if l.enc == nil {
		l.enc = json.NewEncoder(l)
	}
	return l.enc
}

// Finish ends the listing with err, the listing's result. nil: the tail
// is written (after the head when there was no item). An error before any
// item is answered with Fail and internalMsg. An error after items were
// sent cannot change the status any more: it is logged and the connection
// is cut, so the client sees a broken body, never a complete-looking part
// of the list. A client that went away (a write failed) is not an error
// of ours.
func (l *Listing) Finish(err error, internalMsg string) {
	if err == nil {
		if l.start() == nil {
			l.Write([]byte(l.tail))
		}
		return
	}
	switch {
	case !l.started:
		Fail(l.w, l.r, err, internalMsg)
		return
	case l.writeErr != nil || l.r.Context().Err() != nil:
		loggerOf(l.r).Debug("listing abandoned: the client went away", "method", l.r.Method, "route", route(l.r), "err", err)
		return
	default:
		loggerOf(l.r).Error("a listing failed after it had begun; the answer is cut off", "method", l.r.Method,
			"route", route(l.r), "items", l.n, "err", err)
	}
	panic(http.ErrAbortHandler)
}
