package main

import (
	"regexp"
	"strings"
	"testing"

	"outpost/appliance/config"
)

// flagLine matches the line PrintDefaults writes for the flag name.
func flagLine(name string) *regexp.Regexp {
	return regexp.MustCompile(`(?m)^  -` + regexp.QuoteMeta(name) + `\b`)
}

// TestUserHelp: `outpost user -h` shows how the command is called and its
// own flags, and only mentions the configuration flags.
func TestUserHelp(t *testing.T) {
	code, out, errOut := outpost(t, "user", "-h")
	if code != exitOK || out != "" {
		t.Fatalf("user -h: exit %d, stdout %q", code, out)
	}
	for _, want := range []string{"outpost user add NAME", "outpost user groups NAME", configFlagsNote} {
		if !strings.Contains(errOut, want) {
			t.Errorf("user -h does not say %q:\n%s", want, errOut)
		}
	}
	for _, own := range []string{"group", "role", "password-stdin"} {
		if !flagLine(own).MatchString(errOut) {
			t.Errorf("user -h does not list --%s:\n%s", own, errOut)
		}
	}
	for _, cfgFlag := range []string{"config", "data-dir", "max-connections", "log-level"} {
		if flagLine(cfgFlag).MatchString(errOut) {
			t.Errorf("user -h lists the configuration flag --%s:\n%s", cfgFlag, errOut)
		}
	}
	// `outpost help user` says the same on standard output.
	if code, out, _ := outpost(t, "help", "user"); code != exitOK || out != errOut {
		t.Errorf("help user: exit %d, output differs from user -h:\n%s", code, out)
	}
}

// TestCommandHelp: every command's -h lists none of the configuration
// flags and ends with the line that points at them; the flags are still
// accepted.
func TestCommandHelp(t *testing.T) {
	for name := range commands {
		if name == "run" {
			continue
		}
		code, _, errOut := outpost(t, name, "-h")
		if code != exitOK || !strings.HasPrefix(errOut, "usage:") {
			t.Errorf("%s -h: exit %d:\n%s", name, code, errOut)
			continue
		}
		if name != "version" && !strings.HasSuffix(errOut, configFlagsNote+"\n") {
			t.Errorf("%s -h does not end with the note on configuration flags:\n%s", name, errOut)
		}
		for _, k := range config.Describe() {
			if k.Flag != "" && flagLine(k.Flag).MatchString(errOut) {
				t.Errorf("%s -h lists the configuration flag --%s", name, k.Flag)
			}
		}
	}
	// The flags of a command's help are still parsed with the configuration flags.
	dir := t.TempDir()
	if code, out, errOut := outpost(t, "user", "list", "--data-dir", dir, "--log-level", "warn", "--max-connections", "5"); code != exitOK || !strings.Contains(out, "NAME") {
		t.Fatalf("user list with configuration flags: exit %d\n%s%s", code, out, errOut)
	}
	code, _, errOut := outpost(t, "user", "list", "--data-dir", dir, "--no-such-flag")
	if code != exitUsage || !strings.Contains(errOut, "not defined: -no-such-flag") || !strings.Contains(errOut, "outpost user add NAME") {
		t.Fatalf("an unknown flag: exit %d\n%s", code, errOut)
	}
}

// TestRunHelp: `outpost run -h` (and `outpost -h`) lists every flag of the
// server, each with its key and environment variable.
func TestRunHelp(t *testing.T) {
	for _, args := range [][]string{{"run", "-h"}, {"-h"}} {
		code, _, errOut := outpost(t, args...)
		if code != exitOK || !strings.HasPrefix(errOut, "usage: outpost [run]") {
			t.Fatalf("%v: exit %d:\n%s", args, code, errOut)
		}
		if !flagLine("config").MatchString(errOut) {
			t.Errorf("%v does not list --config", args)
		}
		n := 0
		for _, k := range config.Describe() {
			if k.Flag == "" {
				continue
			}
			n++
			if !flagLine(k.Flag).MatchString(errOut) || !strings.Contains(errOut, "key "+k.Key+", env "+k.Env) {
				t.Errorf("%v does not list --%s with its key and environment variable", args, k.Flag)
			}
		}
		if n < 50 {
			t.Fatalf("only %d flagged keys", n)
		}
	}
	if _, _, errOut := outpost(t, "run", "-h"); !strings.Contains(errOut, "(key historyRetention, env OUTPOST_HISTORY_RETENTION, default 7d)") {
		t.Errorf("run -h does not give --history-retention's default:\n%s", errOut)
	}
}
