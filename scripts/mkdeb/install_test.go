package main

import (
	"bufio"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
)

// The install test runs dpkg on the host with --root: dpkg unpacks into a
// throw-away root and runs the maintainer scripts chrooted into it, so the
// root holds a minimal system for them: the host's sh, coreutils and
// passwd tools (with their libraries), an /etc with only root in it, and an
// empty dpkg database. Nothing touches the host's users or packages.

// scriptTools are the programs the maintainer scripts call.
var scriptTools = []string{"sh", "getent", "groupadd", "useradd", "userdel", "groupdel",
	"install", "chown", "chmod", "rm", "rmdir", "cat"}

// recordingSystemctl stands in for systemctl (the init system is the edge
// of this test: no systemd runs here). It records its arguments.
const recordingSystemctl = "#!/bin/sh\necho \"$*\" >> /systemctl.log\n"

// newRoot builds the throw-away root. With systemd set, it looks like a
// machine systemd runs (/run/systemd/system exists); systemctl is the
// recorder either way, so a call where none may happen is seen.
func newRoot(t *testing.T, systemd bool) string {
	t.Helper()
	r := t.TempDir()
	for _, d := range []string{"usr/bin", "usr/sbin", "usr/lib", "etc", "var/lib/dpkg/info", "var/lib/dpkg/updates",
		"var/lib/dpkg/triggers", "var/log", "tmp", "run"} {
		mustMkdir(t, filepath.Join(r, d))
	}
	mustMkdir(t, filepath.Join(r, "usr/lib64"))
	for _, l := range []string{"bin", "sbin", "lib", "lib64"} { // merged /usr, as in Debian 12
		if err := os.Symlink("usr/"+l, filepath.Join(r, l)); err != nil {
			t.Fatal(err)
		}
	}
	for _, tool := range scriptTools {
		copyProgram(t, r, tool)
	}
	// The passwd tools were copied in: record their package, which ours
	// depends on.
	write(t, r, "var/lib/dpkg/status", "Package: passwd\nStatus: install ok installed\nPriority: required\n"+
		"Section: admin\nMaintainer: none\nArchitecture: all\nVersion: 1:4.13\n"+
		"Description: the host's useradd, groupadd, userdel and groupdel, copied in\n\n", 0o644)
	write(t, r, "var/lib/dpkg/info/passwd.list", "", 0o644)
	write(t, r, "var/lib/dpkg/available", "", 0o644)
	write(t, r, "etc/passwd", "root:x:0:0:root:/root:/bin/sh\n", 0o644)
	write(t, r, "etc/group", "root:x:0:\n", 0o644)
	write(t, r, "etc/shadow", "root:*:19000:0:99999:7:::\n", 0o640)
	write(t, r, "etc/gshadow", "root:*::\n", 0o640)
	write(t, r, "etc/nsswitch.conf", "passwd: files\ngroup: files\nshadow: files\ngshadow: files\n", 0o644)
	defs, err := os.ReadFile("/etc/login.defs")
	if err != nil {
		t.Fatalf("the host's /etc/login.defs (useradd reads it): %v", err)
	}
	write(t, r, "etc/login.defs", string(defs), 0o644)
	write(t, r, "usr/bin/systemctl", recordingSystemctl, 0o755)
	mustMkdir(t, filepath.Join(r, "dev"))
	if err := syscall.Mknod(filepath.Join(r, "dev/null"), syscall.S_IFCHR|0o666, 1<<8|3); err != nil {
		t.Fatalf("/dev/null in the root: %v", err)
	}
	if systemd {
		mustMkdir(t, filepath.Join(r, "run/systemd/system"))
	}
	return r
}

func mustMkdir(t *testing.T, p string) {
	t.Helper()
	if err := os.MkdirAll(p, 0o755); err != nil {
		t.Fatal(err)
	}
}

func write(t *testing.T, root, rel, body string, mode os.FileMode) {
	t.Helper()
	p := filepath.Join(root, rel)
	mustMkdir(t, filepath.Dir(p))
	if err := os.WriteFile(p, []byte(body), mode); err != nil {
		t.Fatal(err)
	}
}

// copyProgram copies a host program and the shared libraries ldd lists
// into the root, at the same paths.
func copyProgram(t *testing.T, root, name string) {
	t.Helper()
	path, err := exec.LookPath(name)
	if err != nil {
		path, err = exec.LookPath("/usr/sbin/" + name)
	}
	if err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	files := []string{path}
	out, err := exec.Command("ldd", path).Output()
	if err != nil {
		t.Fatalf("ldd %s: %v", path, err)
	}
	sc := bufio.NewScanner(strings.NewReader(string(out)))
	for sc.Scan() {
		for _, f := range strings.Fields(sc.Text()) {
			if strings.HasPrefix(f, "/") {
				files = append(files, f)
			}
		}
	}
	for _, f := range files {
		real, err := filepath.EvalSymlinks(f)
		if err != nil {
			t.Fatal(err)
		}
		b, err := os.ReadFile(real)
		if err != nil {
			t.Fatal(err)
		}
		// Write at the canonical path (the root's /bin, /sbin and /lib are
		// links into /usr, like the host's).
		write(t, root, strings.TrimPrefix(canonical(f), "/"), string(b), 0o755)
	}
}

// canonical resolves a path's directory through the host's symbolic links
// (/lib -> /usr/lib) but keeps its file name (libc.so.6 stays libc.so.6).
func canonical(p string) string {
	dir, err := filepath.EvalSymlinks(filepath.Dir(p))
	if err != nil {
		return p
	}
	return filepath.Join(dir, filepath.Base(p))
}

// dpkg runs dpkg on the root and returns its output; it fails the test
// when dpkg fails.
func dpkg(t *testing.T, root string, args ...string) string {
	t.Helper()
	full := append([]string{"--root=" + root, "--log=" + filepath.Join(root, "var/log/dpkg.log"),
		"--force-not-root", "--force-bad-path"}, args...)
	cmd := exec.Command("dpkg", full...)
	cmd.Env = append(os.Environ(), "PATH=/usr/sbin:/usr/bin:/sbin:/bin", "DEBIAN_FRONTEND=noninteractive")
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("dpkg %v: %v\n%s", args, err, out)
	}
	return string(out)
}

// account finds name in the root's passwd or group file.
func account(t *testing.T, root, file, name string) []string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(root, "etc", file))
	if err != nil {
		t.Fatal(err)
	}
	for _, line := range strings.Split(string(b), "\n") {
		if f := strings.Split(line, ":"); f[0] == name {
			return f
		}
	}
	return nil
}

func systemctlCalls(t *testing.T, root string) []string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(root, "systemctl.log"))
	if os.IsNotExist(err) {
		return nil
	}
	if err != nil {
		t.Fatal(err)
	}
	os.Remove(filepath.Join(root, "systemctl.log"))
	return strings.Split(strings.TrimSpace(string(b)), "\n")
}

func exists(root, rel string) bool {
	_, err := os.Lstat(filepath.Join(root, rel))
	return err == nil
}

func owner(t *testing.T, root, rel string) (uid, gid uint32, mode os.FileMode) {
	t.Helper()
	st, err := os.Stat(filepath.Join(root, rel))
	if err != nil {
		t.Fatal(err)
	}
	s := st.Sys().(*syscall.Stat_t)
	return s.Uid, s.Gid, st.Mode()
}

// TestInstall installs, upgrades, removes and purges the amd64 package in
// throw-away roots, running the real maintainer scripts: once as in a chroot
// or image build (no systemd: nothing systemd-related may happen) and once
// as on a machine systemd runs.
func TestInstall(t *testing.T) {
	need(t, "dpkg", haveTools("dpkg", "dpkg-deb", "ldd"))
	need(t, "root (dpkg runs maintainer scripts in a chroot)", os.Geteuid() == 0)
	deb := buildDebs(t, targets[:1])["amd64"]
	for _, tc := range []struct {
		name    string
		systemd bool
		calls   map[string][]string // systemctl calls per step
	}{
		{"chroot", false, map[string][]string{}},
		{"systemd", true, map[string][]string{
			"install": {"daemon-reload", "enable outpost.service", "start outpost.service"},
			"upgrade": {"daemon-reload", "try-restart outpost.service"},
			"remove":  {"disable --now outpost.service", "daemon-reload"},
			"purge":   {"daemon-reload"},
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			root := newRoot(t, tc.systemd)
			step := func(name string) {
				t.Helper()
				if got, want := strings.Join(systemctlCalls(t, root), "|"), strings.Join(tc.calls[name], "|"); got != want {
					t.Errorf("%s: systemctl calls %q, want %q", name, got, want)
				}
			}

			dpkg(t, root, "-i", deb)
			step("install")
			if !strings.Contains(dpkg(t, root, "-s", "outpost"), "Status: install ok installed") {
				t.Fatal("package not installed")
			}
			user := account(t, root, "passwd", "outpost")
			if user == nil || user[5] != "/var/lib/outpost" || user[6] != "/usr/sbin/nologin" {
				t.Fatalf("system user: %q", user)
			}
			group := account(t, root, "group", "outpost")
			if group == nil || group[2] != user[3] {
				t.Fatalf("group: %q (user's gid %s)", group, user[3])
			}
			if uid, gid, mode := owner(t, root, "etc/outpost/outpost.yaml"); uid != 0 || itoa(gid) != group[2] || mode.Perm() != 0o640 {
				t.Fatalf("configuration: uid %d gid %d mode %v", uid, gid, mode)
			}
			if uid, _, mode := owner(t, root, "var/lib/outpost"); itoa(uid) != user[2] || mode.Perm() != 0o700 || !mode.IsDir() {
				t.Fatalf("data directory: uid %d mode %v", uid, mode)
			}
			for _, args := range [][]string{{filepath.Join(root, "usr/bin/outpost"), "version"}, {"chroot", root, "/usr/bin/outpost", "version"}} {
				out, err := exec.Command(args[0], args[1:]...).CombinedOutput()
				if err != nil || !strings.HasPrefix(string(out), "outpost "+testVersion+" ") {
					t.Fatalf("%v: %v %q", args, err, out)
				}
			}
			// The shipped configuration loads in the installed binary.
			if out, err := exec.Command("chroot", root, "/usr/bin/outpost", "healthcheck", "--config", "/etc/outpost/outpost.yaml",
				"--rest-port", "-1", "--http-port", "-1", "--https-port", "-1", "--cot-port", "-1", "--ssl-cot-port", "-1", "--enroll-port", "-1").CombinedOutput(); !strings.Contains(string(out), "nothing to check") {
				t.Fatalf("outpost with the packaged configuration: %v %s", err, out)
			}

			// The admin's changes survive an upgrade (here: the same version
			// again, which runs the upgrade path of every script).
			conf := filepath.Join(root, "etc/outpost/outpost.yaml")
			f, _ := os.OpenFile(conf, os.O_APPEND|os.O_WRONLY, 0)
			f.WriteString("publicHost: tak.example.org\n")
			f.Close()
			os.Chmod(conf, 0o600)
			write(t, root, "var/lib/outpost/outpost.db", "data", 0o600)
			dpkg(t, root, "-i", deb)
			step("upgrade")
			if b, _ := os.ReadFile(conf); !strings.HasSuffix(string(b), "publicHost: tak.example.org\n") {
				t.Fatal("the upgrade replaced the edited configuration")
			}
			if _, _, mode := owner(t, root, "etc/outpost/outpost.yaml"); mode.Perm() != 0o600 {
				t.Fatalf("the upgrade reset the configuration's mode to %v", mode.Perm())
			}

			dpkg(t, root, "-r", "outpost")
			step("remove")
			if exists(root, "usr/bin/outpost") || exists(root, "lib/systemd/system/outpost.service") {
				t.Fatal("remove left the program or the unit")
			}
			if !exists(root, "etc/outpost/outpost.yaml") || !exists(root, "var/lib/outpost/outpost.db") || account(t, root, "passwd", "outpost") == nil {
				t.Fatal("remove must keep the configuration, the data and the user")
			}

			dpkg(t, root, "-P", "outpost")
			step("purge")
			for _, p := range []string{"etc/outpost", "var/lib/outpost"} {
				if exists(root, p) {
					t.Errorf("purge left %s", p)
				}
			}
			if account(t, root, "passwd", "outpost") != nil || account(t, root, "group", "outpost") != nil {
				t.Error("purge left the user or group")
			}
			if strings.Contains(dpkg(t, root, "-l"), "outpost") {
				t.Error("the package is still known to dpkg after purge")
			}
		})
	}
}

func itoa(n uint32) string {
	b := []byte{}
	for {
		b = append([]byte{byte('0' + n%10)}, b...)
		n /= 10
		if n == 0 {
			return string(b)
		}
	}
}
