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
	var stdout, stderr bytes.Buffer
	code := run(args, strings.NewReader(""), &stdout, &stderr, func(string) (string, bool) { return "", false })
	return code, stdout.String(), stderr.String()
}

// port is the port of a "host:port" address.
func port(t *testing.T, addr string) string {
	t.Helper()
	_, p, err := net.SplitHostPort(addr)
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// closedPort is a loopback port nothing listens on.
func closedPort(t *testing.T) string { return strconv.Itoa(testkit.FreePort(t)) }
