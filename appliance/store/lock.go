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
