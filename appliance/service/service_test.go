package service

import (
	"context"
	"errors"
	"log/slog"
	"net"
	"os"
	"path/filepath"
	"runtime/debug"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"outpost/internal/testkit"
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

// queued returns a datagram that is already queued, or "".
func queued(c *net.UnixConn) string {
	buf := make([]byte, 256)
	c.SetReadDeadline(time.Now().Add(time.Millisecond))
	n, err := c.Read(buf)
	if err != nil {
		return ""
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
	if err := Ready(); err == nil || !strings.Contains(err.Error(), "systemd notify READY=1") {
		t.Fatalf("a missing socket must be reported: %v", err)
	}
}

// TestWatchdogOnlyWhileHealthy: no WATCHDOG=1 while the health check fails,
// pings as soon as it passes again, and both transitions are logged.
func TestWatchdogOnlyWhileHealthy(t *testing.T) {
	c := listen(t)
	t.Setenv("WATCHDOG_USEC", "40000") // 40 ms: a check every 20 ms
	t.Setenv("WATCHDOG_PID", "")
	var healthy atomic.Bool
	var checks atomic.Int32
	health := func(ctx context.Context) error {
		if _, ok := ctx.Deadline(); !ok {
			t.Error("the health check must run with a deadline")
		}
		checks.Add(1)
		if healthy.Load() {
			return nil
		}
		return errors.New("store does not answer")
	}
	var logs testkit.Buffer
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() {
		defer close(done)
		Watchdog(ctx, health, slog.New(slog.NewTextHandler(&logs, nil)))
	}()
	defer func() { cancel(); <-done }()

	testkit.WaitFor(t, "three failing health checks", func() bool { return checks.Load() >= 3 })
	if got := queued(c); got != "" {
		t.Fatalf("pinged %q while unhealthy", got)
	}
	if n := strings.Count(logs.String(), "health check failed"); n != 1 {
		t.Fatalf("the failure must be logged once, not on every check (%d):\n%s", n, logs.String())
	}
	healthy.Store(true)
	if got := read(t, c); got != "WATCHDOG=1" {
		t.Fatalf("got %q", got)
	}
	testkit.WaitFor(t, "the recovery log line", func() bool { return strings.Contains(logs.String(), "pings resumed") })
}

func TestWatchdogNotConfigured(t *testing.T) {
	for _, tc := range []struct{ name, usec, pid string }{
		{"no WATCHDOG_USEC", "", ""},
		{"another process is watched", "20000", "1"},
		{"malformed", "soon", ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := listen(t)
			t.Setenv("WATCHDOG_USEC", tc.usec)
			t.Setenv("WATCHDOG_PID", tc.pid)
			done := make(chan struct{})
			go func() {
				defer close(done)
				Watchdog(context.Background(), nil, slog.New(slog.DiscardHandler))
			}()
			select {
			case <-done:
			case <-time.After(5 * time.Second):
				t.Fatal("Watchdog must return at once when no watchdog applies to us")
			}
			if got := queued(c); got != "" {
				t.Fatalf("sent %q", got)
			}
		})
	}
}

// fakeAppliance records what Run does with it.
type fakeAppliance struct {
	mu       sync.Mutex
	events   []string
	openErr  error
	closeErr error
	deadline time.Duration
}

func (f *fakeAppliance) record(e string) {
	f.mu.Lock()
	f.events = append(f.events, e)
	f.mu.Unlock()
}

func (f *fakeAppliance) Events() []string {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]string(nil), f.events...)
}

func (f *fakeAppliance) daemon() Daemon {
	return Daemon{
		Open: func(context.Context) error { f.record("open"); return f.openErr },
		Close: func(ctx context.Context) error {
			d, ok := ctx.Deadline()
			if ok {
				f.mu.Lock()
				f.deadline = time.Until(d)
				f.mu.Unlock()
			}
			f.record("close")
			return f.closeErr
		},
		ShutdownTimeout: 7 * time.Second,
		Log:             slog.New(slog.DiscardHandler),
	}
}

// TestRunLifecycle: READY only after Open returned, STOPPING before Close,
// Close with the shutdown deadline.
func TestRunLifecycle(t *testing.T) {
	c := listen(t)
	f := &fakeAppliance{}
	ctx, cancel := context.WithCancel(context.Background())
	errc := make(chan error, 1)
	go func() { errc <- Run(ctx, f.daemon()) }()
	if got := read(t, c); got != "READY=1" {
		t.Fatalf("got %q", got)
	}
	if ev := f.Events(); len(ev) != 1 || ev[0] != "open" {
		t.Fatalf("READY=1 before Open returned: %v", ev)
	}
	cancel()
	if got := read(t, c); got != "STOPPING=1" {
		t.Fatalf("got %q", got)
	}
	if err := <-errc; err != nil {
		t.Fatal(err)
	}
	if ev := f.Events(); len(ev) != 2 || ev[1] != "close" {
		t.Fatalf("events %v", ev)
	}
	if f.deadline <= 6*time.Second || f.deadline > 7*time.Second {
		t.Fatalf("Close got a deadline %v away, want the 7 s shutdown timeout", f.deadline)
	}
}

func TestRunErrors(t *testing.T) {
	t.Run("open fails", func(t *testing.T) {
		c := listen(t)
		f := &fakeAppliance{openErr: errors.New("address in use")}
		err := Run(context.Background(), f.daemon())
		if !errors.Is(err, ErrStart) || !strings.Contains(err.Error(), "address in use") {
			t.Fatalf("got %v, want ErrStart with the cause", err)
		}
		if got := queued(c); got != "" {
			t.Fatalf("sent %q although the server never ran", got)
		}
		if ev := f.Events(); len(ev) != 1 {
			t.Fatalf("Close must not run after a failed Open (Open cleans up): %v", ev)
		}
	})
	t.Run("close fails", func(t *testing.T) {
		listen(t)
		f := &fakeAppliance{closeErr: errors.New("flush timed out")}
		ctx, cancel := context.WithCancel(context.Background())
		cancel()
		err := Run(ctx, f.daemon())
		if !errors.Is(err, ErrShutdown) || !strings.Contains(err.Error(), "flush timed out") {
			t.Fatalf("got %v, want ErrShutdown with the cause", err)
		}
	})
}

func TestRunAppliesMemoryLimit(t *testing.T) {
	old := debug.SetMemoryLimit(-1)
	t.Cleanup(func() { debug.SetMemoryLimit(old) })
	f := &fakeAppliance{}
	d := f.daemon()
	d.MemoryLimit = 96 << 20
	var limitAtOpen int64
	open := d.Open
	d.Open = func(ctx context.Context) error {
		limitAtOpen = debug.SetMemoryLimit(-1)
		return open(ctx)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if err := Run(ctx, d); err != nil {
		t.Fatal(err)
	}
	if limitAtOpen != 96<<20 {
		t.Fatalf("memory limit at Open = %d, want %d", limitAtOpen, 96<<20)
	}

	// Zero leaves the runtime's setting alone.
	debug.SetMemoryLimit(123 << 20)
	d.MemoryLimit = 0
	if err := Run(ctx, d); err != nil {
		t.Fatal(err)
	}
	if limitAtOpen != 123<<20 {
		t.Fatalf("memoryLimit 0 changed the limit to %d", limitAtOpen)
	}
}

func TestRunAppliesGCPercent(t *testing.T) {
	old := debug.SetGCPercent(100)
	t.Cleanup(func() { debug.SetGCPercent(old) })
	f := &fakeAppliance{}
	d := f.daemon()
	var atOpen int
	open := d.Open
	d.Open = func(ctx context.Context) error {
		atOpen = debug.SetGCPercent(-1)
		debug.SetGCPercent(atOpen)
		return open(ctx)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	run := func(pct int) int {
		t.Helper()
		d.GCPercent = pct
		if err := Run(ctx, d); err != nil {
			t.Fatal(err)
		}
		return atOpen
	}
	if got := run(40); got != 40 {
		t.Fatalf("gc percent at Open = %d, want 40", got)
	}
	// Zero leaves the runtime's setting alone.
	debug.SetGCPercent(77)
	if got := run(0); got != 77 {
		t.Fatalf("gcPercent 0 changed the setting to %d", got)
	}
	// GOGC in the environment is the operator's choice: it wins.
	t.Setenv("GOGC", "77")
	if got := run(40); got != 77 {
		t.Fatalf("with GOGC set, the setting became %d", got)
	}
}

func TestMain(m *testing.M) {
	// The tests set NOTIFY_SOCKET themselves; one inherited from a
	// systemd-run test runner must not leak into them.
	os.Unsetenv("NOTIFY_SOCKET")
	os.Unsetenv("WATCHDOG_USEC")
	os.Exit(m.Run())
}
