//go:build linux

package service

import (
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"outpost/internal/testkit"
)

// needTool is the path of a tool the test needs (testkit.LookTool: a
// missing one skips, or fails where tools are required).
func needTool(t *testing.T, name string) string { return testkit.LookTool(t, "systemd", name) }

// verifyUnit runs systemd-analyze verify on a unit file and fails on any
// complaint: verify exits 0 for unknown keys, so its output must be empty.
func verifyUnit(t *testing.T, path string) {
	t.Helper()
	needTool(t, "systemd-analyze")
	out, err := exec.Command("systemd-analyze", "verify", "--man=no", path).CombinedOutput()
	if err != nil || len(strings.TrimSpace(string(out))) > 0 {
		t.Fatalf("systemd-analyze verify %s: %v\n%s", path, err, out)
	}
}

// TestShippedUnitVerifies checks the unit the .deb ships with systemd's own
// checker. verify insists that ExecStart's binary exists, so it checks a
// copy whose ExecStart names this test's executable; every other line is
// the shipped one.
func TestShippedUnitVerifies(t *testing.T) {
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	unit, err := RenderUnit(shippedUnit(t), exe, []string{"run", "--config", "/etc/outpost/outpost.yaml", "--data-dir", "/var/lib/outpost"}, "/var/lib/outpost")
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), unitName)
	if err := os.WriteFile(path, unit, 0o644); err != nil {
		t.Fatal(err)
	}
	verifyUnit(t, path)

	// The checker is not blind: a misplaced key is reported.
	bad := filepath.Join(t.TempDir(), unitName)
	os.WriteFile(bad, append(append([]byte(nil), unit...), "StartLimitIntervalSec=0\n"...), 0o644)
	out, _ := exec.Command("systemd-analyze", "verify", "--man=no", bad).CombinedOutput()
	if !strings.Contains(string(out), "Unknown key") {
		t.Fatalf("systemd-analyze did not notice a [Unit] key in [Install]: %s", out)
	}
}

// TestInstallUninstallInRoot installs the service below a temporary root
// with the real systemctl (offline, --root): the unit is ours with the
// given ExecStart, verifies, is enabled for multi-user.target, and
// uninstall removes both.
func TestInstallUninstallInRoot(t *testing.T) {
	needTool(t, "systemctl")
	root := t.TempDir()
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	c := Controller{
		Executable: exe,
		Args:       []string{"run", "--config", "/etc/outpost/site.yaml", "--data-dir", "/srv/outpost"},
		DataDir:    "/srv/outpost",
		Unit:       shippedUnit(t),
		Root:       root,
	}
	if st, err := c.Status(); st != StateNotInstalled || err != nil {
		t.Fatalf("before install: %s, %v", st, err)
	}
	if err := c.Uninstall(); !errors.Is(err, ErrNotInstalled) {
		t.Fatalf("uninstall before install: %v", err)
	}
	if err := c.Start(); !errors.Is(err, ErrNotInstalled) {
		t.Fatalf("start before install: %v", err)
	}
	if err := c.Install(); err != nil {
		t.Fatal(err)
	}
	unitPath := filepath.Join(root, "etc/systemd/system/outpost.service")
	unit, err := os.ReadFile(unitPath)
	if err != nil {
		t.Fatal(err)
	}
	if l := unitLines(unit, "ExecStart="); len(l) != 1 || l[0] != "ExecStart="+exe+" run --config /etc/outpost/site.yaml --data-dir /srv/outpost" {
		t.Fatalf("ExecStart: %q", l)
	}
	if l := unitLines(unit, "ReadWritePaths="); len(l) != 1 || l[0] != "ReadWritePaths=/srv/outpost" {
		t.Fatalf("ReadWritePaths: %q", l)
	}
	if st, _ := os.Stat(unitPath); st.Mode().Perm() != 0o644 {
		t.Fatalf("unit mode %v", st.Mode())
	}
	verifyUnit(t, unitPath)
	wants := filepath.Join(root, "etc/systemd/system/multi-user.target.wants/outpost.service")
	if target, err := os.Readlink(wants); err != nil || target != "/etc/systemd/system/outpost.service" {
		t.Fatalf("not enabled: %q, %v", target, err)
	}
	if err := c.Install(); err == nil || !strings.Contains(err.Error(), "installed already") {
		t.Fatalf("a second install must be refused: %v", err)
	}
	if st, err := c.Status(); st != StateUnknown || err == nil || !strings.Contains(err.Error(), "systemd is not running") {
		t.Fatalf("status below another root: %s, %v", st, err)
	}
	if err := c.Start(); err == nil || !strings.Contains(err.Error(), "systemd is not running") {
		t.Fatalf("start below another root: %v", err)
	}

	if err := c.Uninstall(); err != nil {
		t.Fatal(err)
	}
	for _, p := range []string{unitPath, wants} {
		if _, err := os.Lstat(p); !os.IsNotExist(err) {
			t.Fatalf("%s still there after uninstall (%v)", p, err)
		}
	}
	if st, err := c.Status(); st != StateNotInstalled || err != nil {
		t.Fatalf("after uninstall: %s, %v", st, err)
	}
}

// TestInstallBesidePackage: with the .deb's unit in place, install and
// uninstall refuse and say what to do instead.
func TestInstallBesidePackage(t *testing.T) {
	root := t.TempDir()
	pkg := filepath.Join(root, "lib/systemd/system/outpost.service")
	os.MkdirAll(filepath.Dir(pkg), 0o755)
	if err := os.WriteFile(pkg, shippedUnit(t), 0o644); err != nil {
		t.Fatal(err)
	}
	c := Controller{Executable: "/usr/bin/outpost", Args: []string{"run"}, Unit: shippedUnit(t), Root: root}
	if err := c.Install(); err == nil || !strings.Contains(err.Error(), "systemctl enable --now outpost.service") {
		t.Fatalf("install: %v", err)
	}
	if err := c.Uninstall(); err == nil || !strings.Contains(err.Error(), "apt remove outpost") {
		t.Fatalf("uninstall: %v", err)
	}
	if _, err := os.Stat(filepath.Join(root, "etc/systemd/system/outpost.service")); !os.IsNotExist(err) {
		t.Fatalf("nothing may be written: %v", err)
	}
}

func TestInstallRejectsBadUnit(t *testing.T) {
	root := t.TempDir()
	c := Controller{Executable: "relative/outpost", Args: []string{"run"}, Unit: shippedUnit(t), Root: root}
	if err := c.Install(); err == nil || !strings.Contains(err.Error(), "absolute") {
		t.Fatalf("got %v", err)
	}
	if entries, _ := os.ReadDir(root); len(entries) != 0 {
		t.Fatalf("a refused install wrote %v", entries)
	}
}
