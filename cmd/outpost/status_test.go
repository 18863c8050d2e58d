package main

import (
	"bytes"
	"net"
	"strconv"
	"strings"
	"testing"
	"time"

	"outpost/appliance/takclient"
	"outpost/internal/testkit"
)

// TestStatus runs `outpost status` in-process against the real binary
// running on the same data directory.
func TestStatus(t *testing.T) {
	dataDir := t.TempDir()
	p := testkit.Start(t, dataDir)
	_, port, _ := net.SplitHostPort(p.Addr(t, "rest"))
	c, err := takclient.Dial(p.Addr(t, "cot-tcp"), nil)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	c.Send(takclient.SA("STATUS-1", "S1", 1, 1))
	testkit.WaitForWithin(t, 10*time.Second, "the SA to be counted", func() bool {
		var out, errb bytes.Buffer
		code := run([]string{"status", "--data-dir", dataDir, "--bind", "127.0.0.1", "--rest-port", port}, nil, &out, &errb, noEnv)
		return code == 0 && strings.Contains(out.String(), "position 1") && strings.Contains(out.String(), "cot-tcp")
	})
	var out, errb bytes.Buffer
	if code := run([]string{"status", "--data-dir", dataDir, "--bind", "127.0.0.1", "--rest-port", port}, nil, &out, &errb, noEnv); code != 0 {
		t.Fatalf("exit %d: %s", code, errb.String())
	}
	for _, want := range []string{"up", "memory", "listener", "cot-tcp", "events in", "sessions closed", "history", "disk"} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("status output lacks %q:\n%s", want, out.String())
		}
	}
	// No server: a clear failure, exit 1.
	free := testkit.ClosedPort(t)
	errb.Reset()
	if code := run([]string{"status", "--data-dir", t.TempDir(), "--rest-port", strconv.Itoa(free)}, nil, &out, &errb, noEnv); code != 1 ||
		!strings.Contains(errb.String(), "no server answers") {
		t.Fatalf("without a server: exit %d, %q", code, errb.String())
	}
	// A stray argument is a usage error.
	if code := run([]string{"status", "extra", "--data-dir", dataDir}, nil, &out, &errb, noEnv); code != 2 {
		t.Fatalf("stray argument: exit %d", code)
	}
}
