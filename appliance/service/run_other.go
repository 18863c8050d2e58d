//go:build !windows

package service

import "context"

// Run runs the daemon until SIGINT or SIGTERM (or ctx ends): memory limit,
// Open, READY=1 to systemd, watchdog pings while healthy, then STOPPING=1
// and Close within the shutdown timeout. Errors wrap ErrStart or
// ErrShutdown.
func Run(ctx context.Context, d Daemon) error { return runForeground(ctx, d) }
