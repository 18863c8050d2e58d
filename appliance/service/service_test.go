package service

import (
	"context"
	"net"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// listen creates a unixgram socket standing in for systemd's notify socket.
func listen(t *testing.T) *net.UnixConn {
	t.Helper()
	path := filepath.Join(t.TempDir(), "notify.sock")
	c, err := net.ListenUnixgram("unixgram", &net.UnixAddr{Name: path, Net: "unixgram"})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	t.Setenv("NOTIFY_SOCKET", path)
	return c
}

func read(t *testing.T, c *net.UnixConn) string {
	t.Helper()
	buf := make([]byte, 256)
	c.SetReadDeadline(time.Now().Add(5 * time.Second))
	n, err := c.Read(buf)
	if err != nil {
		t.Fatal(err)
	}
	return string(buf[:n])
}

func TestNotify(t *testing.T) {
	c := listen(t)
	if err := Ready(); err != nil {
		t.Fatal(err)
	}
	if got := read(t, c); got != "READY=1" {
		t.Fatalf("got %q", got)
	}
	if err := Stopping(); err != nil {
		t.Fatal(err)
	}
	if got := read(t, c); got != "STOPPING=1" {
		t.Fatalf("got %q", got)
	}
}

func TestNotifyOutsideSystemd(t *testing.T) {
	t.Setenv("NOTIFY_SOCKET", "")
	if err := Ready(); err != nil {
		t.Fatalf("outside systemd Ready must be a no-op: %v", err)
	}
	t.Setenv("NOTIFY_SOCKET", filepath.Join(t.TempDir(), "missing.sock"))
	if err := Ready(); err == nil || !strings.Contains(err.Error(), "systemd notify") {
		t.Fatalf("a missing socket must be reported: %v", err)
	}
}

func TestWatchdog(t *testing.T) {
	c := listen(t)
	t.Setenv("WATCHDOG_USEC", "20000") // 20 ms: pings every 10 ms
	t.Setenv("WATCHDOG_PID", "")
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	go Watchdog(ctx, func() bool { return true })
	if got := read(t, c); got != "WATCHDOG=1" {
		t.Fatalf("got %q", got)
	}
}
