package main

import (
	"bufio"
	"context"
	"flag"
	"fmt"
	"strings"
	"text/tabwriter"
	"time"

	"outpost/appliance"
)

const certUsage = `usage:
  outpost cert issue NAME [--device atak|itak|wintak] [--out DIR]
      issue a client certificate for NAME; write NAME.pem, NAME.key, NAME.p12 and
      the device's connection package (default directory: ClientPackages)
  outpost cert revoke NAME [--reason REASON]
      revoke every certificate issued to NAME; a running server disconnects it
  outpost cert list [NAME]
      list issued certificates and their revocation state
  outpost cert enrollment-package [--device atak|itak|wintak] [--out DIR]
      write the package a client imports to enroll with a user name and password
reasons: unspecified, key_compromise, ca_compromise, affiliation_changed,
         superseded, cessation_of_operation, privilege_withdrawn`

func setupCert(fs *flag.FlagSet) func(*cmdContext) int {
	device := fs.String("device", "atak", "client type of the connection package: atak, itak or wintak")
	out := fs.String("out", "", "directory for the files (default: the ClientPackages directory)")
	reason := fs.String("reason", "unspecified", "revocation reason (api.md §2.15)")
	return func(c *cmdContext) int {
		if len(c.args) == 0 {
			fmt.Fprintln(c.stderr, certUsage)
			return exitUsage
		}
		sub, args := c.args[0], c.args[1:]
		switch {
		case sub == "issue" && len(args) == 1:
			files, err := appliance.CertIssue(c.cfg, c.log, args[0], *device, *out)
			if err != nil {
				fmt.Fprintf(c.stderr, "outpost cert issue: %v\n", err)
				return exitFailure
			}
			fmt.Fprintf(c.stdout, "issued a certificate for %s; wrote:\n", args[0])
			for _, f := range files {
				fmt.Fprintf(c.stdout, "  %s\n", f)
			}
			fmt.Fprintln(c.stdout, "The .p12 files and the package are protected with the configured password (see secrets.yaml).")
			return exitOK
		case sub == "revoke" && len(args) == 1:
			n, err := appliance.CertRevoke(c.cfg, c.log, args[0], *reason)
			if err != nil {
				fmt.Fprintf(c.stderr, "outpost cert revoke: %v\n", err)
				return exitFailure
			}
			if n == 0 {
				fmt.Fprintf(c.stdout, "no unrevoked certificate was issued to %s\n", args[0])
				return exitOK
			}
			fmt.Fprintf(c.stdout, "revoked %d certificate(s) of %s (%s)\n", n, args[0], *reason)
			return exitOK
		case sub == "list" && len(args) <= 1:
			name := ""
			if len(args) == 1 {
				name = args[0]
			}
			certs, err := appliance.CertList(c.cfg, c.log, name)
			if err != nil {
				fmt.Fprintf(c.stderr, "outpost cert list: %v\n", err)
				return exitFailure
			}
			tw := tabwriter.NewWriter(c.stdout, 2, 4, 2, ' ', 0)
			fmt.Fprintln(tw, "NAME\tSERIAL\tEXPIRES\tSTATE")
			for _, ci := range certs {
				state := "valid"
				if ci.Revoked {
					state = "revoked " + ci.RevokedAt.UTC().Format(time.RFC3339) + " (" + ci.Reason + ")"
				}
				fmt.Fprintf(tw, "%s\t%s\t%s\t%s\n", ci.Name, ci.Serial, ci.NotAfter.UTC().Format("2006-01-02"), state)
			}
			tw.Flush()
			return exitOK
		case sub == "enrollment-package" && len(args) == 0:
			path, err := appliance.EnrollmentPackage(c.cfg, c.log, *device, *out)
			if err != nil {
				fmt.Fprintf(c.stderr, "outpost cert enrollment-package: %v\n", err)
				return exitFailure
			}
			fmt.Fprintf(c.stdout, "wrote %s\n", path)
			return exitOK
		}
		fmt.Fprintln(c.stderr, certUsage)
		return exitUsage
	}
}

const userUsage = `usage:
  outpost user add NAME [--group GROUP] [--password-stdin]
      create a system user; without --password-stdin a password is generated and printed once
  outpost user delete NAME
      delete the user and revoke every certificate issued to NAME
  outpost user list`

func setupUser(fs *flag.FlagSet) func(*cmdContext) int {
	group := fs.String("group", "", "the user's group or team")
	pwStdin := fs.Bool("password-stdin", false, "read the password from the first line of standard input")
	return func(c *cmdContext) int {
		if len(c.args) == 0 {
			fmt.Fprintln(c.stderr, userUsage)
			return exitUsage
		}
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		defer cancel()
		sub, args := c.args[0], c.args[1:]
		switch {
		case sub == "add" && len(args) == 1:
			password := ""
			if *pwStdin {
				line, err := bufio.NewReader(c.stdin).ReadString('\n')
				password = strings.TrimRight(line, "\r\n")
				if password == "" {
					fmt.Fprintf(c.stderr, "outpost user add: no password on standard input (%v)\n", err)
					return exitUsage
				}
			}
			u, generated, err := appliance.UserAdd(ctx, c.cfg, c.log, args[0], password, *group)
			if err != nil {
				fmt.Fprintf(c.stderr, "outpost user add: %v\n", err)
				return exitFailure
			}
			fmt.Fprintf(c.stdout, "created user %s (uid %s)\n", u.Name, u.UID)
			if generated != "" {
				fmt.Fprintf(c.stdout, "password: %s\n", generated)
			}
			fmt.Fprintf(c.stdout, "bearer token: %s\n(shown once: neither is stored in clear)\n", u.Token)
			return exitOK
		case sub == "delete" && len(args) == 1:
			n, err := appliance.UserDelete(ctx, c.cfg, c.log, args[0])
			if err != nil {
				fmt.Fprintf(c.stderr, "outpost user delete: %v\n", err)
				return exitFailure
			}
			fmt.Fprintf(c.stdout, "deleted user %s; revoked %d certificate(s)\n", args[0], n)
			return exitOK
		case sub == "list" && len(args) == 0:
			users, err := appliance.UserList(ctx, c.cfg, c.log)
			if err != nil {
				fmt.Fprintf(c.stderr, "outpost user list: %v\n", err)
				return exitFailure
			}
			tw := tabwriter.NewWriter(c.stdout, 2, 4, 2, ' ', 0)
			fmt.Fprintln(tw, "NAME\tUID\tGROUP\tCREATED")
			for _, u := range users {
				fmt.Fprintf(tw, "%s\t%s\t%s\t%s\n", u.Name, u.UID, u.Group, u.CreatedAt.UTC().Format(time.RFC3339))
			}
			tw.Flush()
			return exitOK
		}
		fmt.Fprintln(c.stderr, userUsage)
		return exitUsage
	}
}
