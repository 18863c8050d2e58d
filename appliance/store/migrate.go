package store

// Schema migrations: numbered files migrations/NNNN_name.sql embedded in
// the binary, applied in order, each in its own transaction together with
// its row in schema_migrations. Applying is idempotent (a reopened database
// applies nothing), safe against a second process migrating at the same
// time (the version is re-read inside the IMMEDIATE transaction), and a
// database migrated by a newer binary is refused with ErrSchemaTooNew.
// Migrations are never edited once released; a change is a new file.

import (
	"context"
	"database/sql"
	"embed"
	"fmt"
	"io/fs"
	"path"
	"sort"
	"strconv"
	"strings"
	"time"
)

//go:embed migrations/*.sql
var migrationFS embed.FS

type migration struct {
	version int
	name    string // file name
	sql     string
}

// loadMigrations reads and checks the embedded files: names NNNN_*.sql,
// versions 1..n without gaps or duplicates.
func loadMigrations(fsys fs.FS) ([]migration, error) {
	names, err := fs.Glob(fsys, "migrations/*.sql")
	if err != nil {
		return nil, fmt.Errorf("store: list migrations: %w", err)
	}
	var ms []migration
	for _, n := range names {
		base := path.Base(n)
		num, _, ok := strings.Cut(base, "_")
		v, err := strconv.Atoi(num)
		if !ok || err != nil || len(num) != 4 || v <= 0 {
			return nil, fmt.Errorf("store: migration %q: name must be NNNN_description.sql", base)
		}
		body, err := fs.ReadFile(fsys, n)
		if err != nil {
			return nil, fmt.Errorf("store: read migration %s: %w", base, err)
		}
		ms = append(ms, migration{version: v, name: base, sql: string(body)})
	}
	sort.Slice(ms, func(i, j int) bool { return ms[i].version < ms[j].version })
	for i, m := range ms {
		if m.version != i+1 {
			return nil, fmt.Errorf("store: migration %s: expected version %d (versions must be 1..n without gaps)", m.name, i+1)
		}
	}
	return ms, nil
}

// migrate brings the database at db (the writer) up to the newest embedded
// version.
func migrate(ctx context.Context, db *sql.DB, ms []migration) (applied int, err error) {
	if _, err := db.ExecContext(ctx, `CREATE TABLE IF NOT EXISTS schema_migrations (
		version    INTEGER PRIMARY KEY,
		name       TEXT    NOT NULL,
		applied_at INTEGER NOT NULL)`); err != nil {
		return 0, fmt.Errorf("store: create schema_migrations: %w", err)
	}
	latest := len(ms)
	current, err := schemaVersion(ctx, db)
	if err != nil {
		return 0, err
	}
	if current > latest {
		return 0, fmt.Errorf("%w: database is at version %d, this program knows up to %d; use a newer Outpost or restore a backup",
			ErrSchemaTooNew, current, latest)
	}
	for _, m := range ms[current:] {
		done, err := applyMigration(ctx, db, m, latest)
		if err != nil {
			return applied, err
		}
		if done {
			applied++
		}
	}
	return applied, nil
}

func schemaVersion(ctx context.Context, q interface {
	QueryRowContext(context.Context, string, ...any) *sql.Row
}) (int, error) {
	var v int
	if err := q.QueryRowContext(ctx, `SELECT COALESCE(MAX(version), 0) FROM schema_migrations`).Scan(&v); err != nil {
		return 0, fmt.Errorf("store: read schema version: %w", err)
	}
	return v, nil
}

// applyMigration runs one migration and records it in one transaction. It
// reports false when another process applied it first.
func applyMigration(ctx context.Context, db *sql.DB, m migration, latest int) (bool, error) {
	tx, err := db.BeginTx(ctx, nil)
	if err != nil {
		return false, fmt.Errorf("store: migration %s: begin: %w", m.name, err)
	}
	defer tx.Rollback()
	cur, err := schemaVersion(ctx, tx)
	if err != nil {
		return false, err
	}
	if cur > latest {
		return false, fmt.Errorf("%w: database is at version %d, this program knows up to %d", ErrSchemaTooNew, cur, latest)
	}
	if cur >= m.version {
		return false, nil
	}
	if _, err := tx.ExecContext(ctx, m.sql); err != nil {
		return false, fmt.Errorf("store: migration %s: %w", m.name, err)
	}
	if _, err := tx.ExecContext(ctx, `INSERT INTO schema_migrations(version, name, applied_at) VALUES (?, ?, ?)`,
		m.version, m.name, time.Now().UnixMilli()); err != nil {
		return false, fmt.Errorf("store: migration %s: record: %w", m.name, err)
	}
	if err := tx.Commit(); err != nil {
		return false, fmt.Errorf("store: migration %s: commit: %w", m.name, err)
	}
	return true, nil
}
