package main

import (
	"encoding/json"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"outpost/internal/testkit"
)

// TestInviteCommand: invite, list, revoke on one data directory; the PNG
// and the terminal drawing hold the device's code (the PNG read back by
// zbarimg); bad input is a usage error or a failure naming the problem.
func TestInviteCommand(t *testing.T) {
	dir := t.TempDir()
	data := []string{"--data-dir", dir, "--log-level", "warn", "--key-type", "ecdsa-p256", "--public-host", "tak.example.org"}
	if r := outpostIn(t, "", append([]string{"user", "add", "kim"}, data...)...); r.code != 0 {
		t.Fatalf("user add: %d %s", r.code, r.stderr)
	}

	png := filepath.Join(dir, "kim.png")
	r := outpostIn(t, "", append([]string{"invite", "kim", "--qr", "--png", png}, data...)...)
	if r.code != 0 {
		t.Fatalf("invite: %d %s", r.code, r.stderr)
	}
	var token string
	for _, line := range strings.Split(r.stdout, "\n") {
		if v, ok := strings.CutPrefix(line, "token: "); ok {
			token = v
		}
	}
	atak := "tak://com.atakmap.app/enroll?host=tak.example.org&username=kim&token=" + token
	for _, want := range []string{"for kim (atak), 1 use(s)", atak, "outpost,tak.example.org,8089,SSL",
		"https://tak.example.org:8446/Marti/api/tls/enrollment-package?device=wintak", "ATAK code:\n█", "wrote the ATAK code to " + png} {
		if len(token) != 43 || !strings.Contains(r.stdout, want) {
			t.Errorf("invite output lacks %q:\n%s", want, r.stdout)
		}
	}
	if fi, err := os.Stat(png); err != nil || fi.Mode().Perm() != 0o600 {
		t.Fatalf("png file: %v %v", fi, err)
	}
	img, _ := os.ReadFile(png)
	if got := testkit.DecodeQR(t, img); got != atak {
		t.Errorf("the PNG reads %q, want %q", got, atak)
	}

	// JSON, another device.
	r = outpostIn(t, "", append([]string{"invite", "kim", "--device", "itak", "--uses", "3", "--expires", "2d", "--json"}, data...)...)
	if r.code != 0 {
		t.Fatalf("invite --json: %d %s", r.code, r.stderr)
	}
	var j struct {
		ID, User, Device, Token string
		Uses                    int
		ATAK, ITAK              struct{ Text string }
		WinTAK                  struct{ URL string }
	}
	if err := json.Unmarshal([]byte(r.stdout), &j); err != nil {
		t.Fatalf("invite --json: %v\n%s", err, r.stdout)
	}
	if u, err := url.Parse(j.ATAK.Text); err != nil || u.Query().Get("token") != j.Token || j.Device != "itak" || j.Uses != 3 || j.ITAK.Text != "outpost,tak.example.org,8089,SSL" || j.WinTAK.URL == "" {
		t.Fatalf("invite --json: %s", r.stdout)
	}

	// List: both, no token; then revoke one.
	r = outpostIn(t, "", append([]string{"invite", "--list", "kim"}, data...)...)
	if r.code != 0 || strings.Count(r.stdout, "active") != 2 || strings.Contains(r.stdout, token) || strings.Contains(r.stdout, j.Token) {
		t.Fatalf("invite --list: %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	r = outpostIn(t, "", append([]string{"invite", "--revoke", j.ID}, data...)...)
	if r.code != 0 || !strings.Contains(r.stdout, "revoked invitation "+j.ID+" of kim") {
		t.Fatalf("invite --revoke: %d %s %s", r.code, r.stdout, r.stderr)
	}
	r = outpostIn(t, "", append([]string{"invite", "--list", "--json"}, data...)...)
	var list []struct{ ID, State string }
	if err := json.Unmarshal([]byte(r.stdout), &list); err != nil || len(list) != 2 {
		t.Fatalf("invite --list --json: %v %s", err, r.stdout)
	}
	for _, it := range list {
		if (it.ID == j.ID) != (it.State == "revoked") {
			t.Errorf("after revoking %s: %+v", j.ID, list)
		}
	}

	for _, c := range []struct {
		name string
		args []string
		code int
		msg  string
	}{
		{"no name", []string{"invite"}, 2, "usage:"},
		{"two names", []string{"invite", "kim", "lee"}, 2, "usage:"},
		{"list and revoke", []string{"invite", "--list", "--revoke", "x"}, 2, "usage:"},
		{"uses 0", []string{"invite", "kim", "--uses", "0"}, 2, "--uses"},
		{"uses 101", []string{"invite", "kim", "--uses", "101"}, 1, "uses must be between 1 and 100"},
		{"expires", []string{"invite", "kim", "--expires", "soon"}, 1, "not a duration"},
		{"expires 31d", []string{"invite", "kim", "--expires", "31d"}, 1, "30 days"},
		{"device", []string{"invite", "kim", "--device", "palm"}, 1, "device must be"},
		{"unknown user", []string{"invite", "nobody"}, 1, `no system user named "nobody"`},
		{"unknown user list", []string{"invite", "--list", "nobody"}, 1, `no system user named "nobody"`},
		{"unknown id", []string{"invite", "--revoke", "nope"}, 1, `no invitation with id "nope"`},
	} {
		r := outpostIn(t, "", append(c.args, data...)...)
		if r.code != c.code || !strings.Contains(r.stderr, c.msg) {
			t.Errorf("%s: exit %d, stderr %q; want %d and %q", c.name, r.code, r.stderr, c.code, c.msg)
		}
	}
	// Refusals stored nothing.
	r = outpostIn(t, "", append([]string{"invite", "--list", "--json"}, data...)...)
	if err := json.Unmarshal([]byte(r.stdout), &list); err != nil || len(list) != 2 {
		t.Fatalf("after refusals: %v %s", err, r.stdout)
	}
}
