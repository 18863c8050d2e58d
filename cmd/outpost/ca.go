package main

import (
	"crypto/x509"
	"errors"
	"flag"
	"fmt"
	"strings"
	"time"

	"outpost/appliance/admin"
)

const caUsage = `usage:
  outpost ca import --cert CA.pem --key CA.key [--chain ISSUERS.pem ...] [--trust-previous]
      replace this appliance's CA with your organisation's: a root, or an
      intermediate with its issuers up to the root (--chain, or after the CA in
      --cert). Devices that trust that root then trust this server as they are.
      The server must be stopped. The server certificate is reissued; client
      certificates of the replaced CA are refused from the next start (users
      enroll again) unless --trust-previous keeps accepting them.`

func setupCA(fs *flag.FlagSet) func(*cmdContext) int {
	certFile := fs.String("cert", "", "PEM file of the CA certificate (its issuers may follow it)")
	keyFile := fs.String("key", "", "PEM file of the CA's unencrypted private key")
	var chain []string
	fs.Func("chain", "PEM file of the CA's issuers, its own issuer first, up to the root (repeatable)", func(s string) error {
		chain = append(chain, s)
		return nil
	})
	trustPrevious := fs.Bool("trust-previous", false, "keep accepting client certificates of the replaced CA until you delete ca-previous.pem")
	return func(c *cmdContext) int {
		if len(c.args) != 1 || c.args[0] != "import" || *certFile == "" || *keyFile == "" {
			fmt.Fprintln(c.stderr, caUsage)
			return exitUsage
		}
		res, err := admin.CAImport(c.cfg, c.log, *certFile, *keyFile, chain, *trustPrevious)
		if err != nil {
			fmt.Fprintf(c.stderr, "outpost ca import: %v\n", err)
			if errors.Is(err, admin.ErrDatabaseInUse) {
				fmt.Fprintln(c.stderr, "stop the server first (outpost service stop), then import again")
			}
			return exitFailure
		}
		ca := res.Chain[0]
		fmt.Fprintf(c.stdout, "imported the CA %q (valid until %s)\n", ca.Subject.CommonName, ca.NotAfter.UTC().Format(time.DateOnly))
		if len(res.Chain) > 1 {
			names := make([]string, 0, len(res.Chain)-1)
			for _, x := range res.Chain[1:] {
				names = append(names, fmt.Sprintf("%q", x.Subject.CommonName))
			}
			fmt.Fprintf(c.stdout, "chain up to the root: %s; the server sends it, truststores and enrollment answers carry it\n", strings.Join(names, " <- "))
		}
		s := res.Server
		fmt.Fprintf(c.stdout, "reissued the server certificate for %s (valid until %s)\n",
			strings.Join(append(append([]string{}, s.DNSNames...), ipStrings(s)...), ", "), s.NotAfter.UTC().Format(time.DateOnly))
		for _, w := range res.Warnings {
			fmt.Fprintf(c.stdout, "warning: %s\n", w)
		}
		if res.Previous != "" {
			fmt.Fprintf(c.stdout, "client certificates of the replaced CA stay accepted until you delete %s\n", res.Previous)
		} else {
			fmt.Fprintln(c.stdout, "client certificates of the replaced CA are refused from the next start: users enroll again, or get new packages (outpost cert issue)")
		}
		if len(res.Backups) > 0 {
			fmt.Fprintf(c.stdout, "the replaced CA is kept at %s (import it again to roll back; delete it when no longer needed)\n", strings.Join(res.Backups, " and "))
		}
		fmt.Fprintln(c.stdout, "start the server to use the new CA (outpost service start)")
		return exitOK
	}
}

func ipStrings(c *x509.Certificate) []string {
	out := make([]string, 0, len(c.IPAddresses))
	for _, ip := range c.IPAddresses {
		out = append(out, ip.String())
	}
	return out
}
