package main

import (
	"bytes"
	"net"
	"strconv"
	"strings"
	"testing"

	"outpost/internal/testkit"
)

// outpost runs the command in-process with an empty environment and
// returns its exit status and output.
func outpost(t *testing.T, args ...string) (int, string, string) {
	t.Helper()
	r := outpostIn(t, "", args...)
	return r.code, r.stdout, r.stderr
}

// result is one in-process run of the command line.
type result struct {
	code           int
	stdout, stderr string
}

// outpostIn runs the command line in-process with args and stdin.
func outpostIn(t *testing.T, stdin string, args ...string) result {
	t.Helper()
	var out, errb bytes.Buffer
	code := run(args, strings.NewReader(stdin), &out, &errb, noEnv)
	return result{code, out.String(), errb.String()}
}

func noEnv(string) (string, bool) { return "", false }

// port is the port of a "host:port" address.
func port(t *testing.T, addr string) string {
	t.Helper()
	_, p, err := net.SplitHostPort(addr)
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// closedPort is a loopback port nothing listens on, or can while the test
// runs.
func closedPort(t *testing.T) string { return strconv.Itoa(testkit.ClosedPort(t)) }
