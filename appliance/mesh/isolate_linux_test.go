package mesh

import (
	"os/exec"
	"runtime"
	"strings"
	"testing"

	"golang.org/x/sys/unix"
)

// isolate moves the test's goroutine, locked to its thread, into a network
// namespace of its own with multicast on loopback: every socket the test
// creates from here on (the bridge's, the devices') lives there, so the
// test's multicast never leaves it. The thread is discarded when the test
// ends (it stays locked). Needs root (CI runs as root).
func isolate(t *testing.T) {
	t.Helper()
	runtime.LockOSThread()
	if err := unix.Unshare(unix.CLONE_NEWNET); err != nil {
		t.Skipf("network namespaces refused (%v): the mesh tests need root", err)
	}
	// Children of a locked thread start in its namespace.
	for _, args := range [][]string{{"link", "set", "lo", "up"}, {"link", "set", "lo", "multicast", "on"}, {"route", "add", "224.0.0.0/4", "dev", "lo"}} {
		if out, err := exec.Command("ip", args...).CombinedOutput(); err != nil {
			t.Fatalf("ip %s: %v: %s", strings.Join(args, " "), err, out)
		}
	}
}
