package store

import (
	"errors"
	"syscall"

	"outpost/appliance/diskspace"
	"outpost/appliance/fault"

	"modernc.org/sqlite"
	sqlite3 "modernc.org/sqlite/lib"
)

// Sentinel errors. Every error returned by this package that means one of
// these wraps it, so callers map them with errors.Is, and the HTTP edge
// answers them by their kind (fault; httpapi.Fail).
var (
	// ErrNotFound: no such record (or the blob is still pending).
	ErrNotFound error = fault.New(fault.NotFound, "store: not found")
	// ErrConflict: a unique value (user name, token, package uid) is taken,
	// or a blob is still referenced.
	ErrConflict error = fault.New(fault.Conflict, "store: conflict")
	// ErrInvalid: the input breaks a documented limit; nothing was changed.
	ErrInvalid error = fault.New(fault.Invalid, "store: invalid input")
	// ErrTooLarge: a blob grew past Options.MaxBlobSize; it was aborted.
	ErrTooLarge error = fault.New(fault.TooLarge, "store: blob too large")
	// ErrOverBudget: the change would take a mission past one of its
	// budgets (missions_budget.go); nothing was changed.
	ErrOverBudget error = fault.New(fault.TooLarge, "store: over budget")
	// ErrHashMismatch: uploaded content does not have the announced SHA-256.
	ErrHashMismatch error = fault.New(fault.Invalid, "store: content hash mismatch")
	// ErrBadCredentials: unknown user or wrong password (deliberately the
	// same error for both).
	ErrBadCredentials error = fault.New(fault.BadCredentials, "store: bad credentials")
	// ErrBusy: too many password checks right now (passwordgate.go); the
	// caller may try again shortly.
	ErrBusy error = fault.New(fault.Busy, "store: busy")
	// ErrForbidden: the caller's mission role does not allow the change
	// (missions.go); nothing was changed.
	ErrForbidden error = fault.New(fault.Forbidden, "store: forbidden")
	// ErrNoSpace: the disk is below its hard floor (diskspace), or SQLite
	// found it full; nothing was stored. The same error as
	// diskspace.ErrNoSpace.
	ErrNoSpace = diskspace.ErrNoSpace
	// ErrClosed: the store, blob writer or history writer is closed.
	ErrClosed = errors.New("store: closed")
	// ErrSchemaTooNew: the database was migrated by a newer Outpost.
	ErrSchemaTooNew = errors.New("store: database schema is newer than this program")
)

// isDiskFull reports whether err is ErrNoSpace, SQLite's "database or disk
// is full" (SQLITE_FULL: a write of the database, its WAL or a temporary
// file was refused with ENOSPC), its "disk I/O error" of a -shm file it
// could not extend (SQLITE_IOERR_SHMSIZE: the space of a new -shm is
// allocated by writing it), or a write the system refused with ENOSPC.
func isDiskFull(err error) bool {
	if errors.Is(err, ErrNoSpace) {
		return true
	}
	var se *sqlite.Error
	if errors.As(err, &se) && (se.Code()&0xff == sqlite3.SQLITE_FULL || se.Code() == sqlite3.SQLITE_IOERR_SHMSIZE) {
		return true
	}
	return errors.Is(err, syscall.ENOSPC)
}

// isForeignKeyViolation reports whether err is SQLite's FOREIGN KEY
// constraint failure.
func isForeignKeyViolation(err error) bool {
	var se *sqlite.Error
	return errors.As(err, &se) && se.Code() == sqlite3.SQLITE_CONSTRAINT_FOREIGNKEY
}

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
