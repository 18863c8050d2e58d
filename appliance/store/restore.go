package store

// Restore. A database is replaced only while no server has it open (the
// primary lock, lock.go), and only by a copy that has already been checked:
// the source is copied next to the database under a temporary name,
// fsynced, and that copy — the exact bytes that will be used — must pass
// PRAGMA integrity_check and foreign_key_check and carry our
// schema_migrations with names matching ours and a version this program
// knows. The current database is checkpointed and kept aside under a new
// name (never deleted); then the copy takes its place. At every moment the
// database path holds either the old database or the checked new one.

import (
	"context"
	"crypto/rand"
	"database/sql"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"time"

	"outpost/appliance/atomicfile"
)

// ErrInUse: the database is open in a running server (it holds the
// primary lock); stop the server first.
var ErrInUse = errors.New("store: the database is in use by a running Outpost")

// RestoreInfo describes a finished restore.
type RestoreInfo struct {
	// Aside is where the previous database was kept ("" when there was none).
	Aside string
	// SchemaVersion is the restored database's schema version; the server
	// applies newer migrations when it next starts.
	SchemaVersion int
	// Bytes is the size of the restored file.
	Bytes int64
}

// RestoreFile replaces the database at dbPath with a checked copy of src
// (normally a file written by Backup or BackupFile).
func RestoreFile(ctx context.Context, dbPath, src string) (info RestoreInfo, err error) {
	if dbPath == "" || src == "" {
		return info, fmt.Errorf("store: restore: %w: empty path", ErrInvalid)
	}
	st, err := os.Stat(src)
	if err != nil {
		return info, fmt.Errorf("store: restore: source: %w", err)
	}
	if !st.Mode().IsRegular() {
		return info, fmt.Errorf("store: restore: %w: %s is not a regular file", ErrInvalid, src)
	}
	// An empty -wal is what a closed database keeps (keepWALFiles): its
	// file is whole.
	if st, err := os.Stat(src + "-wal"); err == nil && st.Size() > 0 {
		return info, fmt.Errorf("store: restore: %w: %s has a -wal file beside it (a live database, not a backup): restore from `outpost backup` output", ErrInvalid, src)
	}
	dir := filepath.Dir(dbPath)
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return info, fmt.Errorf("store: restore: data directory: %w", err)
	}
	lock, err := tryPrimaryLock(dbPath)
	if err != nil {
		return info, fmt.Errorf("store: restore: %w", err)
	}
	if lock == nil {
		return info, fmt.Errorf("store: restore: %w: stop it first", ErrInUse)
	}
	defer lock.release()
	matchOwner(dir, dbPath+".lock") // a lock file created by root must stay usable by the service

	var rnd [8]byte
	if _, err := rand.Read(rnd[:]); err != nil {
		return info, fmt.Errorf("store: restore: temporary name: %w", err)
	}
	tmp := filepath.Join(dir, "."+filepath.Base(dbPath)+".restore-"+hex.EncodeToString(rnd[:]))
	defer func() {
		if err != nil {
			removeDB(tmp)
		}
	}()
	if info.Bytes, err = copyFile(src, tmp); err != nil {
		return info, fmt.Errorf("store: restore: copy %s: %w", src, err)
	}
	if info.SchemaVersion, err = checkRestorable(ctx, tmp); err != nil {
		return info, fmt.Errorf("store: restore: %s: %w", src, err)
	}
	if _, err := os.Stat(dbPath); err == nil {
		info.Aside, err = moveAside(ctx, dbPath)
		if err != nil {
			return info, fmt.Errorf("store: restore: %w", err)
		}
	} else if !errors.Is(err, fs.ErrNotExist) {
		return info, fmt.Errorf("store: restore: %w", err)
	}
	if err := os.Rename(tmp, dbPath); err != nil {
		if info.Aside != "" {
			os.Rename(info.Aside, dbPath)
		}
		return info, fmt.Errorf("store: restore: put the copy in place: %w", err)
	}
	atomicfile.SyncDir(dir)
	if err := matchOwner(dir, dbPath, dbPath+".lock"); err != nil {
		return info, fmt.Errorf("store: restore: %w", err)
	}
	return info, nil
}

// copyFile copies src to a new file dst (0600) and fsyncs it.
func copyFile(src, dst string) (int64, error) {
	in, err := os.Open(src)
	if err != nil {
		return 0, err
	}
	defer in.Close()
	out, err := os.OpenFile(dst, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
	if err != nil {
		return 0, err
	}
	n, err := io.Copy(out, in)
	if err == nil {
		err = out.Sync()
	}
	if cerr := out.Close(); err == nil {
		err = cerr
	}
	return n, err
}

// checkRestorable opens the copy and checks it is a sound Outpost database
// this program can run; it returns its schema version.
func checkRestorable(ctx context.Context, path string) (int, error) {
	dsn, err := buildDSN(path, []string{"busy_timeout(5000)"})
	if err != nil {
		return 0, err
	}
	db, err := sql.Open("sqlite", dsn)
	if err != nil {
		return 0, err
	}
	defer db.Close()
	db.SetMaxOpenConns(1)
	var problems []string
	rows, err := db.QueryContext(ctx, `PRAGMA integrity_check`)
	if err != nil {
		return 0, fmt.Errorf("%w: not a readable SQLite database: %w", ErrInvalid, err)
	}
	for rows.Next() {
		var s string
		if err := rows.Scan(&s); err != nil {
			rows.Close()
			return 0, err
		}
		s = strings.TrimSpace(strings.TrimPrefix(s, "*** in database main ***"))
		if s != "ok" && s != "" && len(problems) < 5 {
			problems = append(problems, s)
		}
	}
	if err := rows.Close(); err != nil {
		return 0, fmt.Errorf("%w: integrity check failed: %w", ErrInvalid, err)
	}
	if err := rows.Err(); err != nil {
		return 0, fmt.Errorf("%w: integrity check failed: %w", ErrInvalid, err)
	}
	if len(problems) > 0 {
		return 0, fmt.Errorf("%w: integrity check failed: %s", ErrInvalid, strings.Join(problems, "; "))
	}
	var fk int
	if err := db.QueryRowContext(ctx, `SELECT COUNT(*) FROM pragma_foreign_key_check`).Scan(&fk); err != nil {
		return 0, fmt.Errorf("%w: foreign key check: %w", ErrInvalid, err)
	}
	if fk > 0 {
		return 0, fmt.Errorf("%w: %d rows break foreign keys", ErrInvalid, fk)
	}
	return checkSchema(ctx, db)
}

// checkSchema verifies schema_migrations against the embedded migrations:
// same names for every applied version, and no version beyond ours.
func checkSchema(ctx context.Context, db *sql.DB) (int, error) {
	ms, err := loadMigrations(migrationFS)
	if err != nil {
		return 0, err
	}
	var n int
	if err := db.QueryRowContext(ctx, `SELECT COUNT(*) FROM sqlite_master WHERE type = 'table' AND name = 'schema_migrations'`).Scan(&n); err != nil {
		return 0, err
	}
	if n == 0 {
		return 0, fmt.Errorf("%w: not an Outpost database (no schema_migrations table)", ErrInvalid)
	}
	rows, err := db.QueryContext(ctx, `SELECT version, name FROM schema_migrations ORDER BY version`)
	if err != nil {
		return 0, fmt.Errorf("%w: not an Outpost database: %w", ErrInvalid, err)
	}
	defer rows.Close()
	version := 0
	for rows.Next() {
		var v int
		var name string
		if err := rows.Scan(&v, &name); err != nil {
			return 0, fmt.Errorf("%w: not an Outpost database: %w", ErrInvalid, err)
		}
		if v != version+1 {
			return 0, fmt.Errorf("%w: not an Outpost database (schema versions jump from %d to %d)", ErrInvalid, version, v)
		}
		if v > len(ms) {
			return 0, fmt.Errorf("%w: database is at version %d, this program knows up to %d; use a newer Outpost", ErrSchemaTooNew, v, len(ms))
		}
		if ms[v-1].name != name {
			return 0, fmt.Errorf("%w: not an Outpost database (migration %d is %q, ours is %q)", ErrInvalid, v, name, ms[v-1].name)
		}
		version = v
	}
	if err := rows.Err(); err != nil {
		return 0, err
	}
	if version == 0 {
		return 0, fmt.Errorf("%w: not an Outpost database (no migrations applied)", ErrInvalid)
	}
	return version, nil
}

// moveAside checkpoints the database at dbPath (so its WAL is empty) and
// renames it, with any -wal and -shm files, to a name of its own. The -wal
// goes first: a WAL left under the old name would be replayed into the
// restored file.
func moveAside(ctx context.Context, dbPath string) (string, error) {
	if dsn, err := buildDSN(dbPath, []string{"busy_timeout(5000)"}); err == nil {
		if db, err := sql.Open("sqlite", dsn); err == nil {
			db.ExecContext(ctx, `PRAGMA wal_checkpoint(TRUNCATE)`) // best effort: a damaged database still moves aside
			db.Close()
		}
	}
	aside := dbPath + ".before-restore-" + time.Now().UTC().Format("20060102T150405Z")
	for i := 1; exists(aside); i++ {
		aside = fmt.Sprintf("%s.before-restore-%s-%d", dbPath, time.Now().UTC().Format("20060102T150405Z"), i)
	}
	for _, suffix := range []string{"-wal", "-shm"} {
		if err := os.Rename(dbPath+suffix, aside+suffix); err != nil && !errors.Is(err, fs.ErrNotExist) {
			return "", fmt.Errorf("keep the old database aside: %w", err)
		}
	}
	if err := os.Rename(dbPath, aside); err != nil {
		return "", fmt.Errorf("keep the old database aside: %w", err)
	}
	return aside, nil
}

func exists(p string) bool {
	_, err := os.Lstat(p)
	return err == nil
}

// removeDB removes a database file with its -wal, -shm and -journal files.
func removeDB(path string) {
	for _, suffix := range []string{"", "-wal", "-shm", "-journal"} {
		os.Remove(path + suffix)
	}
}
