package main

import (
	"bufio"
	"bytes"
	"debug/buildinfo"
	"debug/elf"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
)

// The package tests need dpkg (and, for the install test, root for the
// chroot dpkg runs maintainer scripts in). Without them they skip, except
// under CI, where that fails.
func need(t *testing.T, what string, ok bool) {
	t.Helper()
	if ok {
		return
	}
	if os.Getenv("CI") != "" || os.Getenv("OUTPOST_REQUIRE_TOOLS") == "1" {
		t.Fatalf("%s is needed under CI", what)
	}
	t.Skipf("%s is not available; skipping the package test", what)
}

func haveTools(names ...string) bool {
	for _, n := range names {
		if _, err := exec.LookPath(n); err != nil {
			return false
		}
	}
	return true
}

const testVersion = "9.8.7"

// target is one package: Debian architecture and the Go build behind it.
type target struct {
	arch, goarch, goarm string
	machine             elf.Machine
}

var targets = []target{
	{"amd64", "amd64", "", elf.EM_X86_64},
	{"arm64", "arm64", "", elf.EM_AARCH64},
	{"armhf", "arm", "6", elf.EM_ARM},
}

// buildDebs builds the binaries (as `make cross` does) and the packages
// (as `make deb` does, with build) into a temporary directory; the test's
// working directory becomes the repository root.
func buildDebs(t *testing.T, ts []target) map[string]string {
	t.Helper()
	root, err := filepath.Abs("../..")
	if err != nil {
		t.Fatal(err)
	}
	t.Chdir(root)
	bin, out := t.TempDir(), t.TempDir()
	debs := map[string]string{}
	for _, tg := range ts {
		exe := filepath.Join(bin, "outpost-"+tg.arch)
		cmd := exec.Command("go", "build", "-trimpath", "-ldflags", "-s -w -X outpost/appliance.version="+testVersion, "-o", exe, "./cmd/outpost")
		cmd.Env = append(os.Environ(), "CGO_ENABLED=0", "GOOS=linux", "GOARCH="+tg.goarch, "GOARM="+tg.goarm)
		if b, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("go build %s: %v\n%s", tg.arch, err, b)
		}
		deb, err := build("packaging/nfpm.yaml", out, tg.arch, exe, testVersion)
		if err != nil {
			t.Fatalf("package %s: %v", tg.arch, err)
		}
		debs[tg.arch] = deb
	}
	return debs
}

func dpkgDeb(t *testing.T, args ...string) string {
	t.Helper()
	out, err := exec.Command("dpkg-deb", args...).Output()
	if err != nil {
		t.Fatalf("dpkg-deb %v: %v", args, err)
	}
	return string(out)
}

// entry is one line of `dpkg-deb --contents`.
type entry struct{ mode, owner string }

func contents(t *testing.T, deb string) map[string]entry {
	t.Helper()
	m := map[string]entry{}
	sc := bufio.NewScanner(strings.NewReader(dpkgDeb(t, "--contents", deb)))
	for sc.Scan() {
		f := strings.Fields(sc.Text())
		if len(f) < 6 {
			continue
		}
		m[strings.TrimPrefix(f[len(f)-1], ".")] = entry{f[0], f[1]}
	}
	return m
}

// TestPackages checks every package's control fields, files, modes and
// conffile, and that it carries the binary of its architecture (armhf:
// built with GOARM=6, so it runs on ARMv6 Raspberry Pis).
func TestPackages(t *testing.T) {
	need(t, "dpkg-deb", haveTools("dpkg-deb"))
	debs := buildDebs(t, targets)
	for _, tg := range targets {
		t.Run(tg.arch, func(t *testing.T) {
			deb := debs[tg.arch]
			if want := "outpost_" + testVersion + "_" + tg.arch + ".deb"; filepath.Base(deb) != want {
				t.Fatalf("file name %s, want %s", filepath.Base(deb), want)
			}
			for field, want := range map[string]string{
				"Package": "outpost", "Version": testVersion, "Architecture": tg.arch, "Depends": "passwd", "Section": "net",
			} {
				if got := strings.TrimSpace(dpkgDeb(t, "--field", deb, field)); got != want {
					t.Errorf("%s: %q, want %q", field, got, want)
				}
			}
			if got := strings.TrimSpace(dpkgDeb(t, "--info", deb, "conffiles")); got != "/etc/outpost/outpost.yaml" {
				t.Errorf("conffiles: %q", got)
			}
			files := contents(t, deb)
			for path, want := range map[string]entry{
				"/usr/bin/outpost":                                       {"-rwxr-xr-x", "root/root"},
				"/lib/systemd/system/outpost.service":                    {"-rw-r--r--", "root/root"},
				"/etc/outpost/":                                          {"drwxr-xr-x", "root/root"},
				"/etc/outpost/outpost.yaml":                              {"-rw-r-----", "root/root"},
				"/usr/share/doc/outpost/README.md":                       {"-rw-r--r--", "root/root"},
				"/usr/share/doc/outpost/RELIABILITY.md":                  {"-rw-r--r--", "root/root"},
				"/usr/share/doc/outpost/docs/install.md":                 {"-rw-r--r--", "root/root"},
				"/usr/share/doc/outpost/docs/operations.md":              {"-rw-r--r--", "root/root"},
				"/usr/share/doc/outpost/docs/configuration.md":           {"-rw-r--r--", "root/root"},
				"/usr/share/doc/outpost/docs/img/console-invitation.png": {"-rw-r--r--", "root/root"},
			} {
				if got, ok := files[path]; !ok || got != want {
					t.Errorf("%s: %+v (present %v), want %+v", path, got, ok, want)
				}
			}
			unit := extract(t, deb, "./lib/systemd/system/outpost.service")
			shipped, _ := os.ReadFile("systemd/outpost.service")
			if !bytes.Equal(unit, shipped) {
				t.Error("the packaged unit differs from systemd/outpost.service")
			}
			for _, script := range []string{"postinst", "prerm", "postrm"} {
				if !strings.HasPrefix(dpkgDeb(t, "--info", deb, script), "#!/bin/sh\n") {
					t.Errorf("%s missing or not a shell script", script)
				}
			}

			bin := filepath.Join(t.TempDir(), "outpost")
			os.WriteFile(bin, extract(t, deb, "./usr/bin/outpost"), 0o755)
			ef, err := elf.Open(bin)
			if err != nil {
				t.Fatal(err)
			}
			defer ef.Close()
			if ef.Machine != tg.machine {
				t.Fatalf("binary is for %v, want %v", ef.Machine, tg.machine)
			}
			bi, err := buildinfo.ReadFile(bin)
			if err != nil {
				t.Fatal(err)
			}
			settings := map[string]string{}
			for _, s := range bi.Settings {
				settings[s.Key] = s.Value
			}
			if settings["CGO_ENABLED"] != "0" || settings["GOARCH"] != tg.goarch || settings["GOARM"] != tg.goarm {
				t.Fatalf("build settings %v, want CGO_ENABLED=0 GOARCH=%s GOARM=%q", settings, tg.goarch, tg.goarm)
			}
		})
	}
}

// extract returns one file of the package's data archive.
func extract(t *testing.T, deb, path string) []byte {
	t.Helper()
	cmd := exec.Command("sh", "-c", `dpkg-deb --fsys-tarfile "$1" | tar -xOf - "$2"`, "sh", deb, path)
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("extract %s: %v", path, err)
	}
	return out
}

func TestMain(m *testing.M) {
	if runtime.GOOS != "linux" {
		os.Exit(0)
	}
	os.Exit(m.Run())
}
