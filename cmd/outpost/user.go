package main

import (
	"bufio"
	"context"
	"flag"
	"fmt"
	"strings"
	"text/tabwriter"
	"time"

	"outpost/appliance/admin"
)

const userUsage = `usage:
  outpost user add NAME [--group G1,G2] [--role user|admin] [--password-stdin]
      create a system user in the groups named (made when needed; none: __ANON__);
      without --password-stdin a password is generated and printed once
  outpost user delete NAME
      revoke every certificate issued to NAME, then delete the user
  outpost user list
  outpost user role NAME user|admin
  outpost user groups NAME [GROUP[:in|out|both] ...]
      the user's groups become those given (none: __ANON__); a change applies to the
      user's open connections within seconds`

func setupUser(fs *flag.FlagSet) func(*cmdContext) int {
	group := fs.String("group", "", "the user's groups, separated by commas")
	role := fs.String("role", "", "the user's role: user (default) or admin")
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
			u, generated, err := admin.UserAdd(ctx, c.cfg, c.log, admin.NewUser{Name: args[0], Password: password, Groups: *group, Role: *role})
			if err != nil {
				fmt.Fprintf(c.stderr, "outpost user add: %v\n", err)
				return exitFailure
			}
			fmt.Fprintf(c.stdout, "created user %s (uid %s, role %s, groups %s)\n", u.Name, u.UID, u.Role, groupList(u))
			if generated != "" {
				fmt.Fprintf(c.stdout, "password: %s\n", generated)
			}
			fmt.Fprintf(c.stdout, "bearer token: %s\n(shown once: neither is stored in clear)\n", u.Token)
			return exitOK
		case sub == "delete" && len(args) == 1:
			n, err := admin.UserDelete(ctx, c.cfg, c.log, args[0])
			if err != nil {
				fmt.Fprintf(c.stderr, "outpost user delete: %v\n", err)
				return exitFailure
			}
			fmt.Fprintf(c.stdout, "revoked %d certificate(s) of %s; deleted the user\n", n, args[0])
			return exitOK
		case sub == "list" && len(args) == 0:
			list, err := admin.UserList(ctx, c.cfg, c.log)
			if err != nil {
				fmt.Fprintf(c.stderr, "outpost user list: %v\n", err)
				return exitFailure
			}
			tw := tabwriter.NewWriter(c.stdout, 2, 4, 2, ' ', 0)
			fmt.Fprintln(tw, "NAME\tUID\tROLE\tGROUPS\tCREATED")
			for _, u := range list {
				fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\n", u.Name, u.UID, u.Role, groupList(u), u.CreatedAt.UTC().Format(time.RFC3339))
			}
			tw.Flush()
			return exitOK
		case sub == "role" && len(args) == 2:
			u, err := admin.UserRole(ctx, c.cfg, c.log, args[0], strings.ToLower(args[1]))
			if err != nil {
				fmt.Fprintf(c.stderr, "outpost user role: %v\n", err)
				return exitFailure
			}
			fmt.Fprintf(c.stdout, "%s is now %s\n", u.Name, u.Role)
			return exitOK
		case sub == "groups" && len(args) >= 1:
			ms, err := parseMemberships(args[1:])
			if err != nil {
				fmt.Fprintf(c.stderr, "outpost user groups: %v\n", err)
				return exitUsage
			}
			u, err := admin.UserGroups(ctx, c.cfg, c.log, args[0], ms)
			if err != nil {
				fmt.Fprintf(c.stderr, "outpost user groups: %v\n", err)
				return exitFailure
			}
			fmt.Fprintf(c.stdout, "%s is in %s\n", u.Name, groupList(u))
			return exitOK
		}
		fmt.Fprintln(c.stderr, userUsage)
		return exitUsage
	}
}

// parseMemberships reads GROUP[:in|out|both] arguments.
func parseMemberships(args []string) ([]admin.Membership, error) {
	ms := make([]admin.Membership, 0, len(args))
	for _, a := range args {
		name, dir, _ := strings.Cut(a, ":")
		m := admin.Membership{Group: name}
		if !m.SetDirection(dir) {
			return nil, fmt.Errorf("%q: the direction after the colon is in, out or both", a)
		}
		ms = append(ms, m)
	}
	return ms, nil
}

// groupList shows a user's groups: name, and the direction when not both.
func groupList(u admin.User) string {
	if len(u.Groups) == 0 {
		return admin.AnonGroupName
	}
	parts := make([]string, len(u.Groups))
	for i, m := range u.Groups {
		parts[i] = m.Group
		if d := m.Direction(); d != "BOTH" {
			parts[i] += ":" + strings.ToLower(d)
		}
	}
	return strings.Join(parts, ",")
}

const groupUsage = `usage:
  outpost group add NAME [--description TEXT]
  outpost group list
  outpost group remove NAME
      delete the group: its members leave it, and what was shared with it alone is
      then visible to administrators only`

func setupGroup(fs *flag.FlagSet) func(*cmdContext) int {
	desc := fs.String("description", "", "what the group is for")
	return func(c *cmdContext) int {
		if len(c.args) == 0 {
			fmt.Fprintln(c.stderr, groupUsage)
			return exitUsage
		}
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		defer cancel()
		sub, args := c.args[0], c.args[1:]
		switch {
		case sub == "add" && len(args) == 1:
			g, err := admin.GroupAdd(ctx, c.cfg, c.log, args[0], *desc)
			if err != nil {
				fmt.Fprintf(c.stderr, "outpost group add: %v\n", err)
				return exitFailure
			}
			fmt.Fprintf(c.stdout, "created group %s (bit %d)\n", g.Name, g.Bit)
			return exitOK
		case sub == "list" && len(args) == 0:
			groups, members, err := admin.GroupList(ctx, c.cfg, c.log)
			if err != nil {
				fmt.Fprintf(c.stderr, "outpost group list: %v\n", err)
				return exitFailure
			}
			tw := tabwriter.NewWriter(c.stdout, 2, 4, 2, ' ', 0)
			fmt.Fprintln(tw, "NAME\tBIT\tMEMBERS\tDESCRIPTION")
			for _, g := range groups {
				fmt.Fprintf(tw, "%s\t%d\t%s\t%s\n", g.Name, g.Bit, strings.Join(members[g.Name], ","), g.Description)
			}
			tw.Flush()
			return exitOK
		case sub == "remove" && len(args) == 1:
			if err := admin.GroupRemove(ctx, c.cfg, c.log, args[0]); err != nil {
				fmt.Fprintf(c.stderr, "outpost group remove: %v\n", err)
				return exitFailure
			}
			fmt.Fprintf(c.stdout, "deleted group %s\n", args[0])
			return exitOK
		}
		fmt.Fprintln(c.stderr, groupUsage)
		return exitUsage
	}
}
