package store

import (
	"context"
	"database/sql"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"sort"
	"strconv"
	"strings"
	"testing"
)

// restoreFixture is a data directory with a closed database holding user
// "current", and a backup of an earlier state holding user "backed-up".
type restoreFixture struct {
	dir, db, backup string
}

func newRestoreFixture(t *testing.T) restoreFixture {
	t.Helper()
	ctx := context.Background()
	f := restoreFixture{dir: t.TempDir()}
	f.db = filepath.Join(f.dir, "outpost.db")
	f.backup = filepath.Join(t.TempDir(), "backup.db")
	s := openAt(t, f.db, Options{})
	u, err := s.Accounts().CreateUser(ctx, UserInput{Name: "backed-up", Password: "pw"})
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Backup(ctx, f.backup); err != nil {
		t.Fatal(err)
	}
	if err := s.Accounts().DeleteUser(ctx, u.UID); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Accounts().CreateUser(ctx, UserInput{Name: "current", Password: "pw"}); err != nil {
		t.Fatal(err)
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	return f
}

// users lists the user names of the database at path.
func users(t *testing.T, path string) []string {
	t.Helper()
	s := openAt(t, path, Options{})
	defer s.Close()
	list, err := s.Accounts().Users(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, u := range list {
		names = append(names, u.Name)
	}
	sort.Strings(names)
	return names
}

func dirNames(t *testing.T, dir string) []string {
	t.Helper()
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, e := range entries {
		names = append(names, e.Name())
	}
	return names
}

func TestRestore(t *testing.T) {
	f := newRestoreFixture(t)
	info, err := RestoreFile(context.Background(), f.db, f.backup)
	if err != nil {
		t.Fatal(err)
	}
	ms, _ := loadMigrations(migrationFS)
	if info.SchemaVersion != len(ms) || info.Bytes == 0 {
		t.Fatalf("info %+v", info)
	}
	if !strings.HasPrefix(info.Aside, f.db+".before-restore-") {
		t.Fatalf("aside %q", info.Aside)
	}
	if got := users(t, f.db); strings.Join(got, ",") != "backed-up" {
		t.Fatalf("restored database has users %v, want the backup's", got)
	}
	if got := users(t, info.Aside); strings.Join(got, ",") != "current" {
		t.Fatalf("the database kept aside has users %v, want the old ones", got)
	}
	if st, _ := os.Stat(f.db); st.Mode().Perm() != 0o600 {
		t.Fatalf("restored file mode %v, want 0600", st.Mode().Perm())
	}
	for _, n := range dirNames(t, f.dir) {
		if strings.Contains(n, ".restore-") {
			t.Fatalf("temporary copy %s left behind", n)
		}
	}
}

// TestBackupIsPrivate: a backup holds password hashes and tokens.
func TestBackupIsPrivate(t *testing.T) {
	f := newRestoreFixture(t)
	st, err := os.Stat(f.backup)
	if err != nil {
		t.Fatal(err)
	}
	if runtime.GOOS != "windows" && st.Mode().Perm() != 0o600 {
		t.Fatalf("backup mode %v, want 0600", st.Mode().Perm())
	}
}

func TestRestoreIntoEmptyDirectory(t *testing.T) {
	f := newRestoreFixture(t)
	db := filepath.Join(t.TempDir(), "new", "outpost.db")
	info, err := RestoreFile(context.Background(), db, f.backup)
	if err != nil {
		t.Fatal(err)
	}
	if info.Aside != "" {
		t.Fatalf("nothing to keep aside, got %q", info.Aside)
	}
	if got := users(t, db); strings.Join(got, ",") != "backed-up" {
		t.Fatalf("users %v", got)
	}
}

// TestRestoreRefusedWhileOpen: a running server holds the primary lock.
func TestRestoreRefusedWhileOpen(t *testing.T) {
	f := newRestoreFixture(t)
	s := openAt(t, f.db, Options{})
	_, err := RestoreFile(context.Background(), f.db, f.backup)
	if !errors.Is(err, ErrInUse) {
		t.Fatalf("got %v, want ErrInUse", err)
	}
	s.Close()
	if got := users(t, f.db); strings.Join(got, ",") != "current" {
		t.Fatalf("a refused restore changed the database: %v", got)
	}
}

// sqliteFile creates a database at a new path and runs stmts in it.
func sqliteFile(t *testing.T, stmts ...string) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "src.db")
	dsn, err := buildDSN(path, nil)
	if err != nil {
		t.Fatal(err)
	}
	db, err := sql.Open("sqlite", dsn)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	for _, s := range stmts {
		if _, err := db.Exec(s); err != nil {
			t.Fatalf("%s: %v", s, err)
		}
	}
	return path
}

// modifiedBackup is a copy of the fixture's backup with stmts applied.
func modifiedBackup(t *testing.T, f restoreFixture, stmts ...string) string {
	t.Helper()
	b, err := os.ReadFile(f.backup)
	if err != nil {
		t.Fatal(err)
	}
	path := sqliteFile(t)
	if err := os.WriteFile(path, b, 0o600); err != nil {
		t.Fatal(err)
	}
	dsn, _ := buildDSN(path, nil)
	db, err := sql.Open("sqlite", dsn)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	for _, s := range stmts {
		if _, err := db.Exec(s); err != nil {
			t.Fatalf("%s: %v", s, err)
		}
	}
	return path
}

// corrupted is a copy of a database with many rows whose middle pages are
// overwritten with garbage.
func corrupted(t *testing.T) string {
	t.Helper()
	path := sqliteFile(t, `CREATE TABLE filler(id INTEGER PRIMARY KEY, v TEXT)`,
		`WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i+1 FROM n WHERE i < 2000)
		 INSERT INTO filler SELECT i, printf('%0200d', i) FROM n`,
		`CREATE INDEX filler_v ON filler(v)`)
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	for i := len(b) / 2; i < len(b)/2+8192 && i < len(b); i++ {
		b[i] = byte(i * 7)
	}
	if err := os.WriteFile(path, b, 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}

func TestRestoreRejects(t *testing.T) {
	f0 := newRestoreFixture(t)
	ms, _ := loadMigrations(migrationFS)
	notSQLite := filepath.Join(t.TempDir(), "notes.txt")
	os.WriteFile(notSQLite, []byte(strings.Repeat("not a database\n", 500)), 0o600)
	empty := filepath.Join(t.TempDir(), "empty.db")
	os.WriteFile(empty, nil, 0o600)
	live := filepath.Join(t.TempDir(), "live.db")
	ls := openAt(t, live, Options{})
	_ = ls // open: its -wal exists beside it

	for _, tc := range []struct {
		name string
		src  string
		want error
		msg  string
	}{
		{"missing file", filepath.Join(t.TempDir(), "nope.db"), fs.ErrNotExist, "source"},
		{"a directory", t.TempDir(), ErrInvalid, "not a regular file"},
		{"not SQLite", notSQLite, ErrInvalid, "not a readable SQLite database"},
		{"empty file", empty, ErrInvalid, "not an Outpost database"},
		{"another application's database", sqliteFile(t, `CREATE TABLE notes(t TEXT)`), ErrInvalid, "no schema_migrations table"},
		{"foreign schema_migrations", sqliteFile(t, `CREATE TABLE schema_migrations(version INTEGER PRIMARY KEY, name TEXT, applied_at INTEGER)`,
			`INSERT INTO schema_migrations VALUES (1, '0001_init.sql', 0)`), ErrInvalid, `migration 1 is "0001_init.sql"`},
		{"newer schema", modifiedBackup(t, f0, `INSERT INTO schema_migrations VALUES (`+strconv.Itoa(len(ms)+1)+`, '9999_future.sql', 0)`), ErrSchemaTooNew, "use a newer Outpost"},
		{"corrupted", corrupted(t), ErrInvalid, "integrity check failed"},
		{"a live database with its WAL", live, ErrInvalid, "-wal"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f := newRestoreFixture(t)
			before, _ := os.ReadFile(f.db)
			names := dirNames(t, f.dir) // the database, its lock, and the -wal and -shm its close kept
			_, err := RestoreFile(context.Background(), f.db, tc.src)
			t.Logf("refused: %v", err)
			if !errors.Is(err, tc.want) || !strings.Contains(err.Error(), tc.msg) {
				t.Fatalf("got %v, want %v containing %q", err, tc.want, tc.msg)
			}
			after, _ := os.ReadFile(f.db)
			if string(before) != string(after) {
				t.Fatal("a rejected restore changed the database")
			}
			for _, n := range dirNames(t, f.dir) {
				if !slices.Contains(names, n) {
					t.Errorf("a rejected restore left %s behind", n)
				}
			}
		})
	}
}
