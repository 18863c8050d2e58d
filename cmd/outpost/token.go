package main

import (
	"context"
	"flag"
	"fmt"
	"path/filepath"
	"text/tabwriter"
	"time"

	"outpost/appliance/admin"
)

const tokenUsage = `usage:
  outpost token create NAME
      create the API user NAME and print its bearer token (shown once; only its hash is stored)
  outpost token list
      list API users: names and creation times, never tokens
  outpost token revoke NAME
      delete the API user NAME; a running server refuses its token at once`

func setupToken(fs *flag.FlagSet) func(*cmdContext) int {
	return func(c *cmdContext) int {
		if len(c.args) == 0 {
			fmt.Fprintln(c.stderr, tokenUsage)
			return exitUsage
		}
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		defer cancel()
		sub, args := c.args[0], c.args[1:]
		switch {
		case sub == "create" && len(args) == 1:
			u, err := admin.TokenCreate(ctx, c.cfg, c.log, args[0])
			if err != nil {
				fmt.Fprintf(c.stderr, "outpost token create: %v\n", err)
				return exitFailure
			}
			fmt.Fprintf(c.stdout, "created API user %s\nbearer token: %s\n(shown once: only its hash is stored)\n", u.Name, u.Token)
			return exitOK
		case sub == "list" && len(args) == 0:
			users, err := admin.TokenList(ctx, c.cfg, c.log)
			if err != nil {
				fmt.Fprintf(c.stderr, "outpost token list: %v\n", err)
				return exitFailure
			}
			tw := tabwriter.NewWriter(c.stdout, 2, 4, 2, ' ', 0)
			fmt.Fprintln(tw, "NAME\tCREATED")
			for _, u := range users {
				fmt.Fprintf(tw, "%s\t%s\n", u.Name, u.CreatedAt.UTC().Format(time.RFC3339))
			}
			tw.Flush()
			if len(users) == 0 {
				fmt.Fprintf(c.stdout, "(no API user: the next start creates admin and writes its token to %s)\n",
					filepath.Join(c.cfg.DataDir, admin.AdminTokenFile))
			}
			return exitOK
		case sub == "revoke" && len(args) == 1:
			if err := admin.TokenRevoke(ctx, c.cfg, c.log, args[0]); err != nil {
				fmt.Fprintf(c.stderr, "outpost token revoke: %v\n", err)
				return exitFailure
			}
			fmt.Fprintf(c.stdout, "revoked the token of API user %s\n", args[0])
			return exitOK
		}
		fmt.Fprintln(c.stderr, tokenUsage)
		return exitUsage
	}
}
