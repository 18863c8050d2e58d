package main

import (
	"context"
	"fmt"
	"strings"
	"text/tabwriter"

	"outpost/appliance/admin"
)

// pairFlag collects the repeated NAME=NAME values of --out or --in.
type pairFlag []string

func (p *pairFlag) String() string     { return strings.Join(*p, ",") }
func (p *pairFlag) Set(v string) error { *p = append(*p, v); return nil }

// groupFlags are `outpost federate groups`'s flags.
type groupFlags struct {
	out, in pairFlag
	clear   *bool
}

// federateGroups prints the group mapping of a federate, or replaces it
// with the pairs given (docs/federation.md "Groups").
func federateGroups(ctx context.Context, c *cmdContext, name string, g *groupFlags) int {
	if len(g.out) == 0 && len(g.in) == 0 && !*g.clear {
		m, err := admin.FederateGroups(ctx, c.cfg, c.log, name)
		if err != nil {
			fmt.Fprintf(c.stderr, "outpost federate groups: %v\n", err)
			return exitFailure
		}
		printGroupMapping(c, name, m)
		return exitOK
	}
	if *g.clear && (len(g.out) > 0 || len(g.in) > 0) {
		fmt.Fprintln(c.stderr, "outpost federate groups: --clear takes no --out or --in")
		return exitUsage
	}
	var m admin.GroupMapping
	for _, v := range g.out {
		local, fed, ok := strings.Cut(v, "=")
		if !ok {
			fmt.Fprintf(c.stderr, "outpost federate groups: --out %q: want LOCAL=FEDERATE\n", v)
			return exitUsage
		}
		m.Outbound = append(m.Outbound, admin.GroupPair{Local: local, Federate: fed})
	}
	for _, v := range g.in {
		fed, local, ok := strings.Cut(v, "=")
		if !ok {
			fmt.Fprintf(c.stderr, "outpost federate groups: --in %q: want FEDERATE=LOCAL\n", v)
			return exitUsage
		}
		m.Inbound = append(m.Inbound, admin.GroupPair{Local: local, Federate: fed})
	}
	if err := admin.SetFederateGroups(ctx, c.cfg, c.log, name, m); err != nil {
		fmt.Fprintf(c.stderr, "outpost federate groups: %v\n", err)
		return exitFailure
	}
	got, err := admin.FederateGroups(ctx, c.cfg, c.log, name)
	if err != nil {
		fmt.Fprintf(c.stderr, "outpost federate groups: %v\n", err)
		return exitFailure
	}
	printGroupMapping(c, name, got)
	return exitOK
}

func printGroupMapping(c *cmdContext, name string, m admin.GroupMapping) {
	if m.Empty() {
		fmt.Fprintf(c.stdout, "federate %s: no group mapping (__ANON__ both ways)\n", name)
		return
	}
	tw := tabwriter.NewWriter(c.stdout, 2, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "DIRECTION\tLOCAL GROUP\tFEDERATE GROUP")
	if len(m.Outbound) == 0 {
		fmt.Fprintln(tw, "out\t__ANON__\t__ANON__ (no mapping)")
	}
	for _, p := range m.Outbound {
		fmt.Fprintf(tw, "out\t%s\t%s\n", p.Local, p.Federate)
	}
	if len(m.Inbound) == 0 {
		fmt.Fprintln(tw, "in\t__ANON__\t(any: no mapping)")
	}
	for _, p := range m.Inbound {
		fmt.Fprintf(tw, "in\t%s\t%s\n", p.Local, p.Federate)
	}
	tw.Flush()
}
