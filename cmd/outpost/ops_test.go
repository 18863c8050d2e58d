package main

import (
	"context"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"
	"time"

	"outpost/appliance/admin"
	"outpost/appliance/apptest"
	"outpost/appliance/config"
	"outpost/internal/testkit"
)

// listenerFlags are the flags that point a command at app's listeners.
func listenerFlags(t *testing.T, app *apptest.App) []string {
	return []string{"--bind", "127.0.0.1",
		"--rest-port", port(t, app.Addr(t, "rest")), "--http-port", port(t, app.Addr(t, "http")),
		"--https-port", port(t, app.Addr(t, "https")), "--cot-port", port(t, app.Addr(t, "cot-tcp")),
		"--ssl-cot-port", port(t, app.Addr(t, "cot-tls")), "--enroll-port", port(t, app.Addr(t, "enroll")),
	}
}

func TestHealthcheck(t *testing.T) {
	app := apptest.Start(t, nil)
	flags := listenerFlags(t, app)
	with := func(extra ...string) []string {
		return append(append([]string{"healthcheck", "--data-dir", t.TempDir()}, flags...), extra...)
	}

	// Some other web server on the management port.
	other := httptest.NewServer(http.NotFoundHandler())
	defer other.Close()

	code, out, errOut := outpost(t, with()...)
	if code != exitOK {
		t.Fatalf("healthy server: exit %d\n%s%s", code, out, errOut)
	}
	for _, l := range []string{"rest", "http", "https", "cot-tcp", "cot-tls", "enroll"} {
		if !strings.Contains(out, "ok   "+l+" ") {
			t.Errorf("no ok line for %s:\n%s", l, out)
		}
	}

	for _, tc := range []struct {
		name  string
		extra []string
		want  string
	}{
		{"a listener is down", []string{"--cot-port", closedPort(t)}, "FAIL cot-tcp"},
		{"the management port is not ours", []string{"--rest-port", port(t, other.Listener.Addr().String())}, "/Alive answered 404"},
		{"a port chosen at start", []string{"--enroll-port", "0"}, "configure a fixed port"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			code, out, _ := outpost(t, with(tc.extra...)...)
			if code != exitFailure || !strings.Contains(out, tc.want) {
				t.Fatalf("exit %d, want %d with %q:\n%s", code, exitFailure, tc.want, out)
			}
		})
	}

	t.Run("disabled listeners are not checked", func(t *testing.T) {
		code, out, _ := outpost(t, with("--https-port", "-1", "--ssl-cot-port", "-1", "--enroll-port", "-1")...)
		if code != exitOK || strings.Contains(out, "https") || strings.Contains(out, "enroll") || strings.Count(out, "\n") != 3 {
			t.Fatalf("exit %d:\n%s", code, out)
		}
	})
	t.Run("everything disabled", func(t *testing.T) {
		code, _, errOut := outpost(t, "healthcheck", "--rest-port", "-1", "--http-port", "-1", "--https-port", "-1",
			"--cot-port", "-1", "--ssl-cot-port", "-1", "--enroll-port", "-1")
		if code != exitFailure || !strings.Contains(errOut, "nothing to check") {
			t.Fatalf("exit %d: %s", code, errOut)
		}
	})
	t.Run("bad usage", func(t *testing.T) {
		if code, _, _ := outpost(t, "healthcheck", "extra"); code != exitUsage {
			t.Fatalf("exit %d", code)
		}
		if code, _, _ := outpost(t, "healthcheck", "--timeout", "-1s"); code != exitUsage {
			t.Fatalf("exit %d", code)
		}
	})
}

// userNames lists the system users of dataDir (outpost user list).
func userNames(t *testing.T, dataDir string) []string {
	t.Helper()
	users, err := admin.UserList(context.Background(), dataConfig(dataDir), testkit.Discard())
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, u := range users {
		names = append(names, u.Name)
	}
	sort.Strings(names)
	return names
}

func dataConfig(dataDir string) config.Config {
	cfg := config.Defaults()
	cfg.DataDir = dataDir
	cfg.Finish()
	return cfg
}

// addUser creates a system user through the command, beside the server.
func addUser(t *testing.T, dataDir, name string) {
	t.Helper()
	if code, out, errOut := outpost(t, "user", "add", name, "--data-dir", dataDir); code != exitOK {
		t.Fatalf("user add: exit %d %s%s", code, out, errOut)
	}
}

// TestBackupRestore: a backup taken while the server runs; restore refused
// while it runs; after it stops, restore brings the backup's data back and
// keeps the replaced database aside.
func TestBackupRestore(t *testing.T) {
	app := apptest.Start(t, func(c *config.Config) {
		c.RESTPort, c.HTTPPort, c.HTTPSPort, c.CoTPort, c.SSLCoTPort, c.EnrollPort = -1, -1, -1, -1, -1, -1
	})
	dataDir := app.Cfg.DataDir
	ctx := context.Background()
	addUser(t, dataDir, "alice")
	backup := filepath.Join(t.TempDir(), "outpost-backup.db")
	if code, out, errOut := outpost(t, "backup", "--data-dir", dataDir, backup); code != exitOK {
		t.Fatalf("backup: exit %d %s%s", code, out, errOut)
	}
	addUser(t, dataDir, "bob")

	code, _, errOut := outpost(t, "restore", "--data-dir", dataDir, backup)
	if code != exitFailure || !strings.Contains(errOut, "in use by a running Outpost") || !strings.Contains(errOut, "stop the server first") {
		t.Fatalf("restore while running: exit %d: %s", code, errOut)
	}

	cctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	if err := app.Close(cctx); err != nil {
		t.Fatal(err)
	}
	code, out, errOut := outpost(t, "restore", "--data-dir", dataDir, backup)
	if code != exitOK || !strings.Contains(out, "the previous database is kept at") {
		t.Fatalf("restore: exit %d\n%s%s", code, out, errOut)
	}
	if got := userNames(t, dataDir); strings.Join(got, ",") != "alice" {
		t.Fatalf("users after restore %v, want the backup's [alice]", got)
	}
	asides, _ := filepath.Glob(filepath.Join(dataDir, "outpost.db.before-restore-*"))
	if len(asides) != 1 {
		t.Fatalf("the replaced database must be kept aside once: %v", asides)
	}

	t.Run("bad input", func(t *testing.T) {
		junk := filepath.Join(t.TempDir(), "junk.db")
		os.WriteFile(junk, []byte(strings.Repeat("junk", 1000)), 0o600)
		for _, args := range [][]string{
			{"restore", "--data-dir", dataDir},
			{"restore", "--data-dir", dataDir, "a", "b"},
		} {
			if code, _, _ := outpost(t, args...); code != exitUsage {
				t.Errorf("%v: exit %d, want %d", args, code, exitUsage)
			}
		}
		code, _, errOut := outpost(t, "restore", "--data-dir", dataDir, junk)
		if code != exitFailure || !strings.Contains(errOut, "not a readable SQLite database") {
			t.Fatalf("junk: exit %d %s", code, errOut)
		}
		if got := userNames(t, dataDir); strings.Join(got, ",") != "alice" {
			t.Fatalf("a refused restore changed the data: %v", got)
		}
	})
}
