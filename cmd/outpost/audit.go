package main

import (
	"context"
	"flag"
	"fmt"
	"text/tabwriter"
	"time"

	"outpost/appliance/admin"
	"outpost/appliance/config"
)

// auditBlock is how many records are aligned and printed together.
const auditBlock = 500

const auditUsage = `usage:
  outpost audit [--since DURATION] [--user NAME] [--limit N]
      print the management API calls made as system users, oldest first
      (--since 24h, 7d, ...; --user: a user name or uid; --limit: the newest N)`

func setupAudit(fs *flag.FlagSet) func(*cmdContext) int {
	since := fs.String("since", "", "only calls within this duration before now (e.g. 24h, 7d)")
	user := fs.String("user", "", "only calls of this system user (name or uid)")
	limit := fs.Int("limit", 0, "only the newest N calls (0: all)")
	return func(c *cmdContext) int {
		if len(c.args) != 0 {
			fmt.Fprintln(c.stderr, auditUsage)
			return exitUsage
		}
		var from time.Time
		if *since != "" {
			d, err := config.ParseDuration(*since)
			if err != nil || d <= 0 {
				fmt.Fprintf(c.stderr, "outpost audit: --since: %q is not a positive duration (e.g. 24h, 7d)\n", *since)
				return exitUsage
			}
			from = time.Now().Add(-d)
		}
		if *limit < 0 {
			fmt.Fprintln(c.stderr, "outpost audit: --limit must not be negative")
			return exitUsage
		}
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		defer cancel()
		// Printed as read: the columns line up within blocks of
		// auditBlock records, so the whole log is never held.
		tw := tabwriter.NewWriter(c.stdout, 2, 4, 2, ' ', 0)
		fmt.Fprintln(tw, "TIME\tUSER\tUID\tFROM\tMETHOD\tENDPOINT\tSTATUS\tBYTES\tBODY")
		n := 0
		err := admin.AuditList(ctx, c.cfg, c.log, from, *user, *limit, func(e admin.AuditEntry) error {
			fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\t%d\t%d\t%s\n", e.At.UTC().Format("2006-01-02T15:04:05.000Z"),
				e.UserName, e.UserUID, e.Remote, e.Method, e.Endpoint, e.Status, e.BodySize, e.Body)
			if n++; n%auditBlock == 0 {
				return tw.Flush()
			}
			return nil
		})
		tw.Flush()
		if err != nil {
			fmt.Fprintf(c.stderr, "outpost audit: %v\n", err)
			return exitFailure
		}
		return exitOK
	}
}
