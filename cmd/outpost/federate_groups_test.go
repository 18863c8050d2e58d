package main

import (
	"path/filepath"
	"strings"
	"testing"
)

// `outpost federate groups` prints a federate's group mapping, replaces it
// with the pairs given, removes it with --clear, and refuses bad input
// (a pair without '=', a local group that does not exist, a bad name)
// without changing it.
func TestFederateGroups(t *testing.T) {
	data := []string{"--data-dir", filepath.Join(t.TempDir(), "data"), "--log-level", "warn", "--key-type", "ecdsa-p256"}
	if code, out, errs := outpost(t, append([]string{"group", "add", "Blue"}, data...)...); code != 0 {
		t.Fatalf("group add: %d %s %s", code, out, errs)
	}
	for _, tc := range []struct {
		args []string
		code int
		want []string
	}{
		{[]string{"federate", "groups", "bravo"}, 0, []string{"no group mapping"}},
		{[]string{"federate", "groups", "bravo", "--out", "Blue=Cyan", "--out", "__ANON__=__ANON__", "--in", "Cyan=Blue"}, 0,
			[]string{"out Blue Cyan", "in Blue Cyan"}},
		{[]string{"federate", "groups", "bravo", "--out", "Red=Cyan"}, 1, []string{`no local group "Red"`}},
		{[]string{"federate", "groups", "bravo", "--in", "Cyan"}, 2, []string{"want FEDERATE=LOCAL"}},
		{[]string{"federate", "groups", "bravo", "--out", "Blue"}, 2, []string{"want LOCAL=FEDERATE"}},
		{[]string{"federate", "groups", "bravo", "--out", "Blue=", "--clear"}, 2, []string{"--clear takes no"}},
		{[]string{"federate", "groups", "bravo", "--out", "Blue="}, 1, []string{"federate is required"}},
		{[]string{"federate", "groups", strings.Repeat("x", 200)}, 1, []string{"federate must be"}},
		{[]string{"federate", "groups", "bravo"}, 0, []string{"out Blue Cyan", "out __ANON__ __ANON__", "in Blue Cyan"}},
		{[]string{"federate", "groups", "bravo", "--clear"}, 0, []string{"no group mapping"}},
		{[]string{"federate", "groups"}, 2, []string{"usage:"}},
	} {
		code, out, errs := outpost(t, append(tc.args, data...)...)
		words := strings.Join(strings.Fields(out+errs), " ") // columns as single spaces
		for _, w := range tc.want {
			if code != tc.code || !strings.Contains(words, w) {
				t.Errorf("%v: exit %d %q %q; want %d %q", tc.args, code, out, errs, tc.code, w)
			}
		}
	}
}
