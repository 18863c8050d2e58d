//go:build linux

package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"outpost/internal/testkit"
)

// TestServiceInstallInRoot runs `outpost service install|status|uninstall
// --root DIR` in-process: the embedded unit is written below DIR with
// ExecStart naming this executable, `run`, the absolute configuration file
// and data directory, and enabled with the real systemctl (offline).
func TestServiceInstallInRoot(t *testing.T) {
	testkit.LookTool(t, "systemd", "systemctl")
	root := t.TempDir()
	work := t.TempDir()
	t.Chdir(work)
	os.WriteFile("site.yaml", []byte("logLevel: debug\n"), 0o600)
	exe, _ := os.Executable()
	exe, _ = filepath.EvalSymlinks(exe)

	code, out, errOut := outpost(t, "service", "install", "--root", root, "--config", "site.yaml", "--data-dir", "data")
	if code != exitOK {
		t.Fatalf("install: exit %d %s%s", code, out, errOut)
	}
	unit, err := os.ReadFile(filepath.Join(root, "etc/systemd/system/outpost.service"))
	if err != nil {
		t.Fatal(err)
	}
	wantExec := "ExecStart=" + exe + " run --config " + filepath.Join(work, "site.yaml") + " --data-dir " + filepath.Join(work, "data")
	if !strings.Contains(string(unit), wantExec+"\n") {
		t.Fatalf("unit lacks %q:\n%s", wantExec, unit)
	}
	if !strings.Contains(string(unit), "ReadWritePaths="+filepath.Join(work, "data")+"\n") {
		t.Fatalf("the data directory must be writable under ProtectSystem=strict:\n%s", unit)
	}
	if _, err := os.Lstat(filepath.Join(root, "etc/systemd/system/multi-user.target.wants/outpost.service")); err != nil {
		t.Fatalf("not enabled: %v", err)
	}

	code, out, _ = outpost(t, "service", "status", "--root", root)
	if code != exitNotRunning || !strings.Contains(out, "unknown") {
		t.Fatalf("status: exit %d %s", code, out)
	}
	if code, out, errOut := outpost(t, "service", "uninstall", "--root", root); code != exitOK {
		t.Fatalf("uninstall: exit %d %s%s", code, out, errOut)
	}
	code, out, _ = outpost(t, "service", "status", "--root", root)
	if code != exitNotRunning || !strings.Contains(out, "not installed") {
		t.Fatalf("status after uninstall: exit %d %s", code, out)
	}
	code, _, errOut = outpost(t, "service", "uninstall", "--root", root)
	if code != exitFailure || !strings.Contains(errOut, "not installed") {
		t.Fatalf("second uninstall: exit %d %s", code, errOut)
	}
}

// TestServiceDefaultDataDir: with no data directory configured the service
// uses /var/lib/outpost (the unit's StateDirectory), not ./outpost-data.
func TestServiceDefaultDataDir(t *testing.T) {
	if _, err := exec.LookPath("systemctl"); err != nil {
		t.Skip("systemctl is not installed; skipping")
	}
	root := t.TempDir()
	if code, out, errOut := outpost(t, "service", "install", "--root", root); code != exitOK {
		t.Fatalf("install: exit %d %s%s", code, out, errOut)
	}
	unit, _ := os.ReadFile(filepath.Join(root, "etc/systemd/system/outpost.service"))
	if !strings.Contains(string(unit), " run --data-dir /var/lib/outpost\n") || strings.Contains(string(unit), "ReadWritePaths") {
		t.Fatalf("unit:\n%s", unit)
	}
}
