package testkit

import (
	"net"
	"testing"
)

// FreePort returns a loopback TCP port nothing listens on (it was free a
// moment ago). For configurations that need a fixed port, such as a
// service whose arguments are written at install time; everything else
// should listen on port 0.
func FreePort(t testing.TB) int {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port
}
