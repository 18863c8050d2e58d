package mgmt_test

import (
	"bytes"
	"crypto/sha256"
	"database/sql"
	"encoding/hex"
	"fmt"
	"io"
	"log/slog"
	"mime/multipart"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"
	"time"

	_ "modernc.org/sqlite" // read the appliance's database file in checks

	"outpost/appliance/admin"
	"outpost/appliance/apptest"
	"outpost/appliance/config"
	"outpost/appliance/netx"
	"outpost/internal/testkit"
)

// env is a running appliance and an HTTP client for its management port.
type env struct {
	t     testing.TB
	app   *apptest.App
	base  string // http://127.0.0.1:port
	admin string // the first-run admin token, read from admin.token
	logs  *testkit.Buffer
}

func newEnv(t testing.TB, mutate func(*config.Config)) *env {
	t.Helper()
	logs := &testkit.Buffer{}
	app := apptest.StartWithLog(t, mutate, slogTo(logs))
	e := &env{t: t, app: app, logs: logs, base: "http://" + app.Addr(t, netx.ListenerREST)}
	b, err := os.ReadFile(filepath.Join(app.Cfg.DataDir, admin.AdminTokenFile))
	if err != nil {
		t.Fatalf("first run wrote no admin token: %v", err)
	}
	e.admin = strings.TrimSpace(string(b))
	return e
}

// do sends a request with token as bearer ("" sends none).
func (e *env) do(method, path, token string, body any, headers ...string) testkit.Response {
	e.t.Helper()
	if token != "" {
		headers = append(headers, "Authorization", "Bearer "+token)
	}
	return testkit.Do(e.t, nil, method, e.base+path, body, headers...)
}

// want checks a response's status (and that errors are {"message"} JSON).
func want(t testing.TB, what string, r testkit.Response, status int) {
	t.Helper()
	if r.Status != status {
		t.Fatalf("%s: status %d, want %d: %s", what, r.Status, status, r.Body)
	}
	if status >= 400 && r.Message() == "" {
		t.Fatalf("%s: error without a message: %s", what, r.Body)
	}
}

// upload posts content as the multipart field assetfile.
func (e *env) upload(token, query string, field string, content []byte) testkit.Response {
	e.t.Helper()
	var b bytes.Buffer
	mw := multipart.NewWriter(&b)
	mw.WriteField("note", "a form field before the file")
	fw, err := mw.CreateFormFile(field, "ignored-name.bin")
	if err != nil {
		e.t.Fatal(err)
	}
	fw.Write(content)
	mw.Close()
	return e.do("POST", "/DataPackageTable"+query, token, b.Bytes(), "Content-Type", mw.FormDataContentType())
}

func sha(b []byte) string {
	s := sha256.Sum256(b)
	return hex.EncodeToString(s[:])
}

// db opens the appliance's database file read-only.
func (e *env) db() *sql.DB {
	e.t.Helper()
	db, err := sql.Open("sqlite", "file:"+e.app.Cfg.DBPath()+"?mode=ro")
	if err != nil {
		e.t.Fatal(err)
	}
	e.t.Cleanup(func() { db.Close() })
	return db
}

// count is SELECT COUNT(*) FROM table [WHERE ...].
func (e *env) count(table, where string, args ...any) int {
	e.t.Helper()
	q := "SELECT COUNT(*) FROM " + table
	if where != "" {
		q += " WHERE " + where
	}
	var n int
	if err := e.db().QueryRow(q, args...).Scan(&n); err != nil {
		e.t.Fatalf("%s: %v", q, err)
	}
	return n
}

// snapshot digests every table's rows, so a test can prove a refused
// request changed nothing.
func (e *env) snapshot() map[string]string {
	e.t.Helper()
	db := e.db()
	rows, err := db.Query(`SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%'`)
	if err != nil {
		e.t.Fatal(err)
	}
	var tables []string
	for rows.Next() {
		var n string
		rows.Scan(&n)
		tables = append(tables, n)
	}
	rows.Close()
	sort.Strings(tables)
	out := map[string]string{}
	for _, tbl := range tables {
		rs, err := db.Query(`SELECT * FROM "` + tbl + `" ORDER BY rowid`)
		if err != nil {
			rs, err = db.Query(`SELECT * FROM "` + tbl + `"`)
			if err != nil {
				e.t.Fatal(err)
			}
		}
		cols, _ := rs.Columns()
		h := sha256.New()
		n := 0
		for rs.Next() {
			vals := make([]any, len(cols))
			ptrs := make([]any, len(cols))
			for i := range vals {
				ptrs[i] = &vals[i]
			}
			rs.Scan(ptrs...)
			fmt.Fprintf(h, "%v\n", vals)
			n++
		}
		rs.Close()
		out[tbl] = fmt.Sprintf("%d rows %x", n, h.Sum(nil)[:8])
	}
	return out
}

func sameSnapshot(t testing.TB, what string, before, after map[string]string) {
	t.Helper()
	for k, v := range before {
		if after[k] != v {
			t.Fatalf("%s changed table %s: %s -> %s", what, k, v, after[k])
		}
	}
	if len(after) != len(before) {
		t.Fatalf("%s changed the tables: %v -> %v", what, before, after)
	}
}

// createUser creates a system user through the API (flat shape) and returns
// its uid and token.
func (e *env) createUser(name, password string) (uid, token string) {
	e.t.Helper()
	return e.createUserAs(name, password, "user")
}

// createAdmin creates a system user with the role admin (access.md "Roles").
func (e *env) createAdmin(name, password string) (uid, token string) {
	e.t.Helper()
	return e.createUserAs(name, password, "admin")
}

func (e *env) createUserAs(name, password, role string) (uid, token string) {
	e.t.Helper()
	r := e.do("POST", "/ManageSystemUser/postSystemUser", e.admin, map[string]string{"username": name, "password": password, "role": role})
	want(e.t, "create "+name, r, 201)
	var out struct {
		SystemUsers []struct{ ID, Username, Token string }
	}
	r.JSON(e.t, &out)
	if len(out.SystemUsers) != 1 || out.SystemUsers[0].Token == "" {
		e.t.Fatalf("create %s: %s", name, r.Body)
	}
	return out.SystemUsers[0].ID, out.SystemUsers[0].Token
}

// waitClosed waits until a connection's reader ends.
func waitClosed(t testing.TB, done <-chan struct{}, what string) {
	t.Helper()
	select {
	case <-done:
	case <-time.After(10 * time.Second):
		t.Fatalf("%s: still connected after 10 s", what)
	}
}

// slogTo is a JSON logger writing to w (debug and up).
func slogTo(w io.Writer) *slog.Logger {
	return slog.New(slog.NewJSONHandler(w, &slog.HandlerOptions{Level: slog.LevelDebug}))
}
