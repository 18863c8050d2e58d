package service

import (
	"os"
	"strings"
	"testing"
)

func shippedUnit(t *testing.T) []byte {
	t.Helper()
	b, err := os.ReadFile("../../systemd/outpost.service")
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func unitLines(b []byte, prefix string) []string {
	var out []string
	for _, l := range strings.Split(string(b), "\n") {
		if strings.HasPrefix(l, prefix) {
			out = append(out, l)
		}
	}
	return out
}

func TestRenderUnit(t *testing.T) {
	unit := shippedUnit(t)
	for _, tc := range []struct {
		name      string
		exe       string
		args      []string
		dataDir   string
		wantExec  string
		wantPaths []string
	}{
		{
			name: "package layout", exe: "/usr/bin/outpost",
			args:     []string{"run", "--config", "/etc/outpost/outpost.yaml", "--data-dir", "/var/lib/outpost"},
			dataDir:  "/var/lib/outpost",
			wantExec: "ExecStart=/usr/bin/outpost run --config /etc/outpost/outpost.yaml --data-dir /var/lib/outpost",
		},
		{
			name: "own data directory", exe: "/opt/outpost/outpost",
			args:      []string{"run", "--data-dir", "/srv/tak data"},
			dataDir:   "/srv/tak data",
			wantExec:  `ExecStart=/opt/outpost/outpost run --data-dir "/srv/tak data"`,
			wantPaths: []string{`ReadWritePaths="/srv/tak data"`},
		},
		{
			name: "specifiers and variables are escaped", exe: "/opt/out%post/outpost",
			args:      []string{"run", "--config", "/etc/$HOME.yaml"},
			dataDir:   "/var/lib/outpost/",
			wantExec:  "ExecStart=/opt/out%%post/outpost run --config /etc/$$HOME.yaml",
			wantPaths: nil,
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := RenderUnit(unit, tc.exe, tc.args, tc.dataDir)
			if err != nil {
				t.Fatal(err)
			}
			if l := unitLines(got, "ExecStart="); len(l) != 1 || l[0] != tc.wantExec {
				t.Fatalf("ExecStart lines %q, want %q", l, tc.wantExec)
			}
			if l := unitLines(got, "ReadWritePaths="); strings.Join(l, "|") != strings.Join(tc.wantPaths, "|") {
				t.Fatalf("ReadWritePaths lines %q, want %q", l, tc.wantPaths)
			}
			// Everything else, the hardening included, is the shipped unit.
			for _, l := range strings.Split(string(unit), "\n") {
				if !strings.HasPrefix(l, "ExecStart=") && !strings.Contains(string(got), l+"\n") {
					t.Errorf("line %q of the shipped unit is missing", l)
				}
			}
		})
	}
}

func TestRenderUnitErrors(t *testing.T) {
	unit := shippedUnit(t)
	for _, tc := range []struct {
		name    string
		unit    []byte
		exe     string
		args    []string
		dataDir string
		want    string
	}{
		{"relative executable", unit, "outpost", nil, "", "not an absolute path"},
		{"relative data directory", unit, "/usr/bin/outpost", nil, "data", "not an absolute path"},
		{"newline in an argument", unit, "/usr/bin/outpost", []string{"run\nExecStartPre=/bin/sh"}, "", "control character"},
		{"no ExecStart", []byte("[Service]\nType=notify\n"), "/usr/bin/outpost", nil, "", "no ExecStart"},
		{"two ExecStart", []byte("ExecStart=/a\nExecStart=/b\n"), "/usr/bin/outpost", nil, "", "more than one"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := RenderUnit(tc.unit, tc.exe, tc.args, tc.dataDir)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("got %v, want an error containing %q", err, tc.want)
			}
		})
	}
}

func TestSystemdQuote(t *testing.T) {
	for in, want := range map[string]string{
		"run":            "run",
		"":               `""`,
		"/a b/c":         `"/a b/c"`,
		`C:\x`:           `"C:\\x"`,
		`say "hi"`:       `"say \"hi\""`,
		"50%":            "50%%",
		"$PATH":          "$$PATH",
		"a;b":            `"a;b"`,
		"--log-level=de": "--log-level=de",
	} {
		got, err := systemdQuote(in)
		if err != nil || got != want {
			t.Errorf("systemdQuote(%q) = %q, %v; want %q", in, got, err, want)
		}
	}
}
