package service

import (
	"context"
	"fmt"
	"net"
	"os"
	"os/signal"
	"strconv"
	"syscall"
	"time"
)

// SignalContext returns a context cancelled by SIGINT or SIGTERM (on
// Windows, Ctrl-C and the service stop request arrive as os.Interrupt).
func SignalContext(parent context.Context) (context.Context, context.CancelFunc) {
	return signal.NotifyContext(parent, os.Interrupt, syscall.SIGTERM)
}

// Notify sends one state line to systemd (sd_notify). Outside systemd
// (NOTIFY_SOCKET unset) it does nothing and returns nil.
func Notify(state string) error {
	path := os.Getenv("NOTIFY_SOCKET")
	if path == "" {
		return nil
	}
	if path[0] == '@' { // abstract socket namespace
		path = "\x00" + path[1:]
	}
	conn, err := net.DialUnix("unixgram", nil, &net.UnixAddr{Name: path, Net: "unixgram"})
	if err != nil {
		return fmt.Errorf("systemd notify: %w", err)
	}
	defer conn.Close()
	conn.SetWriteDeadline(time.Now().Add(time.Second))
	if _, err := conn.Write([]byte(state)); err != nil {
		return fmt.Errorf("systemd notify: %w", err)
	}
	return nil
}

// Ready tells systemd the service is up.
func Ready() error { return Notify("READY=1") }

// Stopping tells systemd the service is shutting down.
func Stopping() error { return Notify("STOPPING=1") }

// Watchdog sends WATCHDOG=1 at half the interval systemd asked for
// (WATCHDOG_USEC) until ctx ends, as long as healthy reports true. It does
// nothing when no watchdog is configured.
func Watchdog(ctx context.Context, healthy func() bool) {
	usec, err := strconv.ParseInt(os.Getenv("WATCHDOG_USEC"), 10, 64)
	if err != nil || usec <= 0 {
		return
	}
	if pid := os.Getenv("WATCHDOG_PID"); pid != "" && pid != strconv.Itoa(os.Getpid()) {
		return
	}
	t := time.NewTicker(time.Duration(usec) * time.Microsecond / 2)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
			if healthy == nil || healthy() {
				Notify("WATCHDOG=1")
			}
		}
	}
}
