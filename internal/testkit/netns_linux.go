//go:build linux

package testkit

import (
	"context"
	"fmt"
	"net"
	"net/http"
	"net/netip"
	"os"
	"os/exec"
	"runtime"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"golang.org/x/sys/unix"
)

// Netns is one network namespace of a LAN made by NetnsLAN: a machine of
// its own, with loopback and one interface, NetnsIface, on the LAN.
type Netns struct {
	Name string     // as `ip netns` knows it (/var/run/netns/Name)
	Addr netip.Addr // NetnsIface's address
}

// NetnsIface is the name of each namespace's interface on the LAN.
const NetnsIface = "mesh0"

var netnsSeq atomic.Int32

// NetnsLAN makes n network namespaces joined by one Ethernet segment: a
// Linux bridge in a further "hub" namespace of its own (the root namespace
// is left untouched), with multicast snooping off so multicast floods to
// every port, and a veth pair to each namespace, named NetnsIface inside.
// The namespaces get the addresses 10.248.S.1, .2, ... /24 (S differs
// between calls of one test process), loopback up, and a route for
// 224.0.0.0/4 on NetnsIface, so multicast sent without naming an
// interface goes to the LAN. Names hold the pid, so runs never collide.
// Everything is deleted when the test ends (register it before starting
// processes in the namespaces, so they are stopped first).
//
// It needs root and iproute2; otherwise, or when the kernel refuses, the
// test is skipped with the reason (a failure where tools are required:
// ToolsRequired).
func NetnsLAN(t testing.TB, n int) []*Netns {
	t.Helper()
	skip := func(why string) { MissingTool(t, "network namespaces (testkit.NetnsLAN): "+why) }
	if n < 1 || n > 250 {
		t.Fatalf("NetnsLAN: %d namespaces", n)
	}
	if os.Geteuid() != 0 {
		skip("creating network namespaces needs root")
	}
	if _, err := exec.LookPath("ip"); err != nil {
		skip("iproute2's ip command not found")
	}
	seq := netnsSeq.Add(1)
	prefix := fmt.Sprintf("outpost-%d-%d", os.Getpid(), seq)
	hub := prefix + "-hub"
	var made []string
	t.Cleanup(func() {
		for i := len(made) - 1; i >= 0; i-- {
			if out, err := exec.Command("ip", "netns", "del", made[i]).CombinedOutput(); err != nil {
				t.Errorf("ip netns del %s: %v: %s", made[i], err, out)
			}
		}
	})
	ip := func(args ...string) error {
		if out, err := exec.Command("ip", args...).CombinedOutput(); err != nil {
			return fmt.Errorf("ip %s: %v: %s", strings.Join(args, " "), err, strings.TrimSpace(string(out)))
		}
		return nil
	}
	if err := ip("netns", "add", hub); err != nil {
		skip(err.Error())
	}
	made = append(made, hub)
	// The kernel may lack the bridge or veth drivers: a refusal of the
	// first of each skips, a later failure is the test's.
	if err := ip("-n", hub, "link", "add", "br0", "type", "bridge", "mcast_snooping", "0"); err != nil {
		skip(err.Error())
	}
	if err := ip("-n", hub, "link", "set", "br0", "up"); err != nil {
		t.Fatal(err)
	}
	nets := make([]*Netns, n)
	for i := range nets {
		ns := &Netns{Name: fmt.Sprintf("%s-%d", prefix, i), Addr: netip.AddrFrom4([4]byte{10, 248, byte(seq % 256), byte(i + 1)})}
		if err := ip("netns", "add", ns.Name); err != nil {
			t.Fatal(err)
		}
		made = append(made, ns.Name)
		port := fmt.Sprintf("v%d", i)
		if err := ip("-n", hub, "link", "add", port, "type", "veth", "peer", "name", NetnsIface, "netns", ns.Name); err != nil {
			if i == 0 {
				skip(err.Error())
			}
			t.Fatal(err)
		}
		for _, args := range [][]string{
			{"-n", hub, "link", "set", port, "master", "br0"},
			{"-n", hub, "link", "set", port, "up"},
			{"-n", ns.Name, "link", "set", "lo", "up"},
			{"-n", ns.Name, "addr", "add", ns.Addr.String() + "/24", "dev", NetnsIface},
			{"-n", ns.Name, "link", "set", NetnsIface, "up"},
			{"-n", ns.Name, "route", "add", "224.0.0.0/4", "dev", NetnsIface},
		} {
			if err := ip(args...); err != nil {
				t.Fatal(err)
			}
		}
		nets[i] = ns
	}
	return nets
}

// Command is argv run inside the namespace: `ip netns exec NAME argv...`
// (ip execs the program, so the process is the program itself).
func (ns *Netns) Command(argv ...string) []string {
	return append([]string{"ip", "netns", "exec", ns.Name}, argv...)
}

// Do runs fn on an OS thread of its own that has entered the namespace,
// and returns fn's error. Sockets fn creates belong to the namespace and
// keep working from any goroutine afterwards. The thread stays locked and
// is discarded when fn returns, so no other goroutine ever runs in the
// namespace by accident.
func (ns *Netns) Do(fn func() error) error {
	errc := make(chan error, 1)
	go func() {
		runtime.LockOSThread() // never unlocked: the thread ends with the goroutine
		f, err := os.Open("/var/run/netns/" + ns.Name)
		if err != nil {
			errc <- err
			return
		}
		err = unix.Setns(int(f.Fd()), unix.CLONE_NEWNET)
		f.Close()
		if err != nil {
			errc <- fmt.Errorf("setns %s: %w", ns.Name, err)
			return
		}
		errc <- fn()
	}()
	return <-errc
}

// DialContext connects from inside the namespace (a net.Dialer's
// DialContext, for http.Transport and the like).
func (ns *Netns) DialContext(ctx context.Context, network, addr string) (net.Conn, error) {
	var c net.Conn
	err := ns.Do(func() error {
		var err error
		d := net.Dialer{Timeout: 10 * time.Second}
		c, err = d.DialContext(ctx, network, addr)
		return err
	})
	return c, err
}

// Dial connects to addr over TCP from inside the namespace or fails the
// test.
func (ns *Netns) Dial(t testing.TB, addr string) net.Conn {
	t.Helper()
	c, err := ns.DialContext(context.Background(), "tcp", addr)
	if err != nil {
		t.Fatalf("dial %s from namespace %s: %v", addr, ns.Name, err)
	}
	t.Cleanup(func() { c.Close() })
	return c
}

// ListenUDP opens a UDP socket inside the namespace bound to addr
// ("10.248.1.3:0") or fails the test; it is closed when the test ends.
func (ns *Netns) ListenUDP(t testing.TB, addr string) *net.UDPConn {
	t.Helper()
	var c *net.UDPConn
	err := ns.Do(func() error {
		a, err := net.ResolveUDPAddr("udp4", addr)
		if err != nil {
			return err
		}
		c, err = net.ListenUDP("udp4", a)
		return err
	})
	if err != nil {
		t.Fatalf("UDP socket on %s in namespace %s: %v", addr, ns.Name, err)
	}
	t.Cleanup(func() { c.Close() })
	return c
}

// HTTPClient is an HTTP client whose connections start inside the
// namespace.
func (ns *Netns) HTTPClient() *http.Client {
	return &http.Client{Timeout: 30 * time.Second, Transport: &http.Transport{DialContext: ns.DialContext}}
}
