package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestCommandsHappyPaths runs every offline subcommand on one data
// directory, the way an operator would.
func TestCommandsHappyPaths(t *testing.T) {
	dir := t.TempDir()
	data := []string{"--data-dir", dir, "--log-level", "warn", "--key-type", "ecdsa-p256"}
	steps := []struct {
		name   string
		stdin  string
		args   []string
		expect []string // substrings of stdout
	}{
		{"version", "", []string{"version"}, []string{"outpost ", "commit"}},
		{"help", "", []string{"help"}, []string{"commands:", "status", "cert"}},
		{"config", "", []string{"config"}, []string{"maxMessageBytes", "OUTPOST_MAX_CONNECTIONS_PER_SOURCE", "--http-body-timeout"}},
		{"user add (generated password)", "", append([]string{"user", "add", "alice", "--group", "Cyan"}, data...), []string{"created user alice", "password: ", "bearer token: "}},
		{"user add (password on stdin)", "s3cret pass\n", append([]string{"user", "add", "bob", "--password-stdin"}, data...), []string{"created user bob"}},
		{"user list", "", append([]string{"user", "list"}, data...), []string{"alice", "bob", "Cyan"}},
		{"cert issue", "", append([]string{"cert", "issue", "alice", "--device", "itak", "--out", filepath.Join(dir, "out")}, data...), []string{"issued a certificate identifying the system user alice", "alice.p12"}},
		{"cert list", "", append([]string{"cert", "list"}, data...), []string{"alice", "valid"}},
		{"cert enrollment-package", "", append([]string{"cert", "enrollment-package", "--device", "atak", "--out", filepath.Join(dir, "out")}, data...), []string{".zip"}},
		{"cert revoke", "", append([]string{"cert", "revoke", "alice", "--reason", "superseded"}, data...), []string{"revoked 1 certificate(s) of alice (superseded)"}},
		{"user delete", "", append([]string{"user", "delete", "bob"}, data...), []string{"of bob; deleted the user"}},
		{"backup", "", append([]string{"backup", filepath.Join(dir, "backup.db")}, data...), nil},
	}
	for _, s := range steps {
		r := outpostIn(t, s.stdin, s.args...)
		if r.code != 0 {
			t.Fatalf("%s: exit %d\nstdout: %s\nstderr: %s", s.name, r.code, r.stdout, r.stderr)
		}
		for _, want := range s.expect {
			if !strings.Contains(r.stdout, want) {
				t.Errorf("%s: stdout lacks %q:\n%s", s.name, want, r.stdout)
			}
		}
	}
	if fi, err := os.Stat(filepath.Join(dir, "backup.db")); err != nil || fi.Size() == 0 {
		t.Fatalf("backup file: %v", err)
	}
}

// TestCommandsBadInput: bad flags, arguments and configuration are usage
// errors (exit 2) with a message naming the problem; failures are exit 1.
func TestCommandsBadInput(t *testing.T) {
	dir := t.TempDir()
	cases := []struct {
		name string
		args []string
		code int
		msg  string
	}{
		{"unknown command", []string{"frobnicate"}, 2, "unknown command"},
		{"unknown flag", []string{"run", "--no-such-flag"}, 2, "no-such-flag"},
		{"bad port", []string{"run", "--cot-port", "99999", "--data-dir", dir}, 2, "cotPort"},
		{"bad duration", []string{"run", "--history-retention", "forever", "--data-dir", dir}, 2, "historyRetention"},
		{"negative limit", []string{"run", "--max-connections-per-source", "-1", "--data-dir", dir}, 2, "maxConnectionsPerSource"},
		{"stray argument to run", []string{"run", "extra", "--data-dir", dir}, 2, "unexpected argument"},
		{"cert without subcommand", []string{"cert", "--data-dir", dir}, 2, "usage:"},
		{"cert bad subcommand", []string{"cert", "explode", "--data-dir", dir}, 2, "usage:"},
		{"cert bad device", []string{"cert", "issue", "x", "--device", "blackberry", "--data-dir", dir, "--key-type", "ecdsa-p256"}, 1, "blackberry"},
		{"cert bad reason", []string{"cert", "revoke", "x", "--reason", "bored", "--data-dir", dir}, 1, "bored"},
		{"user without subcommand", []string{"user", "--data-dir", dir}, 2, "usage:"},
		{"user add without a name", []string{"user", "add", "--data-dir", dir}, 2, "usage:"},
		{"user delete unknown", []string{"user", "delete", "nobody", "--data-dir", dir}, 1, "not found"},
		{"user add empty stdin", []string{"user", "add", "x", "--password-stdin", "--data-dir", dir}, 2, "no password"},
		{"backup without a database", []string{"backup", filepath.Join(t.TempDir(), "x.db"), "--data-dir", t.TempDir()}, 1, "no database"},
	}
	for _, tc := range cases {
		r := outpostIn(t, "", tc.args...)
		if r.code != tc.code || !strings.Contains(r.stderr+r.stdout, tc.msg) {
			t.Errorf("%s: exit %d, output %q; want exit %d mentioning %q", tc.name, r.code, r.stderr+r.stdout, tc.code, tc.msg)
		}
	}
}
