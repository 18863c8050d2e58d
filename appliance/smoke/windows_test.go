//go:build smoke

package smoke

import (
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"outpost/internal/testkit"
)

// wine is a throw-away Wine prefix with the bcryptprimitives.dll stand-in
// (scripts/wine/bcryptprimitives.c) in its system32.
type wine struct {
	loader, server string
	env            []string
}

// winePath is the Windows name of a Unix path (Wine maps / to drive Z:).
func winePath(p string) string { return "Z:" + strings.ReplaceAll(p, "/", `\`) }

func newWine(t *testing.T) *wine {
	t.Helper()
	loader := testkit.LookTool(t, "wine64", "wine64", "/usr/lib/wine/wine64")
	server := testkit.LookTool(t, "wine64", "wineserver", "/usr/lib/wine/wineserver64", "/usr/lib/wine/wineserver")
	gcc := testkit.LookTool(t, "gcc-mingw-w64-x86-64-win32", "x86_64-w64-mingw32-gcc")
	prefix := filepath.Join(t.TempDir(), "prefix")
	// Set in the test's own environment, so that every process started
	// (testkit.StartWith included) uses the throw-away prefix.
	for k, v := range map[string]string{
		"WINEPREFIX": prefix, "WINEDEBUG": "-all", "WINEDLLOVERRIDES": "mscoree,mshtml=", "DISPLAY": "",
	} {
		t.Setenv(k, v)
	}
	w := &wine{loader: loader, server: server, env: os.Environ()}
	t.Cleanup(func() { // ends every process of the prefix
		k := exec.Command(w.server, "-k")
		k.Env = w.env
		k.Run()
	})

	// Go 1.26's runtime loads ProcessPrng from bcryptprimitives.dll at
	// start; Wine 8.0 has no such DLL.
	dll := filepath.Join(t.TempDir(), "bcryptprimitives.dll")
	src := filepath.Join(testkit.ModuleRoot(t), "scripts", "wine", "bcryptprimitives.c")
	if out, err := exec.Command(gcc, "-shared", "-s", "-o", dll, src).CombinedOutput(); err != nil {
		t.Fatalf("build %s: %v\n%s", src, err, out)
	}
	start := time.Now()
	if code, out := run(t, w.env, loader, "wineboot", "--init"); code != 0 {
		t.Fatalf("wineboot: exit %d\n%s", code, out)
	}
	// wineboot leaves the prefix's service manager running for a while;
	// wait until every process of the prefix is gone, so that one session
	// (keepAlive's) serves the rest of the test. Two service managers at
	// once, one ending and one starting, lose services (seen with Wine 8.0).
	if code, out := run(t, w.env, server, "-w"); code != 0 {
		t.Fatalf("wineserver -w: exit %d\n%s", code, out)
	}
	t.Logf("Wine prefix created in %v", time.Since(start).Round(time.Millisecond))
	b, err := os.ReadFile(dll)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(prefix, "drive_c", "windows", "system32", "bcryptprimitives.dll"), b, 0o644); err != nil {
		t.Fatal(err)
	}
	w.keepAlive(t)
	w.servicesReady(t)
	return w
}

// run runs a Windows program in the prefix.
func (w *wine) run(t *testing.T, args ...string) (int, string) {
	t.Helper()
	return run(t, w.env, w.loader, args...)
}

// keepAlive runs a console in the prefix until the test ends: it starts
// the session (wineserver and the service manager) every later command
// joins, and keeps it, with the services it runs, alive: Wine ends
// services when no other program of the prefix runs.
func (w *wine) keepAlive(t *testing.T) {
	t.Helper()
	cmd := exec.Command(w.loader, "cmd.exe")
	cmd.Env = w.env // output discarded: the session's services inherit it
	stdin, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		io.WriteString(stdin, "exit\r\n")
		stdin.Close()
		done := make(chan error, 1)
		go func() { done <- cmd.Wait() }()
		select {
		case <-done:
		case <-time.After(10 * time.Second):
			cmd.Process.Kill()
		}
	})
}

// servicesReady waits until the session's service manager has started the
// automatic services (PlugPlay among them), i.e. has loaded its database.
func (w *wine) servicesReady(t *testing.T) {
	t.Helper()
	testkit.WaitForWithin(t, 60*time.Second, "Wine's service manager", func() bool {
		_, out := w.run(t, "sc.exe", "query", "plugplay")
		return strings.Contains(out, "RUNNING")
	})
}

// TestWindows runs the windows/amd64 build under Wine: `version`, `run`
// stopped with Ctrl-C (Wine turns SIGINT into a console Ctrl-C event),
// and the Windows service path: install (starts it), status, stop through
// the service manager, uninstall.
func TestWindows(t *testing.T) {
	w := newWine(t)
	exe := crossBuild(t, "windows", "amd64", "", "outpost.exe")

	code, out := w.run(t, exe, "version")
	wantVersion(t, code, out, "windows/amd64")

	t.Run("run", func(t *testing.T) {
		dataDir := t.TempDir()
		p := testkit.StartWith(t, []string{w.loader, exe}, winePath(dataDir), "--key-type", "ecdsa-p256")
		if err := alive(p.Addr(t, "rest")); err != nil {
			t.Fatal(err)
		}
		relayOne(t, p.Addr(t, "cot-tcp"), "SMOKE-WINE-RUN")
		err, took := p.Signal(t, os.Interrupt, 60*time.Second)
		if err != nil {
			t.Fatalf("exit after Ctrl-C: %v\n%s", err, p.LogText())
		}
		if !p.Logged("shutdown requested") || !p.Logged("shut down") {
			t.Fatalf("no orderly shutdown logged:\n%s", p.LogText())
		}
		t.Logf("stopped in %v", took.Round(time.Millisecond))
		checkDatabase(t, dataDir)
	})

	t.Run("service", func(t *testing.T) {
		dir := t.TempDir()
		dataDir := filepath.Join(dir, "data")
		// The service's arguments are written at install: fixed ports, on
		// an address of this test's own where nothing else can hold them.
		home, rest, cotPort := testkit.OwnLoopback(t), 19023, 8087
		cfg := filepath.Join(dir, "outpost.yaml")
		err := os.WriteFile(cfg, []byte(fmt.Sprintf(`bind: %s
publicHost: %s
keyType: ecdsa-p256
restPort: %d
cotPort: %d
httpPort: -1
httpsPort: -1
sslCotPort: -1
enrollPort: -1
`, home, home, rest, cotPort)), 0o600)
		if err != nil {
			t.Fatal(err)
		}
		status := func() (int, string) { return w.run(t, exe, "service", "status") }

		if code, out := status(); code != 3 || !strings.Contains(out, "not installed") {
			t.Fatalf("status before install: exit %d %q", code, out)
		}
		code, out := w.run(t, exe, "service", "install", "--config", winePath(cfg), "--data-dir", winePath(dataDir))
		if code != 0 {
			t.Fatalf("install: exit %d\n%s", code, out)
		}
		t.Logf("install: %s", strings.TrimSpace(out))
		restAddr := net.JoinHostPort(home, strconv.Itoa(rest))
		testkit.WaitForWithin(t, 60*time.Second, "the service's /Alive", func() bool { return alive(restAddr) == nil })
		if code, out := status(); code != 0 || !strings.Contains(out, "running") {
			t.Fatalf("status: exit %d %q", code, out)
		}
		relayOne(t, net.JoinHostPort(home, strconv.Itoa(cotPort)), "SMOKE-WINE-SERVICE")

		start := time.Now()
		if code, out := w.run(t, exe, "service", "stop"); code != 0 {
			t.Fatalf("stop: exit %d\n%s", code, out)
		}
		t.Logf("service stopped in %v", time.Since(start).Round(time.Millisecond))
		if code, out := status(); code != 3 || !strings.Contains(out, "stopped") {
			t.Fatalf("status after stop: exit %d %q", code, out)
		}
		if alive(restAddr) == nil {
			t.Fatal("/Alive still answers after the service stopped")
		}
		checkDatabase(t, dataDir)

		if code, out := w.run(t, exe, "service", "uninstall"); code != 0 {
			t.Fatalf("uninstall: exit %d\n%s", code, out)
		}
		if code, out := status(); code != 3 || !strings.Contains(out, "not installed") {
			t.Fatalf("status after uninstall: exit %d %q", code, out)
		}
	})
}
