package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"net"
	"net/netip"
	"strings"
	"time"
)

// options are the command line of a load run.
type options struct {
	Addr       string
	TLS        bool
	Cert       string
	Key        string
	CA         string
	P12        string
	P12Pass    string
	ServerName string
	Proto      float64
	Clients    int
	Senders    int
	Rate       float64
	Size       int
	Ramp       time.Duration
	Ping       bool
	PingEvery  time.Duration
	Slow       float64
	SlowRate   int
	Idle       bool
	Duration   time.Duration
	Warmup     time.Duration
	Settle     time.Duration
	Drain      time.Duration
	ConnectTO  time.Duration
	PID        int
	JSON       string
	LocalAddrs string
	Quiet      bool
	CPUProfile string

	local []net.Addr // parsed LocalAddrs
}

const usageText = `usage: outpost-load [flags]
       outpost-load summarize REPORT.json...
       outpost-load rest [--url URL] --token-file FILE [--clients 50] (outpost-load rest -h)
       outpost-load mesh [--devices 100] [--clients 200] [--format xml|v1] (outpost-load mesh -h)

Connects --clients simulated TAK clients to a CoT port (TCP, or mutual TLS
with --tls), has --senders of them send position reports (SA) at --rate per
second, and measures what every other client receives: deliveries, latency,
coalesced and missing reports, disconnects; with --pid, the server's CPU
time and resident memory. "summarize" prints the medians of several JSON
reports (--json).

The server limits connections per source address (64 by default): start it
with --max-connections-per-source 0, or spread the clients over loopback
addresses with --local-addrs 127.0.0.1-127.0.0.200. Storms also need
--max-pending-handshakes-per-source and --max-pending-handshakes raised,
and more than 4096 clients --max-connections. A client certificate may
claim at most 64 uids: give one certificate per 64 TLS clients (comma
separated lists; client i uses credential i modulo their number).

flags:
`

// parseOptions reads the flags; errors are usage errors (exit 2).
func parseOptions(args []string, stderr io.Writer) (*options, error) {
	o := &options{}
	fs := flag.NewFlagSet("outpost-load", flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.Usage = func() {
		fmt.Fprint(stderr, usageText)
		fs.PrintDefaults()
	}
	fs.StringVar(&o.Addr, "addr", "127.0.0.1:8087", "CoT address of the server (host:port; 8089 is the TLS port)")
	fs.BoolVar(&o.TLS, "tls", false, "connect with mutual TLS (needs --cert/--key or --p12, and --ca unless the .p12 holds the CA)")
	fs.StringVar(&o.Cert, "cert", "", "client certificate PEM file(s), comma separated")
	fs.StringVar(&o.Key, "key", "", "client key PEM file(s), comma separated, one per --cert")
	fs.StringVar(&o.CA, "ca", "", "CA certificate PEM that signed the server's certificate")
	fs.StringVar(&o.P12, "p12", "", "client PKCS#12 file(s), comma separated (instead of --cert/--key)")
	fs.StringVar(&o.P12Pass, "p12-password", "", "password of the PKCS#12 files")
	fs.StringVar(&o.ServerName, "server-name", "", "name to verify in the server certificate (default: the host of --addr)")
	fs.Float64Var(&o.Proto, "proto", 0, "share of clients (0..1) that negotiate TAK protocol v1 (protobuf)")
	fs.IntVar(&o.Clients, "clients", 100, "clients to connect")
	fs.IntVar(&o.Senders, "senders", -1, "clients that send SAs at --rate; with --idle, that send their one SA (default: all of them)")
	fs.Float64Var(&o.Rate, "rate", 1, "SAs per second per sender")
	fs.IntVar(&o.Size, "size", 0, "extra bytes of remarks padding in every SA")
	fs.DurationVar(&o.Ramp, "ramp", 0, "connect the clients evenly over this time (0: all at once, a connection storm)")
	fs.BoolVar(&o.Ping, "ping", true, "send ATAK's t-x-c-t ping from clients that sent nothing for --ping-interval")
	fs.DurationVar(&o.PingEvery, "ping-interval", 15*time.Second, "idle time before a client pings")
	fs.Float64Var(&o.Slow, "slow", 0, "share of clients (0..1) that read slowly once the load starts")
	fs.IntVar(&o.SlowRate, "slow-rate", 1024, "bytes per second a slow client reads (0: it stops reading)")
	fs.BoolVar(&o.Idle, "idle", false, "idle clients: connect, send one SA, then only read (memory per connection, storms)")
	fs.DurationVar(&o.Duration, "duration", 20*time.Second, "measurement window (idle: how long the clients stay connected)")
	fs.DurationVar(&o.Warmup, "warmup", 2*time.Second, "sending before the measurement window starts")
	fs.DurationVar(&o.Settle, "settle", 2*time.Minute, "longest wait for every client to hold every other client's SA")
	fs.DurationVar(&o.Drain, "drain", 10*time.Second, "longest wait for deliveries in flight after the window")
	fs.DurationVar(&o.ConnectTO, "connect-timeout", time.Minute, "how long one client keeps retrying to connect")
	fs.IntVar(&o.PID, "pid", 0, "server process id: report its CPU time and resident memory (Linux /proc)")
	fs.StringVar(&o.JSON, "json", "", "also write the report as JSON to this file")
	fs.StringVar(&o.LocalAddrs, "local-addrs", "", "source addresses to spread the clients over: a list and/or ranges, e.g. 127.0.0.1-127.0.0.200")
	fs.BoolVar(&o.Quiet, "quiet", false, "no progress lines on stderr")
	fs.StringVar(&o.CPUProfile, "cpuprofile", "", "write the tool's own CPU profile to this file (go tool pprof)")
	if err := fs.Parse(args); err != nil {
		return nil, err
	}
	if fs.NArg() > 0 {
		return nil, fmt.Errorf("unexpected argument %q", fs.Arg(0))
	}
	if o.Senders < 0 {
		o.Senders = o.Clients
	}
	return o, o.validate()
}

func (o *options) validate() error {
	var errs []error
	bad := func(format string, a ...any) { errs = append(errs, fmt.Errorf(format, a...)) }
	if _, _, err := net.SplitHostPort(o.Addr); err != nil {
		bad("--addr: %v", err)
	}
	if o.Clients < 1 || o.Clients > 1<<20 {
		bad("--clients: %d is not between 1 and %d", o.Clients, 1<<20)
	}
	if o.Senders > o.Clients {
		bad("--senders: %d is more than --clients %d", o.Senders, o.Clients)
	}
	if !o.Idle && (o.Rate <= 0 || o.Rate > 1000) {
		bad("--rate: %g is not in (0, 1000]", o.Rate)
	}
	if o.Size < 0 || o.Size > 60<<10 {
		bad("--size: %d is not between 0 and %d", o.Size, 60<<10)
	}
	for name, v := range map[string]float64{"--proto": o.Proto, "--slow": o.Slow} {
		if v < 0 || v > 1 {
			bad("%s: %g is not a share between 0 and 1", name, v)
		}
	}
	if o.SlowRate < 0 {
		bad("--slow-rate: %d is negative", o.SlowRate)
	}
	for name, d := range map[string]time.Duration{"--ramp": o.Ramp, "--duration": o.Duration, "--warmup": o.Warmup,
		"--settle": o.Settle, "--drain": o.Drain} {
		if d < 0 {
			bad("%s: %v is negative", name, d)
		}
	}
	if o.Ping && o.PingEvery < time.Second {
		bad("--ping-interval: %v is shorter than a second", o.PingEvery)
	}
	if o.ConnectTO <= 0 {
		bad("--connect-timeout: %v is not positive", o.ConnectTO)
	}
	if o.PID < 0 {
		bad("--pid: %d is negative", o.PID)
	}
	if o.TLS {
		switch {
		case o.P12 != "" && (o.Cert != "" || o.Key != ""):
			bad("--p12: give either --p12 or --cert/--key")
		case o.P12 == "" && (o.Cert == "" || o.Key == ""):
			bad("--tls: needs --cert and --key, or --p12")
		case o.P12 == "" && len(splitList(o.Cert)) != len(splitList(o.Key)):
			bad("--key: %d keys for %d certificates", len(splitList(o.Key)), len(splitList(o.Cert)))
		}
	} else if o.Cert != "" || o.Key != "" || o.P12 != "" || o.CA != "" {
		bad("--cert, --key, --p12 and --ca need --tls")
	}
	if o.LocalAddrs != "" {
		local, err := parseLocalAddrs(o.LocalAddrs)
		if err != nil {
			bad("--local-addrs: %v", err)
		}
		o.local = local
	}
	return errors.Join(errs...)
}

// splitList splits a comma separated list, dropping empty items.
func splitList(s string) []string {
	var out []string
	for p := range strings.SplitSeq(s, ",") {
		if p = strings.TrimSpace(p); p != "" {
			out = append(out, p)
		}
	}
	return out
}

// maxLocalAddrs bounds --local-addrs (ranges expand).
const maxLocalAddrs = 1 << 16

// parseLocalAddrs reads "A,B,C-D": addresses and inclusive ranges.
func parseLocalAddrs(s string) ([]net.Addr, error) {
	var out []net.Addr
	for _, item := range splitList(s) {
		lo, hi, isRange := strings.Cut(item, "-")
		first, err := netip.ParseAddr(lo)
		if err != nil {
			return nil, err
		}
		last := first
		if isRange {
			if last, err = netip.ParseAddr(hi); err != nil {
				return nil, err
			}
			if last.Less(first) || first.Is4() != last.Is4() {
				return nil, fmt.Errorf("%q is not an ascending range of one address family", item)
			}
		}
		for a := first; ; a = a.Next() {
			if len(out) >= maxLocalAddrs {
				return nil, fmt.Errorf("more than %d addresses", maxLocalAddrs)
			}
			out = append(out, &net.TCPAddr{IP: a.AsSlice()})
			if a == last {
				break
			}
		}
	}
	if len(out) == 0 {
		return nil, errors.New("no address")
	}
	return out, nil
}
