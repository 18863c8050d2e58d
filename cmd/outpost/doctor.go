package main

import (
	"context"
	"flag"
	"fmt"
	"text/tabwriter"
	"time"

	"outpost/appliance/admin"
)

// setupDoctor: `outpost doctor` checks a running appliance from the
// outside, as a client meets it, and says what to fix.
func setupDoctor(fs *flag.FlagSet) func(*cmdContext) int {
	host := fs.String("host", "", "the address clients use (default: publicHost)")
	tokenFile := fs.String("token-file", "", "file holding an administrator's API token, for the disk figures (default: admin.token in the data directory)")
	timeout := fs.Duration("timeout", 5*time.Second, "time allowed for each probe")
	return func(c *cmdContext) int {
		if len(c.args) > 0 {
			fmt.Fprintf(c.stderr, "outpost doctor: unexpected argument %q\n", c.args[0])
			return exitUsage
		}
		if *timeout <= 0 {
			fmt.Fprintln(c.stderr, "outpost doctor: --timeout must be positive")
			return exitUsage
		}
		findings := admin.Doctor(context.Background(), c.cfg, admin.DoctorOptions{Host: *host, TokenFile: *tokenFile, Timeout: *timeout})
		w := tabwriter.NewWriter(c.stdout, 2, 4, 2, ' ', 0)
		status := exitOK
		for _, f := range findings {
			fmt.Fprintf(w, "%s\t%s\t%s\t%s\n", f.Level, f.Check, f.Target, f.Detail)
			if f.Level == admin.LevelFail {
				status = exitFailure
			}
		}
		w.Flush()
		if status != exitOK {
			fmt.Fprintln(c.stdout, "\nsomething is wrong: see the FAIL lines")
		}
		return status
	}
}
