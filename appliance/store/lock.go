package store

// The primary lock. Orphan sweeping at Open deletes every pending blob, which
// is only safe when no other process is writing one: `outpost token` or
// `outpost backup` may open the database of a running appliance
// (architecture.md "Conventions"). The first Store to open a database takes a
// non-blocking exclusive OS lock on "<db>.lock" and keeps it until Close;
// only the holder sweeps. The OS drops the lock when a process dies, so
// after a crash the next Open sweeps.

import (
	"fmt"
	"os"
	"path/filepath"
)

// primaryLock is a held lock file; nil when another process holds it.
type primaryLock struct {
	f *os.File
}

// tryPrimaryLock opens (creating) the lock file and tries to lock it without
// waiting. It returns nil, nil when another holder has it.
func tryPrimaryLock(dbPath string) (*primaryLock, error) {
	f, err := os.OpenFile(dbPath+".lock", os.O_RDWR|os.O_CREATE, 0o600)
	if err != nil {
		return nil, fmt.Errorf("store: open lock file: %w", err)
	}
	ok, err := lockFile(f)
	if err != nil {
		f.Close()
		return nil, fmt.Errorf("store: lock %s: %w", f.Name(), err)
	}
	if !ok {
		f.Close()
		return nil, nil
	}
	return &primaryLock{f: f}, nil
}

// release unlocks and closes the lock file; it is safe on nil.
func (l *primaryLock) release() {
	if l == nil {
		return
	}
	unlockFile(l.f)
	l.f.Close()
}

// WhileStopped runs fn holding the primary lock of the database at dbPath,
// so that no server can open it meanwhile; it returns ErrInUse, without
// running fn, while a server (or another command) has it open. Commands
// that change what a server reads only at start (`outpost ca import`) use
// it.
func WhileStopped(dbPath string, fn func() error) error {
	lock, err := tryPrimaryLock(dbPath)
	if err != nil {
		return err
	}
	if lock == nil {
		return fmt.Errorf("%w: stop it first", ErrInUse)
	}
	defer lock.release()
	matchOwner(filepath.Dir(dbPath), dbPath+".lock")
	return fn()
}

// MatchOwner gives files the owner of dir when this process runs as root
// (`sudo outpost ca import` must leave files the service user can read);
// elsewhere it does nothing.
func MatchOwner(dir string, files ...string) error { return matchOwner(dir, files...) }
