package main

import (
	"context"
	"flag"
	"fmt"
	"text/tabwriter"
	"time"

	"outpost/appliance/admin"
	"outpost/appliance/fedhost"
)

const federateUsage = `usage:
  outpost federate list
      this server's federation identity (name, server id, certificate subject and SHA-256
      fingerprint: what a federate's administrator trusts), the CAs of federationTrust, the
      federates of the configuration and the managed federates (docs/federation.md)
  outpost federate add NAME [--address HOST:PORT] [--ca FILE] [--disabled] [--pin SHA256]
                           [--backoff-min DURATION] [--backoff-max DURATION] [--protocol v1|v2]
      a managed federate: connected to at --address (none: it connects here only), its
      certificate trusted when it chains to the CA certificates of the PEM file --ca (and,
      with --pin, only the certificate of that SHA-256 fingerprint); its outbound link
      reconnects after --backoff-min doubling up to --backoff-max (defaults 1s, 1m) and speaks
      federation --protocol v2 (the default, gRPC) or v1 (the legacy TLS stream)
  outpost federate enable|disable NAME
      its link starts or ends; the federate stays stored
  outpost federate edit NAME [--address HOST:PORT] [--pin SHA256] [--backoff-min D] [--backoff-max D]
                            [--protocol v1|v2]
      changes what the flags given name (--address "" inbound only, --pin "" no pin,
      --backoff-min/--backoff-max 0 the defaults); its link starts again as it now is
  outpost federate trust NAME FILE
      the CA certificates (PEM FILE) a managed federate's certificate must chain to
  outpost federate remove NAME
      its link ends, its CA is no longer trusted
  outpost federate groups NAME [--out LOCAL=FEDERATE]... [--in FEDERATE=LOCAL]... [--clear]
      the federate's group mapping (NAME: configured, managed, or a certificate's common name):
      without flags printed; with --out/--in replaced by those pairs (local groups must exist:
      a local group's events go out as the federate group; events of the federate group are
      published to the local group); --clear removes it (__ANON__ both ways)
  A running server on the same data directory picks a change up within seconds.`

func setupFederate(fs *flag.FlagSet) func(*cmdContext) int {
	address := fs.String("address", "", "federate add: host:port of the federate's federation listener (none: it connects here only)")
	caFile := fs.String("ca", "", "federate add: PEM file of the CA certificates the federate's certificate must chain to")
	disabled := fs.Bool("disabled", false, "federate add: stored, not used until enabled")
	pin := fs.String("pin", "", "federate add|edit: the SHA-256 fingerprint the federate's certificate must have (\"\": any of its CA)")
	backoffMin := fs.Duration("backoff-min", 0, "federate add|edit: first reconnect delay of its outbound link (0: 1s)")
	backoffMax := fs.Duration("backoff-max", 0, "federate add|edit: longest reconnect delay (0: 1m)")
	protocol := fs.String("protocol", "", "federate add|edit: the federation protocol of its outbound link, v2 or v1 (\"\": v2)")
	groups := &groupFlags{clear: fs.Bool("clear", false, "federate groups: remove the mapping (__ANON__ both ways)")}
	fs.Var(&groups.out, "out", "federate groups: LOCAL=FEDERATE, a local group's events go out as the federate group (repeatable)")
	fs.Var(&groups.in, "in", "federate groups: FEDERATE=LOCAL, the federate group's events are published to the local group (repeatable)")
	return func(c *cmdContext) int {
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		defer cancel()
		var err error
		switch {
		case len(c.args) == 1 && c.args[0] == "list":
			return federateList(ctx, c)
		case len(c.args) == 2 && c.args[0] == "add":
			err = admin.FederateAdd(ctx, c.cfg, c.log, admin.Federate{Name: c.args[1], Address: *address, Enabled: !*disabled,
				Pin: *pin, BackoffMin: *backoffMin, BackoffMax: *backoffMax, Protocol: *protocol}, *caFile)
		case len(c.args) == 2 && (c.args[0] == "enable" || c.args[0] == "disable"):
			on := c.args[0] == "enable"
			err = admin.FederateUpdate(ctx, c.cfg, c.log, c.args[1], admin.FederatePatch{Enabled: &on})
		case len(c.args) == 2 && c.args[0] == "edit":
			var p admin.FederatePatch
			fs.Visit(func(fl *flag.Flag) {
				switch fl.Name {
				case "address":
					p.Address = address
				case "pin":
					p.Pin = pin
				case "backoff-min":
					p.BackoffMin = backoffMin
				case "backoff-max":
					p.BackoffMax = backoffMax
				case "protocol":
					p.Protocol = protocol
				}
			})
			if p == (admin.FederatePatch{}) {
				fmt.Fprintln(c.stderr, "outpost federate edit: nothing to change (give --address, --pin, --backoff-min, --backoff-max or --protocol)")
				return exitUsage
			}
			err = admin.FederateUpdate(ctx, c.cfg, c.log, c.args[1], p)
		case len(c.args) == 3 && c.args[0] == "trust":
			err = admin.FederateTrust(ctx, c.cfg, c.log, c.args[1], c.args[2])
		case len(c.args) == 2 && c.args[0] == "groups":
			return federateGroups(ctx, c, c.args[1], groups)
		case len(c.args) == 2 && c.args[0] == "remove":
			err = admin.FederateRemove(ctx, c.cfg, c.log, c.args[1])
		default:
			fmt.Fprintln(c.stderr, federateUsage)
			return exitUsage
		}
		if err != nil {
			fmt.Fprintf(c.stderr, "outpost federate %s: %v\n", c.args[0], err)
			return exitFailure
		}
		fmt.Fprintf(c.stdout, "federate %s: %s done\n", c.args[1], c.args[0])
		return exitOK
	}
}

func federateList(ctx context.Context, c *cmdContext) int {
	s, err := fedhost.DescribeFederation(c.cfg, c.log)
	if err != nil {
		fmt.Fprintf(c.stderr, "outpost federate list: %v\n", err)
		return exitFailure
	}
	managed, err := admin.Federates(ctx, c.cfg, c.log)
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
	fmt.Fprintln(tw, "FEDERATE\tADDRESS\tSOURCE\tENABLED\tCA\tPIN")
	for _, f := range s.Federates {
		addr := f.Address
		if f.V1 {
			addr += "/v1" // federation v1, as the configuration writes it
		}
		fmt.Fprintf(tw, "%s\t%s\tconfig\tyes\tfederationTrust\t-\n", f.Name, addr)
	}
	for _, f := range managed {
		addr, on := f.Address, "yes"
		switch {
		case addr == "":
			addr = "(inbound only)"
		case f.Protocol == admin.FederateV1:
			addr += "/v1" // as the configuration's entries show it
		}
		if !f.Enabled {
			on = "no"
		}
		pinned := f.Pin
		if pinned == "" {
			pinned = "-"
		}
		fmt.Fprintf(tw, "%s\t%s\tmanaged\t%s\t%s\t%s\n", f.Name, addr, on, fedhost.CASummary(f.CAPEM), pinned)
	}
	tw.Flush()
	return exitOK
}
