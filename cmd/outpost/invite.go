package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"text/tabwriter"
	"time"

	"outpost/appliance/admin"
)

const inviteUsage = `usage:
  outpost invite NAME [--expires 24h] [--uses 1] [--device atak|itak|wintak] [--qr] [--png FILE] [--json]
      a one-time enrollment token for user NAME (shown once) and what a device needs to
      join with it: the ATAK code, the iTAK code and the WinTAK package link. --expires
      takes 90m, 24h, 7d (at most 30d); --uses 1-100; --qr draws the device's code
      here, --png writes it to FILE (mode 0600)
  outpost invite --list [NAME] [--json]
      invitations (every user's, or NAME's) with their state; never a token
  outpost invite --revoke ID
      the invitation enrolls nothing from now on`

func setupInvite(fs *flag.FlagSet) func(*cmdContext) int {
	expires := fs.String("expires", "24h", "how long the invitation is valid: 90m, 24h, 7d (at most 30d)")
	uses := fs.Int("uses", 1, "how many devices may enroll with it (1-100)")
	device := fs.String("device", "atak", "the device: atak, itak or wintak")
	drawQR := fs.Bool("qr", false, "draw the device's QR code in the terminal")
	pngFile := fs.String("png", "", "write the device's QR code as a PNG image to this file")
	asJSON := fs.Bool("json", false, "print JSON")
	list := fs.Bool("list", false, "list invitations (of NAME when given)")
	revoke := fs.String("revoke", "", "revoke the invitation with this id")
	return func(c *cmdContext) int {
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		defer cancel()
		switch {
		case *list && *revoke == "" && len(c.args) <= 1:
			name := ""
			if len(c.args) == 1 {
				name = c.args[0]
			}
			return inviteList(ctx, c, name, *asJSON)
		case *revoke != "" && !*list && len(c.args) == 0:
			inv, err := admin.RevokeInvitation(ctx, c.cfg, c.log, *revoke)
			if err != nil {
				fmt.Fprintf(c.stderr, "outpost invite --revoke: %v\n", err)
				return exitFailure
			}
			fmt.Fprintf(c.stdout, "revoked invitation %s of %s\n", inv.ID, inv.User)
			return exitOK
		case !*list && *revoke == "" && len(c.args) == 1:
			if *uses < 1 {
				fmt.Fprintf(c.stderr, "outpost invite: --uses must be 1 to 100\n")
				return exitUsage
			}
			inv, err := admin.Invite(ctx, c.cfg, c.log, c.args[0], admin.InviteOptions{Expires: *expires, Uses: *uses, Device: *device})
			if err != nil {
				fmt.Fprintf(c.stderr, "outpost invite: %v\n", err)
				return exitFailure
			}
			code := deviceCode(inv)
			if *pngFile != "" {
				if err := admin.WriteQRPNG(*pngFile, code); err != nil {
					fmt.Fprintf(c.stderr, "outpost invite: the invitation %s was made, but its code could not be written: %v\n", inv.ID, err)
					return exitFailure
				}
			}
			if *asJSON {
				return printJSON(c, inviteJSON(inv))
			}
			printInvitation(c, inv)
			if *drawQR {
				art, err := admin.QRTerminal(code)
				if err != nil {
					fmt.Fprintf(c.stderr, "outpost invite: %v\n", err)
					return exitFailure
				}
				fmt.Fprintf(c.stdout, "\n%s code:\n%s", deviceLabel(inv.Device), art)
			}
			if *pngFile != "" {
				fmt.Fprintf(c.stdout, "wrote the %s code to %s\n", deviceLabel(inv.Device), *pngFile)
			}
			return exitOK
		}
		fmt.Fprintln(c.stderr, inviteUsage)
		return exitUsage
	}
}

// deviceCode is what the invitation's device scans or opens.
func deviceCode(inv admin.Invitation) string {
	switch inv.Device {
	case "itak":
		return inv.Codes.ITAK
	case "wintak":
		return inv.Codes.WinTAK
	}
	return inv.Codes.ATAK
}

func deviceLabel(d string) string {
	switch d {
	case "itak":
		return "iTAK"
	case "wintak":
		return "WinTAK"
	}
	return "ATAK"
}

func printInvitation(c *cmdContext, inv admin.Invitation) {
	fmt.Fprintf(c.stdout, "invitation %s for %s (%s), %d use(s), expires %s\n", inv.ID, inv.User, inv.Device, inv.Uses, inv.Expires.UTC().Format(time.RFC3339))
	fmt.Fprintf(c.stdout, "token: %s\n(shown once: only its hash is stored)\n\n", inv.Token)
	fmt.Fprintf(c.stdout, "ATAK:   scan with ATAK (it enrolls and connects):\n  %s\n", inv.Codes.ATAK)
	fmt.Fprintf(c.stdout, "iTAK:   scan with iTAK, then sign in as %s with the token as password:\n  %s\n", inv.User, inv.Codes.ITAK)
	fmt.Fprintf(c.stdout, "WinTAK: open, sign in as %s with the token, import the package into WinTAK:\n  %s\n", inv.User, inv.Codes.WinTAK)
}

type inviteCodeJSON struct {
	Text string `json:"text,omitempty"`
	URL  string `json:"url,omitempty"`
}

func inviteJSON(inv admin.Invitation) any {
	return map[string]any{
		"id": inv.ID, "user": inv.User, "userId": inv.UserUID, "device": inv.Device,
		"created": inv.Created.UTC().Format(time.RFC3339), "expires": inv.Expires.UTC().Format(time.RFC3339),
		"uses": inv.Uses, "token": inv.Token,
		"atak": inviteCodeJSON{Text: inv.Codes.ATAK}, "itak": inviteCodeJSON{Text: inv.Codes.ITAK}, "wintak": inviteCodeJSON{URL: inv.Codes.WinTAK},
	}
}

func inviteList(ctx context.Context, c *cmdContext, name string, asJSON bool) int {
	list, err := admin.Invitations(ctx, c.cfg, c.log, name)
	if err != nil {
		fmt.Fprintf(c.stderr, "outpost invite --list: %v\n", err)
		return exitFailure
	}
	now := time.Now()
	if asJSON {
		out := make([]map[string]any, len(list))
		for i, inv := range list {
			out[i] = map[string]any{"id": inv.ID, "user": inv.User, "userId": inv.UserUID, "device": inv.Device,
				"created": inv.Created.UTC().Format(time.RFC3339), "expires": inv.Expires.UTC().Format(time.RFC3339),
				"uses": inv.Uses, "usesLeft": inv.UsesLeft, "state": inv.State(now), "createdBy": inv.CreatedBy}
		}
		return printJSON(c, out)
	}
	tw := tabwriter.NewWriter(c.stdout, 2, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "ID\tUSER\tDEVICE\tSTATE\tUSES LEFT\tEXPIRES\tCREATED BY")
	for _, inv := range list {
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%d/%d\t%s\t%s\n", inv.ID, inv.User, inv.Device, inv.State(now), inv.UsesLeft, inv.Uses,
			inv.Expires.UTC().Format(time.RFC3339), inv.CreatedBy)
	}
	tw.Flush()
	return exitOK
}

func printJSON(c *cmdContext, v any) int {
	enc := json.NewEncoder(c.stdout)
	enc.SetIndent("", "  ")
	if err := enc.Encode(v); err != nil {
		fmt.Fprintf(c.stderr, "outpost: %v\n", err)
		return exitFailure
	}
	return exitOK
}
