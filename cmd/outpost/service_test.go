package main

import (
	"strings"
	"testing"
)

func TestServiceUsage(t *testing.T) {
	for _, tc := range []struct {
		args []string
		code int
		want string
	}{
		{[]string{"service"}, exitUsage, "usage: outpost service"},
		{[]string{"service", "install", "extra"}, exitUsage, "usage: outpost service"},
		{[]string{"service", "launch", "--root", "/nonexistent-root"}, exitFailure, `unknown service action "launch"`},
	} {
		code, _, errOut := outpost(t, tc.args...)
		if code != tc.code || !strings.Contains(errOut, tc.want) {
			t.Errorf("%v: exit %d, want %d with %q: %s", tc.args, code, tc.code, tc.want, errOut)
		}
	}
}
