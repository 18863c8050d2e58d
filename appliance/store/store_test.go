package store

import (
	"context"
	"database/sql"
	"errors"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"testing/fstest"

	"outpost/internal/testkit"
)

func TestFileURI(t *testing.T) {
	tests := []struct {
		name    string
		path    string
		windows bool
		want    string
	}{
		{"plain", "/var/lib/outpost/outpost.db", false, "file:///var/lib/outpost/outpost.db"},
		{"space", "/data/my dir/o.db", false, "file:///data/my%20dir/o.db"},
		{"question and hash", "/d/a?b#c.db", false, "file:///d/a%3Fb%23c.db"},
		{"percent and ampersand", "/d/100%&x=y.db", false, "file:///d/100%25%26x%3Dy.db"},
		{"utf-8", "/d/données.db", false, "file:///d/donn%C3%A9es.db"},
		{"windows drive", `C:\ProgramData\Outpost\outpost.db`, true, "file:///C:/ProgramData/Outpost/outpost.db"},
		{"windows drive lower, space", `d:\My Data\o?.db`, true, "file:///d:/My%20Data/o%3F.db"},
		{"windows UNC", `\\server\share\o.db`, true, "file:////server/share/o.db"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := fileURI(tt.path, tt.windows); got != tt.want {
				t.Errorf("fileURI(%q, %v) = %q, want %q", tt.path, tt.windows, got, tt.want)
			}
		})
	}
}

// TestOpenAwkwardPaths opens databases whose paths need escaping and checks
// the file lands exactly at the given path (not at a truncated one).
func TestOpenAwkwardPaths(t *testing.T) {
	names := []string{"plain.db", "with space.db", "q?mark.db", "hash#tag.db", "pct%41.db", "amp&eq=.db", "données.db"}
	if runtime.GOOS == "windows" {
		names = []string{"plain.db", "with space.db", "hash#tag.db", "pct%41.db", "amp&eq=.db", "données.db"}
	}
	for _, name := range names {
		t.Run(name, func(t *testing.T) {
			dir := filepath.Join(t.TempDir(), "sub dir?#")
			if runtime.GOOS == "windows" {
				dir = filepath.Join(t.TempDir(), "sub dir#")
			}
			if err := os.Mkdir(dir, 0o755); err != nil {
				t.Fatal(err)
			}
			path := filepath.Join(dir, name)
			s := openAt(t, path, Options{})
			putBlob(t, s, []byte("hello"))
			if _, err := os.Stat(path); err != nil {
				t.Fatalf("database not at %q: %v", path, err)
			}
			ents, _ := os.ReadDir(dir)
			for _, e := range ents {
				if !strings.HasPrefix(e.Name(), name) {
					t.Errorf("unexpected file %q next to %q", e.Name(), name)
				}
			}
		})
	}
}

func TestOpenPragmas(t *testing.T) {
	s := openTest(t, Options{ReadConns: 3})
	ctx := context.Background()
	want := map[string]string{
		"journal_mode":       "wal",
		"foreign_keys":       "1",
		"busy_timeout":       "5000",
		"synchronous":        "2", // FULL
		"journal_size_limit": "67108864",
	}
	check := func(t *testing.T, c *sql.Conn, queryOnly string) {
		t.Helper()
		for p, v := range want {
			var got string
			if err := c.QueryRowContext(ctx, "PRAGMA "+p).Scan(&got); err != nil {
				t.Fatalf("PRAGMA %s: %v", p, err)
			}
			if got != v {
				t.Errorf("PRAGMA %s = %q, want %q", p, got, v)
			}
		}
		var qo string
		if err := c.QueryRowContext(ctx, "PRAGMA query_only").Scan(&qo); err != nil {
			t.Fatal(err)
		}
		if qo != queryOnly {
			t.Errorf("PRAGMA query_only = %q, want %q", qo, queryOnly)
		}
	}
	t.Run("writer", func(t *testing.T) {
		c, err := s.w.Conn(ctx)
		if err != nil {
			t.Fatal(err)
		}
		defer c.Close()
		check(t, c, "0")
		if st := s.w.Stats(); st.MaxOpenConnections != 1 {
			t.Errorf("writer MaxOpenConnections = %d, want 1", st.MaxOpenConnections)
		}
	})
	t.Run("readers", func(t *testing.T) {
		// Hold all three at once so each is a distinct connection.
		var conns []*sql.Conn
		for range 3 {
			c, err := s.r.Conn(ctx)
			if err != nil {
				t.Fatal(err)
			}
			conns = append(conns, c)
			check(t, c, "1")
			if _, err := c.ExecContext(ctx, `DELETE FROM blobs`); err == nil {
				t.Error("a write on a read-pool connection succeeded")
			}
		}
		for _, c := range conns {
			c.Close()
		}
		if st := s.r.Stats(); st.MaxOpenConnections != 3 {
			t.Errorf("read pool MaxOpenConnections = %d, want 3", st.MaxOpenConnections)
		}
	})
	t.Run("immediate transactions", func(t *testing.T) {
		// An IMMEDIATE transaction takes the write lock at BEGIN: a second
		// connection cannot start writing while it is open.
		tx, err := s.w.BeginTx(ctx, nil)
		if err != nil {
			t.Fatal(err)
		}
		defer tx.Rollback()
		dsn, err := buildDSN(s.path, []string{"busy_timeout(0)"})
		if err != nil {
			t.Fatal(err)
		}
		other, err := sql.Open("sqlite", dsn)
		if err != nil {
			t.Fatal(err)
		}
		defer other.Close()
		_, err = other.ExecContext(ctx, `INSERT INTO blobs(state, chunk_size, created_at) VALUES (0, 1, 0)`)
		if err == nil || !strings.Contains(err.Error(), "locked") {
			t.Errorf("write beside an open writer transaction: err = %v, want database is locked", err)
		}
	})
}

func TestMigrationsIdempotent(t *testing.T) {
	path := filepath.Join(t.TempDir(), "o.db")
	ms, err := loadMigrations(migrationFS)
	if err != nil {
		t.Fatal(err)
	}
	for i := range 3 {
		s := openAt(t, path, Options{})
		var n, maxV int
		if err := s.r.QueryRow(`SELECT COUNT(*), MAX(version) FROM schema_migrations`).Scan(&n, &maxV); err != nil {
			t.Fatal(err)
		}
		if n != len(ms) || maxV != len(ms) {
			t.Fatalf("open %d: %d migration rows, max version %d; want %d", i, n, maxV, len(ms))
		}
		if err := s.Close(); err != nil {
			t.Fatal(err)
		}
	}
}

func TestMigrationRefusesNewerDatabase(t *testing.T) {
	path := filepath.Join(t.TempDir(), "o.db")
	s := openAt(t, path, Options{})
	if _, err := s.w.Exec(`INSERT INTO schema_migrations(version, name, applied_at) VALUES (999, '0999_future.sql', 0)`); err != nil {
		t.Fatal(err)
	}
	s.Close()
	_, err := Open(context.Background(), path, Options{Logger: testkit.Logger(t)})
	if !errors.Is(err, ErrSchemaTooNew) {
		t.Fatalf("Open of a newer database: err = %v, want ErrSchemaTooNew", err)
	}
	if !strings.Contains(err.Error(), "999") {
		t.Errorf("error %q does not name the database's version", err)
	}
}

func TestMigrationFailureRollsBack(t *testing.T) {
	path := filepath.Join(t.TempDir(), "o.db")
	s := openAt(t, path, Options{})
	good, err := loadMigrations(migrationFS)
	if err != nil {
		t.Fatal(err)
	}
	bad := append(append([]migration(nil), good...), migration{
		version: len(good) + 1, name: "9999_bad.sql",
		sql: `CREATE TABLE half_done(x); THIS IS NOT SQL;`,
	})
	if _, err := migrate(context.Background(), s.w, bad); err == nil {
		t.Fatal("a broken migration succeeded")
	}
	var n int
	if err := s.r.QueryRow(`SELECT COUNT(*) FROM sqlite_master WHERE name = 'half_done'`).Scan(&n); err != nil {
		t.Fatal(err)
	}
	if n != 0 {
		t.Error("a failed migration left a table behind")
	}
	if v, _ := schemaVersion(context.Background(), s.r); v != len(good) {
		t.Errorf("schema version %d after a failed migration, want %d", v, len(good))
	}
}

func TestLoadMigrationsRejectsBadSets(t *testing.T) {
	f := func(names ...string) fstest.MapFS {
		m := fstest.MapFS{}
		for _, n := range names {
			m["migrations/"+n] = &fstest.MapFile{Data: []byte("SELECT 1;")}
		}
		return m
	}
	tests := []struct {
		name string
		fsys fstest.MapFS
		ok   bool
	}{
		{"good", f("0001_a.sql", "0002_b.sql"), true},
		{"gap", f("0001_a.sql", "0003_c.sql"), false},
		{"duplicate", f("0001_a.sql", "0001_b.sql"), false},
		{"no number", f("abcd_a.sql"), false},
		{"short number", f("1_a.sql"), false},
		{"zero", f("0000_a.sql"), false},
		{"no underscore", f("0001.sql"), false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := loadMigrations(tt.fsys)
			if (err == nil) != tt.ok {
				t.Errorf("loadMigrations: err = %v, want ok=%v", err, tt.ok)
			}
		})
	}
}

func TestOpenErrors(t *testing.T) {
	dir := t.TempDir()
	notDB := filepath.Join(dir, "not-a-db")
	if err := os.WriteFile(notDB, []byte("this is not an SQLite database, just text that is long enough to fill a header....."), 0o600); err != nil {
		t.Fatal(err)
	}
	canceled, cancel := context.WithCancel(context.Background())
	cancel()
	tests := []struct {
		name string
		ctx  context.Context
		path string
		is   error
	}{
		{"empty path", context.Background(), "", ErrInvalid},
		{"NUL in path", context.Background(), "a\x00b.db", ErrInvalid},
		{"missing directory", context.Background(), filepath.Join(dir, "no", "such", "dir", "o.db"), nil},
		{"not a database", context.Background(), notDB, nil},
		{"canceled context", canceled, filepath.Join(dir, "c.db"), context.Canceled},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s, err := Open(tt.ctx, tt.path, Options{Logger: testkit.Logger(t)})
			if err == nil {
				s.Close()
				t.Fatal("Open succeeded")
			}
			if tt.is != nil && !errors.Is(err, tt.is) {
				t.Errorf("err = %v, want %v", err, tt.is)
			}
		})
	}
}

func TestCloseIdempotentAndClosedErrors(t *testing.T) {
	s := openTest(t, Options{})
	info := putBlob(t, s, []byte("x"))
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	if err := s.Close(); err != nil {
		t.Fatalf("second Close: %v", err)
	}
	ctx := context.Background()
	calls := []struct {
		name string
		call func() error
	}{
		{"CreateBlob", func() error { _, err := s.Files().CreateBlob(ctx); return err }},
		{"OpenBlob", func() error { _, err := s.Files().OpenBlob(ctx, info.ID); return err }},
		{"DeleteBlob", func() error { return s.Files().DeleteBlob(ctx, info.ID) }},
		{"PutDataPackage", func() error {
			_, err := s.Files().PutDataPackage(ctx, DataPackageInput{Name: "a.zip"}, strings.NewReader("x"))
			return err
		}},
		{"DataPackageByHash", func() error { _, err := s.Files().DataPackageByHash(ctx, info.SHA256); return err }},
		{"DataPackageByUID", func() error { _, err := s.Files().DataPackageByUID(ctx, "u"); return err }},
		{"DataPackages", func() error { _, err := s.Files().DataPackages(ctx); return err }},
		{"DeleteDataPackageByHash", func() error { return s.Files().DeleteDataPackageByHash(ctx, info.SHA256) }},
		{"CreateUser", func() error { _, err := s.Accounts().CreateUser(ctx, UserInput{Name: "a", Password: "p"}); return err }},
		{"UserByName", func() error { _, err := s.Accounts().UserByName(ctx, "a"); return err }},
		{"UserByToken", func() error { _, err := s.Accounts().UserByToken(ctx, "t"); return err }},
		{"VerifyPassword", func() error { _, err := s.Accounts().VerifyPassword(ctx, "a", "p"); return err }},
		{"DeleteUser", func() error { return s.Accounts().DeleteUser(ctx, "u") }},
		{"Users", func() error { _, err := s.Accounts().Users(ctx); return err }},
		{"LatestEvent", func() error { _, err := s.Events().LatestEvent(ctx, "u", AllGroups); return err }},
		{"LatestInBox", func() error { _, err := s.Events().LatestInBox(ctx, 0, 0, 1, 1, 10, AllGroups); return err }},
		{"Backup", func() error { return s.Backup(ctx, filepath.Join(t.TempDir(), "b.db")) }},
		{"History.Flush", func() error { return s.StartHistory(HistoryOptions{}).Flush(ctx) }},
	}
	for _, c := range calls {
		t.Run(c.name, func(t *testing.T) {
			if err := c.call(); !errors.Is(err, ErrClosed) {
				t.Errorf("err = %v, want ErrClosed", err)
			}
		})
	}
	if h := s.StartHistory(HistoryOptions{}); h.Add(testEvent("u", "c", 0, 0, timeNow()), nil, timeNow(), "t", 0, AnonGroup) {
		t.Error("Add on a closed store's history returned true")
	}
}
