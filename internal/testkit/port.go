package testkit

import (
	"net"
	"testing"
)

// FreePort returns a loopback TCP port nothing listened on a moment ago:
// another process may take it before it is used. Listen on port 0, or use
// OwnLoopback or ClosedPort (loopback.go) where that cannot happen.
func FreePort(t testing.TB) int {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port
}
