package store

import (
	"errors"
	"strings"

	"modernc.org/sqlite"
	sqlite3 "modernc.org/sqlite/lib"
)

// Sentinel errors. Every error returned by this package that means one of
// these wraps it, so callers (the HTTP edge) map them with errors.Is.
var (
	// ErrNotFound: no such record (or the blob is still pending).
	ErrNotFound = errors.New("store: not found")
	// ErrConflict: a unique value (user name, token, package uid) is taken,
	// or a blob is still referenced.
	ErrConflict = errors.New("store: conflict")
	// ErrInvalid: the input breaks a documented limit; nothing was changed.
	ErrInvalid = errors.New("store: invalid input")
	// ErrTooLarge: a blob grew past Options.MaxBlobSize; it was aborted.
	ErrTooLarge = errors.New("store: blob too large")
	// ErrHashMismatch: uploaded content does not have the announced SHA-256.
	ErrHashMismatch = errors.New("store: content hash mismatch")
	// ErrBadCredentials: unknown user or wrong password (deliberately the
	// same error for both).
	ErrBadCredentials = errors.New("store: bad credentials")
	// ErrBusy: too many password checks right now (passwordgate.go); the
	// caller may try again shortly.
	ErrBusy = errors.New("store: busy")
	// ErrForbidden: the caller's mission role does not allow the change
	// (missions.go); nothing was changed.
	ErrForbidden = errors.New("store: forbidden")
	// ErrClosed: the store, blob writer or history writer is closed.
	ErrClosed = errors.New("store: closed")
	// ErrSchemaTooNew: the database was migrated by a newer Outpost.
	ErrSchemaTooNew = errors.New("store: database schema is newer than this program")
)

// isUniqueViolation reports whether err is SQLite's UNIQUE or PRIMARY KEY
// constraint failure (extended result codes are on for every connection).
func isUniqueViolation(err error) bool {
	var se *sqlite.Error
	if !errors.As(err, &se) {
		return false
	}
	switch se.Code() {
	case sqlite3.SQLITE_CONSTRAINT_UNIQUE, sqlite3.SQLITE_CONSTRAINT_PRIMARYKEY:
		return true
	}
	return false
}

// Detail is the part of an error after its sentinel's text: the reason a
// client may be shown ("password must be 1 to 256 bytes"), never the
// internal context before it. Without one, it is the sentinel's own words.
func Detail(err, sentinel error) string {
	s := err.Error()
	if i := strings.LastIndex(s, sentinel.Error()+": "); i >= 0 {
		return s[i+len(sentinel.Error())+2:]
	}
	return strings.TrimPrefix(sentinel.Error(), "store: ")
}
