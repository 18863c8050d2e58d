//go:build smoke

package smoke

import (
	"database/sql"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	_ "modernc.org/sqlite"

	"outpost/appliance/cot"
	"outpost/appliance/takclient"
	"outpost/internal/testkit"
)

// crossBuild builds cmd/outpost for another platform, as `make cross` does
// (CGO_ENABLED=0, -trimpath: the build cache is shared with it).
func crossBuild(t *testing.T, goos, goarch, goarm, name string) string {
	t.Helper()
	out := filepath.Join(t.TempDir(), name)
	cmd := exec.Command("go", "build", "-trimpath", "-ldflags", "-s -w", "-o", out, "./cmd/outpost")
	cmd.Dir = testkit.ModuleRoot(t)
	cmd.Env = append(os.Environ(), "CGO_ENABLED=0", "GOOS="+goos, "GOARCH="+goarch, "GOARM="+goarm)
	start := time.Now()
	if b, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("go build %s/%s: %v\n%s", goos, goarch, err, b)
	}
	t.Logf("built %s/%s%s in %v", goos, goarch, goarm, time.Since(start).Round(time.Millisecond))
	return out
}

// run runs a command to completion and returns its exit code and output.
// The output goes through a file, not a pipe: programs that start daemons
// (Wine starts wineserver and its services) would hold a pipe open.
func run(t *testing.T, env []string, name string, args ...string) (int, string) {
	t.Helper()
	f, err := os.CreateTemp(t.TempDir(), "out-")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	cmd := exec.Command(name, args...)
	cmd.Env = env
	cmd.Stdout, cmd.Stderr = f, f
	err = cmd.Run()
	out, _ := os.ReadFile(f.Name())
	if ee, ok := err.(*exec.ExitError); ok {
		return ee.ExitCode(), string(out)
	} else if err != nil {
		t.Fatalf("%s %v: %v", name, args, err)
	}
	return 0, string(out)
}

// alive asks /Alive on the management address once.
func alive(addr string) error {
	c := http.Client{Timeout: 5 * time.Second}
	resp, err := c.Get("http://" + addr + "/Alive")
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(io.LimitReader(resp.Body, 256))
	if resp.StatusCode != http.StatusOK || string(body) != "API is running" {
		return fmt.Errorf("/Alive answered %d %q", resp.StatusCode, body)
	}
	return nil
}

// relayOne connects two TAK clients to the CoT TCP address and checks that
// a position report of one reaches the other.
func relayOne(t *testing.T, addr, uid string) {
	t.Helper()
	dial := func() *takclient.Client {
		c, err := takclient.Dial(addr, nil)
		if err != nil {
			t.Fatalf("dial %s: %v", addr, err)
		}
		t.Cleanup(func() { c.Close() })
		return c
	}
	rx, tx := dial(), dial()
	if err := rx.Send(takclient.SA(uid+"-RX", "RX", 59.3, 18.1)); err != nil {
		t.Fatal(err)
	}
	// The receiver's own report is routed before the sender's: once the
	// sender sees it, both sessions are registered.
	if _, err := tx.WaitFor(func(e *cot.Event) bool { return e.UID == uid+"-RX" }, 60*time.Second); err != nil {
		t.Fatalf("sender never saw the receiver: %v", err)
	}
	if err := tx.Send(takclient.SA(uid, "TX", 59.33, 18.06)); err != nil {
		t.Fatal(err)
	}
	ev, err := rx.WaitFor(func(e *cot.Event) bool { return e.UID == uid }, 60*time.Second)
	if err != nil {
		t.Fatalf("event %s not relayed: %v", uid, err)
	}
	if ev.Type != "a-f-G-U-C" {
		t.Fatalf("relayed event has type %q", ev.Type)
	}
}

// checkDatabase runs PRAGMA integrity_check on a stopped server's database
// and checks the orderly close emptied the write-ahead log (it is kept, empty,
// with the -shm file, so that a start on a full disk needs no new space).
func checkDatabase(t *testing.T, dataDir string) {
	t.Helper()
	path := filepath.Join(dataDir, "outpost.db")
	if st, err := os.Stat(path + "-wal"); err == nil && st.Size() > 0 {
		t.Errorf("%s-wal holds %d bytes: the database was not closed in order", path, st.Size())
	}
	db, err := sql.Open("sqlite", "file:"+path+"?mode=ro")
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	var res string
	if err := db.QueryRow(`PRAGMA integrity_check`).Scan(&res); err != nil {
		t.Fatal(err)
	}
	if res != "ok" {
		t.Fatalf("integrity_check: %s", res)
	}
	var migrations int
	if err := db.QueryRow(`SELECT COUNT(*) FROM schema_migrations`).Scan(&migrations); err != nil || migrations == 0 {
		t.Fatalf("no migrations recorded (%d, %v)", migrations, err)
	}
}

// wantVersion checks `outpost version` names the platform.
func wantVersion(t *testing.T, code int, out, platform string) {
	t.Helper()
	if code != 0 || !strings.HasPrefix(out, "outpost ") || !strings.Contains(out, platform) {
		t.Fatalf("version: exit %d: %q (want %s)", code, out, platform)
	}
}
