package service

import (
	"context"
	"fmt"
	"log/slog"
	"time"

	"github.com/coreos/go-systemd/v22/daemon"
)

// notify sends one state to systemd (sd_notify). Outside systemd
// (NOTIFY_SOCKET unset) it does nothing and returns nil.
func notify(state string) error {
	if _, err := daemon.SdNotify(false, state); err != nil {
		return fmt.Errorf("systemd notify %s: %w", state, err)
	}
	return nil
}

// Ready tells systemd the service is up: every listener is bound.
func Ready() error { return notify(daemon.SdNotifyReady) }

// Stopping tells systemd the service is shutting down.
func Stopping() error { return notify(daemon.SdNotifyStopping) }

// healthTimeout bounds one health check of the watchdog loop.
const healthTimeout = 2 * time.Second

// Watchdog sends WATCHDOG=1 at half the interval systemd asked for
// (WatchdogSec, passed as WATCHDOG_USEC) until ctx ends, but only while
// healthy (nil: always) returns nil. A process whose broker or store stops
// answering therefore stops pinging, and systemd restarts it when the
// interval runs out. It does nothing when no watchdog is configured.
func Watchdog(ctx context.Context, healthy func(context.Context) error, log *slog.Logger) {
	if log == nil {
		log = slog.Default()
	}
	interval, err := daemon.SdWatchdogEnabled(false)
	if err != nil {
		log.Warn("systemd watchdog settings are unreadable; not pinging", "err", err)
		return
	}
	if interval <= 0 {
		return
	}
	t := time.NewTicker(interval / 2)
	defer t.Stop()
	failing := false
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
		err := checkHealth(ctx, healthy, min(interval/4, healthTimeout))
		switch {
		case err != nil && !failing:
			log.Warn("health check failed; withholding systemd watchdog pings", "err", err)
		case err == nil && failing:
			log.Info("health check passes again; systemd watchdog pings resumed")
		}
		failing = err != nil
		if err != nil {
			continue
		}
		if err := notify(daemon.SdNotifyWatchdog); err != nil {
			log.Warn("could not ping the systemd watchdog", "err", err)
		}
	}
}

func checkHealth(ctx context.Context, healthy func(context.Context) error, timeout time.Duration) error {
	if healthy == nil {
		return nil
	}
	hctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	return healthy(hctx)
}
