package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"time"

	"outpost/appliance/admin"
)

// setupHealthcheck: `outpost healthcheck` probes the server the
// configuration describes (for Docker HEALTHCHECK, monitoring, scripts).
func setupHealthcheck(fs *flag.FlagSet) func(*cmdContext) int {
	timeout := fs.Duration("timeout", 3*time.Second, "time allowed for each probe")
	return func(c *cmdContext) int {
		if len(c.args) > 0 {
			fmt.Fprintf(c.stderr, "outpost healthcheck: unexpected argument %q\n", c.args[0])
			return exitUsage
		}
		if *timeout <= 0 {
			fmt.Fprintln(c.stderr, "outpost healthcheck: --timeout must be positive")
			return exitUsage
		}
		checks := admin.Healthcheck(context.Background(), c.cfg, *timeout)
		if len(checks) == 0 {
			fmt.Fprintln(c.stderr, "outpost healthcheck: every listener is disabled; nothing to check")
			return exitFailure
		}
		status := exitOK
		for _, ch := range checks {
			if ch.Err != nil {
				fmt.Fprintf(c.stdout, "FAIL %-8s %s: %v\n", ch.Listener, ch.Addr, ch.Err)
				status = exitFailure
				continue
			}
			fmt.Fprintf(c.stdout, "ok   %-8s %s\n", ch.Listener, ch.Addr)
		}
		return status
	}
}

// cmdRestore replaces the database with a checked backup.
func cmdRestore(c *cmdContext) int {
	if len(c.args) != 1 {
		fmt.Fprintln(c.stderr, "usage: outpost restore [--config FILE] [--data-dir DIR] FILE")
		return exitUsage
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Hour)
	defer cancel()
	info, err := admin.Restore(ctx, c.cfg, c.args[0])
	if err != nil {
		fmt.Fprintf(c.stderr, "outpost restore: %v\n", err)
		if errors.Is(err, admin.ErrDatabaseInUse) {
			fmt.Fprintln(c.stderr, "stop the server first (outpost service stop), then restore again")
		}
		return exitFailure
	}
	fmt.Fprintf(c.stdout, "restored %s into %s (%d bytes, schema version %d)\n", c.args[0], c.cfg.DBPath(), info.Bytes, info.SchemaVersion)
	if info.Aside != "" {
		fmt.Fprintf(c.stdout, "the previous database is kept at %s; delete it once the restored one is in use\n", info.Aside)
	}
	return exitOK
}
