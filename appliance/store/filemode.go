package store

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"runtime"
)

// privateFiles makes the database file and its companions readable by the
// owner only, whatever the process umask: the file is created 0600 before
// SQLite opens it (SQLite then gives the -wal and -shm files the database
// file's mode), and an existing file, -wal or -shm with looser modes (made
// by an older version, or copied in) is tightened.
func privateFiles(path string) error {
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE, 0o600)
	if err != nil {
		return fmt.Errorf("store: create %s: %w", path, err)
	}
	f.Close()
	if runtime.GOOS == "windows" {
		return nil // file modes are not Windows' access control
	}
	for _, p := range []string{path, path + "-wal", path + "-shm"} {
		fi, err := os.Stat(p)
		if errors.Is(err, fs.ErrNotExist) {
			continue
		}
		if err != nil {
			return fmt.Errorf("store: %w", err)
		}
		if fi.Mode().Perm()&0o077 != 0 {
			if err := os.Chmod(p, 0o600); err != nil {
				return fmt.Errorf("store: make %s private: %w", p, err)
			}
		}
	}
	return nil
}
