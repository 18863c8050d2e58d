package store

// Online backup. VACUUM INTO writes a consistent, compacted snapshot of the
// database from a read transaction, so it runs beside a live server without
// blocking its writer (WAL). The copy is written under a temporary name in
// the destination's directory, fsynced, and only then given its final name,
// so dest is either absent or a complete database. An existing dest is never
// overwritten.

import (
	"context"
	"crypto/rand"
	"database/sql"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"

	"outpost/appliance/atomicfile"
)

// Backup writes a consistent copy of the open database to dest.
func (s *Store) Backup(ctx context.Context, dest string) error {
	if err := s.check(ctx); err != nil {
		return fmt.Errorf("store: backup: %w", err)
	}
	if err := backupFile(ctx, s.path, dest); err != nil {
		return s.wrapErr("backup", err)
	}
	return nil
}

// BackupFile writes a consistent copy of the database at dbPath to dest. It
// opens the database read-only and applies no migrations, so it works on the
// database of a running server (the `outpost backup` command).
func BackupFile(ctx context.Context, dbPath, dest string) error {
	if err := backupFile(ctx, dbPath, dest); err != nil {
		return fmt.Errorf("store: backup: %w", err)
	}
	return nil
}

func backupFile(ctx context.Context, dbPath, dest string) (err error) {
	if dest == "" {
		return fmt.Errorf("%w: empty destination path", ErrInvalid)
	}
	dest, err = filepath.Abs(dest)
	if err != nil {
		return fmt.Errorf("resolve destination: %w", err)
	}
	if _, err := os.Lstat(dest); err == nil {
		return fmt.Errorf("destination %s: %w", dest, fs.ErrExist)
	} else if !errors.Is(err, fs.ErrNotExist) {
		return fmt.Errorf("destination: %w", err)
	}
	if st, err := os.Stat(dbPath); err != nil {
		return fmt.Errorf("database: %w", err)
	} else if !st.Mode().IsRegular() {
		return fmt.Errorf("%w: database %s is not a regular file", ErrInvalid, dbPath)
	}
	dsn, err := backupDSN(dbPath)
	if err != nil {
		return err
	}
	var rnd [8]byte
	if _, err := rand.Read(rnd[:]); err != nil {
		return fmt.Errorf("temporary name: %w", err)
	}
	dir := filepath.Dir(dest)
	tmp := filepath.Join(dir, "."+filepath.Base(dest)+".tmp-"+hex.EncodeToString(rnd[:]))
	defer func() {
		if err != nil {
			os.Remove(tmp)
		}
	}()

	// The copy holds everything the database does: create it private
	// (VACUUM INTO writes into an existing empty file), whatever the umask.
	f, err := os.OpenFile(tmp, os.O_RDWR|os.O_CREATE|os.O_EXCL, 0o600)
	if err != nil {
		return fmt.Errorf("create backup file: %w", err)
	}
	f.Close()
	db, err := sql.Open("sqlite", dsn)
	if err != nil {
		return fmt.Errorf("open database: %w", err)
	}
	defer db.Close()
	db.SetMaxOpenConns(1)
	if _, err := db.ExecContext(ctx, `VACUUM INTO ?`, tmp); err != nil {
		return fmt.Errorf("copy database: %w", err)
	}
	if err := db.Close(); err != nil {
		return fmt.Errorf("close database: %w", err)
	}
	// The copy holds what the database holds (password hashes, tokens):
	// private to its owner, whatever the umask.
	if err := os.Chmod(tmp, 0o600); err != nil {
		return fmt.Errorf("backup permissions: %w", err)
	}
	if err := syncFile(tmp); err != nil {
		return err
	}
	if err := publish(tmp, dest); err != nil {
		return err
	}
	atomicfile.SyncDir(dir)
	return nil
}

// publish gives tmp the name dest without ever replacing an existing dest:
// a hard link fails if dest exists. Where hard links are not supported
// (FAT/exFAT USB sticks) it falls back to a checked rename.
func publish(tmp, dest string) error {
	err := os.Link(tmp, dest)
	if err == nil {
		return os.Remove(tmp)
	}
	if errors.Is(err, fs.ErrExist) {
		return fmt.Errorf("destination %s: %w", dest, fs.ErrExist)
	}
	if _, serr := os.Lstat(dest); serr == nil {
		return fmt.Errorf("destination %s: %w", dest, fs.ErrExist)
	}
	if err := os.Rename(tmp, dest); err != nil {
		return fmt.Errorf("rename backup into place: %w", err)
	}
	return nil
}

func syncFile(name string) error {
	f, err := os.OpenFile(name, os.O_RDWR, 0)
	if err != nil {
		return fmt.Errorf("sync backup: %w", err)
	}
	if err := f.Sync(); err != nil {
		f.Close()
		return fmt.Errorf("sync backup: %w", err)
	}
	return f.Close()
}
