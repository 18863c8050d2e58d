package main

import (
	"context"
	"fmt"
	"os"
	"time"

	"outpost/appliance/admin"
)

// cmdBackup writes a consistent copy of the database (VACUUM INTO); it works
// while a server has the database open.
func cmdBackup(c *cmdContext) int {
	if len(c.args) != 1 {
		fmt.Fprintln(c.stderr, "usage: outpost backup [--config FILE] [--data-dir DIR] FILE")
		return exitUsage
	}
	dest := c.args[0]
	ctx, cancel := context.WithTimeout(context.Background(), time.Hour)
	defer cancel()
	start := time.Now()
	if err := admin.Backup(ctx, c.cfg, dest); err != nil {
		fmt.Fprintf(c.stderr, "outpost backup: %v\n", err)
		return exitFailure
	}
	st, err := os.Stat(dest)
	if err != nil {
		fmt.Fprintf(c.stderr, "outpost backup: %v\n", err)
		return exitFailure
	}
	fmt.Fprintf(c.stdout, "backup written to %s (%d bytes, %v)\n", dest, st.Size(), time.Since(start).Round(time.Millisecond))
	return exitOK
}
