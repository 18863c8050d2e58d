package admin

// `outpost doctor`: a running appliance checked from the outside, the way a
// TAK client meets it (operations.md "outpost doctor"). Every enabled port must
// accept a connection on the public host; the TLS ports must present a
// certificate that chains to the appliance's CA, names the public host and
// is not about to expire; the revocation list must be readable and current;
// the server's clock must agree with this machine's (TLS validity and CoT
// stale times depend on it); the disk must be above the reserve. Each
// finding says what to fix. The probes are Healthcheck's (probeTargets,
// checkDial, checkAlive); the disk figures are `outpost status`'s
// (admin.StatusOf).

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"net"
	"strconv"
	"strings"
	"time"

	"outpost/appliance/config"
	"outpost/appliance/netx"
	"outpost/appliance/pki"
)

// Doctor's thresholds.
const (
	doctorCertWarn = 30 * 24 * time.Hour // a certificate expiring sooner is a warning
	doctorClockMax = 2 * time.Minute     // more skew than this is a warning
)

// Level is how bad a finding is.
type Level int

// Finding levels.
const (
	LevelOK Level = iota
	LevelWarn
	LevelFail
)

func (l Level) String() string {
	switch l {
	case LevelOK:
		return "OK"
	case LevelWarn:
		return "WARN"
	default:
		return "FAIL"
	}
}

// Finding is the result of one check: what was checked, where, how it
// went, and what was seen or what to fix.
type Finding struct {
	Check  string // a listener name, "ca", "crl", "clock" or "disk"
	Target string // host:port or a file
	Level  Level
	Detail string
}

// DoctorOptions say where to look. Zero values take the defaults.
type DoctorOptions struct {
	Host      string        // default: publicHost
	TokenFile string        // admin token for the disk figures; default: the data directory's admin.token
	Timeout   time.Duration // per probe; default 5 s
	Now       func() time.Time
}

// Doctor runs every check against the appliance cfg describes.
func Doctor(ctx context.Context, cfg config.Config, o DoctorOptions) []Finding {
	if o.Host == "" {
		o.Host = cfg.PublicHost
	}
	o.Host = strings.Trim(o.Host, "[]")
	if o.Timeout <= 0 {
		o.Timeout = 5 * time.Second
	}
	if o.Now == nil {
		o.Now = time.Now
	}
	var out []Finding
	trust, err := Trust(cfg, o.Now())
	if err != nil {
		out = append(out, Finding{"ca", cfg.CertsPath, LevelFail, fmt.Sprintf("%v: run doctor with the server's --data-dir/--config (it needs the CA the clients trust)", err)})
	} else {
		out = append(out, Finding{"ca", trust.CAFile, LevelOK, fmt.Sprintf("CA %q, valid until %s", trust.Chain[0].Subject.CommonName, day(trust.Chain[0].NotAfter))})
	}
	var serverDate time.Time
	for _, t := range probeTargets(&cfg, o.Host) {
		f := Finding{Check: t.name, Target: t.addr}
		switch {
		case t.port == 0:
			f.Level, f.Detail = LevelFail, errPortAtStart.Error()
		case t.name == netx.ListenerREST:
			date, err := checkAlive(ctx, t.addr, o.Timeout)
			serverDate = date
			f.Level, f.Detail = unreachable(err, t, "/Alive answers")
		case t.name == netx.ListenerHTTPS || t.name == netx.ListenerCoTTLS || t.name == netx.ListenerEnroll:
			if trust == nil {
				f.Level, f.Detail = unreachable(checkDial(ctx, t.addr, o.Timeout), t, "accepts connections (TLS not checked without the CA)")
				break
			}
			f.Level, f.Detail = checkTLS(ctx, t.addr, o.Host, trust.Roots(), o.Timeout, o.Now())
		default:
			f.Level, f.Detail = unreachable(checkDial(ctx, t.addr, o.Timeout), t, "accepts connections")
		}
		out = append(out, f)
	}
	if trust != nil {
		out = append(out, crlFinding(trust, o.Now()))
	}
	out = append(out, clockFinding(serverDate, o.Now()))
	out = append(out, diskFinding(ctx, cfg, o))
	return out
}

// unreachable turns a probe's error into a finding's level and advice.
func unreachable(err error, t probeTarget, ok string) (Level, string) {
	if err == nil {
		return LevelOK, ok
	}
	fix := fmt.Sprintf("is the server running, and does a firewall let port %d through?", t.port)
	if t.loopback {
		fix = "httpAccess keeps it on loopback; run doctor on the server"
	}
	return LevelFail, fmt.Sprintf("%v: %s", err, fix)
}

// checkTLS completes a TLS handshake as a client that trusts roots and
// connects to host would, and judges the certificate the server sent. It
// presents no client certificate: on the mutual-TLS ports the server
// refuses the connection after the client side is done (and counts one
// handshake failure).
func checkTLS(ctx context.Context, addr, host string, roots *x509.CertPool, timeout time.Duration, now time.Time) (Level, string) {
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	d := tls.Dialer{Config: &tls.Config{
		ServerName:         host,
		InsecureSkipVerify: true, // verified below, to say which part fails
		MinVersion:         tls.VersionTLS12,
	}}
	conn, err := d.DialContext(ctx, "tcp", addr)
	if err != nil {
		var tcpErr *net.OpError
		if errors.As(err, &tcpErr) && tcpErr.Op == "dial" {
			return LevelFail, fmt.Sprintf("no connection: %v: is the server running, and does a firewall let the port through?", err)
		}
		return LevelFail, fmt.Sprintf("TLS handshake failed: %v", err)
	}
	st := conn.(*tls.Conn).ConnectionState()
	conn.Close()
	if len(st.PeerCertificates) == 0 {
		return LevelFail, "the server sent no certificate"
	}
	leaf := st.PeerCertificates[0]
	inter := x509.NewCertPool()
	for _, c := range st.PeerCertificates[1:] {
		inter.AddCert(c)
	}
	if _, err := leaf.Verify(x509.VerifyOptions{Roots: roots, Intermediates: inter, CurrentTime: now}); err != nil {
		return LevelFail, fmt.Sprintf("the certificate does not verify against the appliance's CA: %v: is another server on this port, or was the CA replaced without restarting?", err)
	}
	if err := leaf.VerifyHostname(host); err != nil {
		return LevelFail, fmt.Sprintf("the certificate names %s, not %s: set publicHost to %s and restart the server (it reissues its certificate and logs it), or point clients at a name it has",
			strings.Join(certNames(leaf), ", "), host, host)
	}
	if left := leaf.NotAfter.Sub(now); left < doctorCertWarn {
		return LevelWarn, fmt.Sprintf("the certificate expires on %s: remove server.pem and server.key from the certificate directory and restart the server to issue a new one", day(leaf.NotAfter))
	}
	return LevelOK, fmt.Sprintf("TLS; the certificate names %s and is valid until %s", host, day(leaf.NotAfter))
}

func certNames(c *x509.Certificate) []string {
	names := append([]string{}, c.DNSNames...)
	for _, ip := range c.IPAddresses {
		names = append(names, ip.String())
	}
	return names
}

func crlFinding(t *pki.Trust, now time.Time) Finding {
	f := Finding{Check: "crl", Target: t.CRLPEMFile}
	switch {
	case t.CRLErr != nil:
		f.Level, f.Detail = LevelFail, fmt.Sprintf("%v: restart the server, which writes it again (it enforces crl.json meanwhile)", t.CRLErr)
	case t.CRL.NextUpdate.Sub(now) < 24*time.Hour:
		f.Level, f.Detail = LevelWarn, fmt.Sprintf("valid only until %s: restart the server to sign it again", t.CRL.NextUpdate.UTC().Format(time.RFC3339))
	default:
		f.Level, f.Detail = LevelOK, fmt.Sprintf("%d revoked, signed by the CA, valid until %s", len(t.CRL.RevokedCertificateEntries), day(t.CRL.NextUpdate))
	}
	return f
}

func clockFinding(server, now time.Time) Finding {
	f := Finding{Check: "clock", Target: "Date of /Alive"}
	if server.IsZero() {
		f.Level, f.Detail = LevelWarn, "the server's clock is unknown (no answer from /Alive with a Date)"
		return f
	}
	skew := server.Sub(now).Round(time.Second)
	switch {
	case skew > doctorClockMax || skew < -doctorClockMax:
		dir := "ahead of"
		if skew < 0 {
			dir, skew = "behind", -skew
		}
		f.Level, f.Detail = LevelWarn, fmt.Sprintf("the server's clock is %s %s this machine's: set both by NTP (certificates and CoT stale times depend on it)", skew, dir)
	default:
		f.Level, f.Detail = LevelOK, fmt.Sprintf("the server's clock is within %s of this machine's", doctorClockMax)
	}
	return f
}

func diskFinding(ctx context.Context, cfg config.Config, o DoctorOptions) Finding {
	f := Finding{Check: "disk", Target: "/metrics"}
	samples, err := StatusOf(ctx, cfg, o.Host, o.TokenFile)
	if err != nil {
		fix := "is the management port reachable from here?"
		if strings.Contains(err.Error(), "401") || strings.Contains(err.Error(), "403") {
			fix = "pass an administrator's API token with --token-file"
		}
		f.Level, f.Detail = LevelWarn, fmt.Sprintf("could not read the server's disk figures: %v: %s", err, fix)
		return f
	}
	get := func(name string) (float64, bool) {
		for _, s := range samples {
			if s.Name == name {
				return s.Value, true
			}
		}
		return 0, false
	}
	free, ok1 := get("disk_free_bytes")
	reserve, ok2 := get("disk_reserve_bytes")
	if !ok1 || !ok2 {
		f.Level, f.Detail = LevelWarn, "the server does not report its free disk space"
		return f
	}
	mib := func(v float64) string { return strconv.FormatFloat(v/(1<<20), 'f', 0, 64) + " MiB" }
	if free < reserve {
		f.Level, f.Detail = LevelFail, fmt.Sprintf("%s free, below the reserve of %s: uploads are refused and the CoT history is paused; free space in the data directory's filesystem", mib(free), mib(reserve))
		return f
	}
	f.Level, f.Detail = LevelOK, fmt.Sprintf("%s free, reserve %s", mib(free), mib(reserve))
	return f
}

func day(t time.Time) string { return t.UTC().Format(time.DateOnly) }
