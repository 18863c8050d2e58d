package main

import (
	"flag"
	"fmt"
	"text/tabwriter"
	"time"

	"outpost/appliance/admin"
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
			files, isUser, err := admin.CertIssue(c.cfg, c.log, args[0], *device, *out)
			if err != nil {
				fmt.Fprintf(c.stderr, "outpost cert issue: %v\n", err)
				return exitFailure
			}
			if isUser {
				fmt.Fprintf(c.stdout, "issued a certificate identifying the system user %s; wrote:\n", args[0])
			} else {
				fmt.Fprintf(c.stdout, "issued a certificate for %s (no system user has this name: it connects with the rights of an anonymous client, in __ANON__); wrote:\n", args[0])
			}
			for _, f := range files {
				fmt.Fprintf(c.stdout, "  %s\n", f)
			}
			fmt.Fprintln(c.stdout, "The .p12 files and the package are protected with the configured password (see secrets.yaml).")
			return exitOK
		case sub == "revoke" && len(args) == 1:
			n, err := admin.CertRevoke(c.cfg, c.log, args[0], *reason)
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
			certs, err := admin.CertList(c.cfg, c.log, name)
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
			path, err := admin.EnrollmentPackage(c.cfg, c.log, *device, *out)
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
