package main

import (
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"net"
	"net/netip"
	"os"
	"time"
)

// The mesh subcommand loads the mesh bridge (docs/mesh.md): --devices
// simulated mesh devices, each a UDP socket bound to a loopback address of
// its own, send an SA every 1/--rate s to the SA multicast group; --clients
// TCP receivers connected to the CoT port (each sends one SA, then only
// reads) should each receive every one of them once. It reports what was
// lost and duplicated (a delivery is one receiver getting one device's SA
// number seq), latency percentiles, and with --pid the server's CPU per
// bridged event and per delivery and its peak RSS. Anything lost or
// duplicated makes it exit 1.
//
// Multicast has to reach the server: run both in a network namespace with
// multicast on loopback (scripts/bench/mesh.sh does).
//
//	outpost-load mesh --addr 127.0.0.1:8087 --clients 200 --devices 100 --rate 1 --format xml --pid $(pidof outpost)

type meshOptions struct {
	Addr        string
	Clients     int
	LocalAddrs  string
	Devices     int
	DeviceAddrs string
	Rate        float64
	Group       string
	Format      string
	Interface   string
	Warmup      time.Duration
	Duration    time.Duration
	Drain       time.Duration
	ConnectTO   time.Duration
	PingEvery   time.Duration
	PID         int
	JSON        string
	Quiet       bool

	local   []net.Addr     // parsed LocalAddrs
	devAddr []netip.Addr   // device i's address
	group   netip.AddrPort // parsed Group
	ifi     *net.Interface // parsed Interface (nil: the system's choice)
}

// Limits the bridge applies to its sources (appliance/mesh), which the
// options are checked or warned against.
const (
	meshPortsPerAddr   = 8   // ports of one IP address tracked at once (fixed)
	meshDefaultSources = 256 // meshMaxSources by default
	meshDefaultBudget  = 100 // clientEventsPerSecond by default: a device's budget
	maxMeshDevices     = 1 << 16
)

// meshFirstDevice is where default device addresses start: 127.0.1.1,
// 127.0.1.2, … (one device per address, all on loopback).
var meshFirstDevice = netip.AddrFrom4([4]byte{127, 0, 1, 1})

const meshUsageText = `usage: outpost-load mesh [flags]

Loads the mesh bridge (outpost run --mesh xml|v1): --devices mesh devices,
each a UDP socket bound to its own loopback address (127.0.1.1, 127.0.1.2,
... or --device-addrs), send an SA every 1/--rate s to --group as XML or TAK
protocol v1 datagrams; --clients TCP receivers on --addr (each sends one SA,
then only reads) should each receive every device SA once. After --warmup
it measures for --duration, stops the devices and waits up to --drain for
what is in flight. Reports datagrams sent, deliveries expected (SAs the
devices sent in the window x receivers), received, lost (by receiver and
device), duplicated, latency, and with --pid the server's CPU per bridged
event and per delivery and its peak RSS. Exits 1 if anything was lost or
duplicated.

The devices' multicast must reach the server: run both in a network
namespace with multicast on loopback (scripts/bench/mesh.sh does it, as
root). The server tracks at most 8 ports of one address and, by default,
256 devices with a budget of 100 events/s each (clientEventsPerSecond);
200 receivers from one address need --max-connections-per-source 0 on the
server, or --local-addrs.

flags:
`

// parseMeshOptions reads the flags; errors are usage errors (exit 2).
func parseMeshOptions(args []string, stderr io.Writer) (*meshOptions, error) {
	o := &meshOptions{}
	fs := flag.NewFlagSet("outpost-load mesh", flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.Usage = func() {
		fmt.Fprint(stderr, meshUsageText)
		fs.PrintDefaults()
	}
	fs.StringVar(&o.Addr, "addr", "127.0.0.1:8087", "CoT TCP address of the server the receivers connect to")
	fs.IntVar(&o.Clients, "clients", 200, "TCP receivers")
	fs.StringVar(&o.LocalAddrs, "local-addrs", "", "source addresses to spread the receivers over: a list and/or ranges, e.g. 127.0.0.1-127.0.0.4")
	fs.IntVar(&o.Devices, "devices", 100, "mesh devices (UDP sockets)")
	fs.StringVar(&o.DeviceAddrs, "device-addrs", "", "IPv4 addresses the devices bind, round robin, at most 8 devices each (default: 127.0.1.1 upwards, one each)")
	fs.Float64Var(&o.Rate, "rate", 1, "SAs per second per device")
	fs.StringVar(&o.Group, "group", "239.2.3.1:6969", "multicast group the devices send to (the bridge's meshSAGroup)")
	fs.StringVar(&o.Format, "format", "xml", "datagram format: xml, or v1 (0xBF 0x01 0xBF and a protobuf TakMessage)")
	fs.StringVar(&o.Interface, "interface", "", "interface the devices send on (default: the system's route for the group)")
	fs.DurationVar(&o.Warmup, "warmup", 5*time.Second, "sending before the measurement window starts")
	fs.DurationVar(&o.Duration, "duration", 60*time.Second, "measurement window")
	fs.DurationVar(&o.Drain, "drain", 10*time.Second, "longest wait for deliveries in flight after the window")
	fs.DurationVar(&o.ConnectTO, "connect-timeout", time.Minute, "how long one receiver keeps retrying to connect")
	fs.DurationVar(&o.PingEvery, "ping-interval", 15*time.Second, "a receiver sends ATAK's t-x-c-t ping this often, so the server does not close it as idle (0: never)")
	fs.IntVar(&o.PID, "pid", 0, "server process id: report its CPU time and resident memory (Linux /proc)")
	fs.StringVar(&o.JSON, "json", "", "also write the report as JSON to this file")
	fs.BoolVar(&o.Quiet, "quiet", false, "no progress lines on stderr")
	if err := fs.Parse(args); err != nil {
		return nil, err
	}
	if fs.NArg() > 0 {
		return nil, fmt.Errorf("unexpected argument %q", fs.Arg(0))
	}
	return o, o.validate()
}

func (o *meshOptions) validate() error {
	var errs []error
	bad := func(format string, a ...any) { errs = append(errs, fmt.Errorf(format, a...)) }
	if _, _, err := net.SplitHostPort(o.Addr); err != nil {
		bad("--addr: %v", err)
	}
	if o.Clients < 1 || o.Clients > 1<<20 {
		bad("--clients: %d is not between 1 and %d", o.Clients, 1<<20)
	}
	devicesOK := o.Devices >= 1 && o.Devices <= maxMeshDevices
	if !devicesOK {
		bad("--devices: %d is not between 1 and %d", o.Devices, maxMeshDevices)
	}
	if o.Rate <= 0 || o.Rate > 1000 {
		bad("--rate: %g is not in (0, 1000]", o.Rate)
	}
	if g, err := netip.ParseAddrPort(o.Group); err != nil {
		bad("--group: %v", err)
	} else if !g.Addr().Is4() || !g.Addr().IsMulticast() || g.Port() == 0 {
		bad("--group: %s is not an IPv4 multicast group with a port", g)
	} else {
		o.group = g
	}
	if o.Format != "xml" && o.Format != "v1" {
		bad("--format: %q is neither xml nor v1", o.Format)
	}
	if o.Interface != "" {
		ifi, err := net.InterfaceByName(o.Interface)
		switch {
		case err != nil:
			bad("--interface: %v", err)
		case ifi.Flags&net.FlagMulticast == 0:
			bad("--interface: %s does not support multicast (ip link set %s multicast on)", o.Interface, o.Interface)
		default:
			o.ifi = ifi
		}
	}
	if o.Duration <= 0 {
		bad("--duration: %v is not positive", o.Duration)
	}
	for name, d := range map[string]time.Duration{"--warmup": o.Warmup, "--drain": o.Drain} {
		if d < 0 {
			bad("%s: %v is negative", name, d)
		}
	}
	if o.ConnectTO <= 0 {
		bad("--connect-timeout: %v is not positive", o.ConnectTO)
	}
	if o.PingEvery != 0 && o.PingEvery < time.Second {
		bad("--ping-interval: %v is shorter than a second (0: no pings)", o.PingEvery)
	}
	if o.PID < 0 {
		bad("--pid: %d is negative", o.PID)
	}
	if o.LocalAddrs != "" {
		local, err := parseLocalAddrs(o.LocalAddrs)
		if err != nil {
			bad("--local-addrs: %v", err)
		}
		o.local = local
	}
	if devicesOK {
		addrs, err := deviceAddrs(o.DeviceAddrs, o.Devices)
		if err != nil {
			bad("--device-addrs: %v", err)
		}
		o.devAddr = addrs
	}
	return errors.Join(errs...)
}

// deviceAddrs returns the address of each of n devices: spec's addresses
// round robin, or 127.0.1.1 upwards, one each, when spec is empty.
func deviceAddrs(spec string, n int) ([]netip.Addr, error) {
	out := make([]netip.Addr, n)
	if spec == "" {
		a := meshFirstDevice
		for i := range out {
			out[i] = a
			a = a.Next()
		}
		return out, nil
	}
	list, err := parseLocalAddrs(spec)
	if err != nil {
		return nil, err
	}
	pool := make([]netip.Addr, len(list))
	for i, a := range list {
		ip, _ := netip.AddrFromSlice(a.(*net.TCPAddr).IP)
		if !ip.Is4() {
			return nil, fmt.Errorf("%s is not an IPv4 address (the groups are IPv4)", ip)
		}
		pool[i] = ip
	}
	if per := (n + len(pool) - 1) / len(pool); per > meshPortsPerAddr {
		return nil, fmt.Errorf("%d devices on %d addresses puts %d on one; the bridge tracks at most %d ports of one address (give %d addresses or more)",
			n, len(pool), per, meshPortsPerAddr, (n+meshPortsPerAddr-1)/meshPortsPerAddr)
	}
	for i := range out {
		out[i] = pool[i%len(pool)]
	}
	return out, nil
}

// warnings are the settings the server's defaults would drop datagrams
// for: the run goes ahead, since the server may have been configured for
// them.
func (o *meshOptions) warnings() []string {
	var w []string
	if o.Rate > meshDefaultBudget {
		w = append(w, fmt.Sprintf("--rate %g is over the server's default budget of %d events/s per device (clientEventsPerSecond): over it, datagrams are dropped",
			o.Rate, meshDefaultBudget))
	}
	if o.Devices > meshDefaultSources {
		w = append(w, fmt.Sprintf("--devices %d is more than the %d devices the bridge tracks by default (meshMaxSources)", o.Devices, meshDefaultSources))
	}
	return w
}

// runMesh is the mesh subcommand: exit 0 when every delivery arrived once.
func runMesh(args []string, stdout, stderr io.Writer) int {
	o, err := parseMeshOptions(args, stderr)
	if errors.Is(err, flag.ErrHelp) {
		return exitOK
	}
	if err != nil {
		fmt.Fprintln(stderr, "outpost-load mesh:", err)
		return exitUsage
	}
	if !o.Quiet {
		for _, w := range o.warnings() {
			fmt.Fprintln(stderr, "outpost-load mesh: warning:", w)
		}
	}
	rep, err := runMeshLoad(o, stderr)
	if err != nil {
		fmt.Fprintln(stderr, "outpost-load mesh:", err)
		return exitFailure
	}
	rep.print(stdout)
	if o.JSON != "" {
		b, _ := json.MarshalIndent(rep, "", "  ")
		if err := os.WriteFile(o.JSON, append(b, '\n'), 0o644); err != nil {
			fmt.Fprintln(stderr, "outpost-load mesh: --json:", err)
			return exitFailure
		}
	}
	if !rep.ok() {
		return exitFailure
	}
	return exitOK
}
