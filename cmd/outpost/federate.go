package main

import (
	"flag"
	"fmt"
	"text/tabwriter"

	"outpost/appliance"
)

const federateUsage = `usage:
  outpost federate list
      this server's federation identity (name, server id, certificate subject and SHA-256
      fingerprint: what a federate's administrator trusts), the CAs of federationTrust and the
      federates of the configuration (docs/federation.md)`

func setupFederate(*flag.FlagSet) func(*cmdContext) int {
	return func(c *cmdContext) int {
		if len(c.args) != 1 || c.args[0] != "list" {
			fmt.Fprintln(c.stderr, federateUsage)
			return exitUsage
		}
		s, err := appliance.DescribeFederation(c.cfg, c.log)
		if err != nil {
			fmt.Fprintf(c.stderr, "outpost federate list: %v\n", err)
			return exitFailure
		}
		fmt.Fprintf(c.stdout, "name:        %s\nserver id:   %s\ncertificate: %s\nfingerprint: %s\n\n", s.Name, s.ServerID, s.Subject, s.Fingerprint)
		tw := tabwriter.NewWriter(c.stdout, 2, 4, 2, ' ', 0)
		fmt.Fprintln(tw, "TRUSTED CA\tFINGERPRINT")
		for _, ca := range s.Trusted {
			fmt.Fprintf(tw, "%s\t%s\n", ca.Subject, ca.Fingerprint)
		}
		tw.Flush()
		fmt.Fprintln(c.stdout)
		tw = tabwriter.NewWriter(c.stdout, 2, 4, 2, ' ', 0)
		fmt.Fprintln(tw, "FEDERATE\tADDRESS")
		for _, f := range s.Federates {
			fmt.Fprintf(tw, "%s\t%s\n", f.Name, f.Address)
		}
		tw.Flush()
		return exitOK
	}
}
