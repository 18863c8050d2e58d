package store

// Pages of the long mission listings (change history, log entries): the
// newest records first, a bounded number of them and of their bytes, and a
// cursor to ask for the next, older page. A listing never holds more than
// one page in memory.

import (
	"fmt"
	"strconv"
	"strings"
	"time"

	"outpost/appliance/logx"
)

// Page asks a listing for its newest records older than Before (the zero
// Cursor: the newest of all): at most Limit of them, and no more once
// MaxBytes of their text are read (at least one record; 0: no byte bound).
type Page struct {
	Limit    int
	MaxBytes int
	Before   Cursor
}

// Cursor is where a page ended: the time (unix ms) and id of its oldest
// record. The next page is the records before it.
type Cursor struct {
	At int64
	ID string
}

// IsZero reports whether c is no cursor: the newest end of a listing.
func (c Cursor) IsZero() bool { return c == Cursor{} }

// String is the cursor as clients pass it back (before=).
func (c Cursor) String() string {
	if c.IsZero() {
		return ""
	}
	return strconv.FormatInt(c.At, 10) + "_" + c.ID
}

// ParseCursor reads a cursor String wrote.
func ParseCursor(s string) (Cursor, error) {
	at, id, ok := strings.Cut(s, "_")
	n, err := strconv.ParseInt(at, 10, 64)
	if !ok || err != nil || id == "" || len(id) > 64 {
		return Cursor{}, fmt.Errorf("%w: %q is not a cursor this server gave", ErrInvalid, logx.Cut(s, 64))
	}
	return Cursor{At: n, ID: id}, nil
}

// below is the cursor a query compares with: records strictly before it.
func (p Page) below() (int64, string) {
	if p.Before.IsZero() {
		return 1 << 62, ""
	}
	return p.Before.At, p.Before.ID
}

// belowID is below for a listing whose records have integer ids (what
// names it in the error): ErrInvalid for a cursor whose id is not one.
func (p Page) belowID(what string) (at, id int64, err error) {
	at, sid := p.below()
	if sid == "" {
		return at, 0, nil
	}
	if id, err = strconv.ParseInt(sid, 10, 64); err != nil {
		return 0, 0, fmt.Errorf("%w: %q is not a cursor of %s", ErrInvalid, p.Before, what)
	}
	return at, id, nil
}

// window is the time window [from, to] in unix ms; a zero time leaves that
// end open.
func window(from, to time.Time) (lo, hi int64) {
	lo, hi = -1<<62, 1<<62
	if !from.IsZero() {
		lo = unixMilli(from)
	}
	if !to.IsZero() {
		hi = unixMilli(to)
	}
	return lo, hi
}

func (p Page) check() error {
	if p.Limit <= 0 || p.MaxBytes < 0 {
		return fmt.Errorf("%w: a page holds at least one record", ErrInvalid)
	}
	return nil
}

// pager decides, record by record from the newest, what a page keeps.
type pager struct {
	p      Page
	n      int
	bytes  int
	more   bool
	oldest Cursor
}

// take reports whether the next record (read newest first), of size bytes
// at cursor c, is in the page; once one is not, none after it is and more
// says older records remain.
func (g *pager) take(c Cursor, size int) bool {
	if g.more {
		return false
	}
	if g.n == g.p.Limit || (g.n > 0 && g.p.MaxBytes > 0 && g.bytes+size > g.p.MaxBytes) {
		g.more = true
		return false
	}
	g.n++
	g.bytes += size
	g.oldest = c
	return true
}

// next is the cursor of the next page; zero when there is none.
func (g *pager) next() Cursor {
	if !g.more {
		return Cursor{}
	}
	return g.oldest
}
