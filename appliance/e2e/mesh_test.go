//go:build linux

package e2e

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"golang.org/x/net/ipv4"

	"outpost/appliance/admin"
	"outpost/appliance/cot"
	"outpost/appliance/mesh"
	"outpost/appliance/netx"
	"outpost/appliance/takclient"
	"outpost/internal/testkit"
)

// meshWait bounds every wait for something that must happen on the mesh:
// generous, for a loaded CI machine; nothing here measures latency.
const meshWait = 20 * time.Second

// meshQuiet is the fixed window over which nothing more may arrive once
// everything expected has: a duplicate or a ping-pong would show in it.
const meshQuiet = 2 * time.Second

// TestMeshEndToEnd is the field mesh on the real binary (docs/mesh.md):
// three network namespaces joined by one Ethernet bridge, like three
// machines on a mesh radio. Outpost A bridges the mesh with XML, outpost B
// with TAK protocol v1; the third machine, C, holds a mesh device and the
// test's TCP clients of A and B (port 8087, over the mesh network).
//
// The mesh device is scripts/interop/mesh-device.mjs: ATAK's serverless
// behaviour written with a third-party CoT library, @tak-ps/node-cot, and
// Node's dgram, so both encodings are checked against an implementation
// that is not ours. pytak would be the obvious third-party mesh client, but
// no Python package index is reachable where the tests run, while node-cot
// is installed already for the other interop tests and encodes and decodes
// XML and protobuf.
//
// It checks: the device's SA (XML and v1 datagrams) and GeoChat reach a TCP
// client of A and of B; a TCP client's SA and chat on A reach the device as
// XML and the TCP client of B; B's client's SA reaches the device as a v1
// datagram, and its chat addressed to the device comes by unicast to the
// device's port 4242; /Clients of A and B lists the device with listener
// mesh and its address; over a quiet window nothing arrives twice, nothing
// goes back to the mesh, and each bridge sent only what its own clients
// said; bad, oversized and flooding datagrams from C are counted as dropped
// while the device keeps getting through.
func TestMeshEndToEnd(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs the binary")
	}
	testkit.RequireInterop(t, "@tak-ps/node-cot")
	lan := testkit.NetnsLAN(t, 3) // first: its cleanup runs after every process is stopped
	nsA, nsB, nsC := lan[0], lan[1], lan[2]
	a := startMeshNode(t, nsA, nsC, "xml")
	b := startMeshNode(t, nsB, nsC, "v1")
	const devUID, devCall = "MESH-NODECOT-1", "NODECOT"
	dev := startMeshDevice(t, nsC, devUID, devCall)
	ipA, ipB, ipC := nsA.Addr.String(), nsB.Addr.String(), nsC.Addr.String()
	t.Cleanup(func() { // before the processes are stopped
		if t.Failed() {
			out, _ := json.Marshal(dev.lines())
			t.Logf("A's log:\n%s\nB's log:\n%s\nthe device's output:\n%s\nits stderr:\n%s",
				a.p.LogText(), b.p.LogText(), out, dev.stderr.String())
		}
	})

	// The server clients, on machine C.
	ca := recordClient(t, "A", takclient.New(nsC.Dial(t, a.cot)))
	cb := recordClient(t, "B", takclient.New(nsC.Dial(t, b.cot)))
	if err := ca.c.Send(takclient.SA("TCP-A", "ALPHA", 59.1, 18.1)); err != nil {
		t.Fatal(err)
	}
	if err := cb.c.Send(takclient.SA("TCP-B", "BRAVO", 59.2, 18.2)); err != nil {
		t.Fatal(err)
	}

	// Server clients to the mesh: A sends XML, B protocol v1; each bridge's
	// datagram reaches the other server's client.
	dev.waitRecv(t, "TCP-A's SA from A as XML", func(r meshRecv) bool {
		return r.UID == "TCP-A" && r.Via == "sa" && r.Format == "xml" && r.fromIP() == ipA && r.Callsign == "ALPHA"
	})
	dev.waitRecv(t, "TCP-B's SA from B as protocol v1", func(r meshRecv) bool {
		return r.UID == "TCP-B" && r.Via == "sa" && r.Format == "v1" && r.fromIP() == ipB && r.Callsign == "BRAVO"
	})
	cb.wait(t, "TCP-A's SA at B's client", 1, uidIs("TCP-A"))
	ca.wait(t, "TCP-B's SA at A's client", 1, uidIs("TCP-B"))

	// The device to the servers: its SA twice as XML and twice as v1
	// (distinct positions), then a GeoChat to All Chat Rooms in each format.
	lats := []float64{59.331, 59.332, 59.333, 59.334}
	for i, lat := range lats {
		dev.command(t, map[string]any{"cmd": "sa", "format": []string{"xml", "v1"}[i%2], "lat": lat})
	}
	dev.command(t, map[string]any{"cmd": "chat", "format": "xml", "text": "mesh hello in XML"})
	dev.command(t, map[string]any{"cmd": "chat", "format": "v1", "text": "mesh hello in v1"})
	for _, c := range []*clientRecord{ca, cb} {
		for _, lat := range lats {
			c.wait(t, fmt.Sprintf("the device's SA at %v at %s's client", lat, c.name), 1,
				func(e *cot.Event) bool { return e.UID == devUID && e.Point.Lat == lat })
		}
		for _, text := range []string{"mesh hello in XML", "mesh hello in v1"} {
			c.wait(t, fmt.Sprintf("the device's chat %q at %s's client", text, c.name), 1, chatFrom(devUID, text))
		}
	}

	// A server client's chat to All Chat Rooms, and one from B's client
	// addressed to the device, which B sends by unicast to its port 4242.
	if err := ca.c.Send(takclient.Chat("GeoChat.TCP-A.All Chat Rooms.1", "from ALPHA to everyone")); err != nil {
		t.Fatal(err)
	}
	dev.waitRecv(t, "A's client's chat on the chat group as XML", func(r meshRecv) bool {
		return r.Type == "b-t-f" && r.Via == "chat" && r.Format == "xml" && r.fromIP() == ipA && r.Text == "from ALPHA to everyone"
	})
	cb.wait(t, "A's client's chat at B's client", 1, chatFrom("GeoChat.TCP-A.", "from ALPHA to everyone"))
	if err := cb.c.Send(takclient.Chat("GeoChat.TCP-B.NODECOT.1", "from BRAVO to you", cot.Dest{Callsign: devCall})); err != nil {
		t.Fatal(err)
	}
	dev.waitRecv(t, "B's client's direct chat by unicast as v1", func(r meshRecv) bool {
		return r.Type == "b-t-f" && r.Via == "direct" && r.Format == "v1" && r.fromIP() == ipB && r.Text == "from BRAVO to you"
	})

	// Both servers' /Clients list the device as a mesh client at its
	// address (the IP address, as for a TCP client).
	for _, n := range []*meshNode{a, b} {
		var listed []map[string]any
		testkit.WaitForWithin(t, meshWait, "the device in /Clients of "+n.name, func() bool {
			listed = nil
			n.get(t, "/Clients").JSON(t, &listed)
			for _, c := range listed {
				if c["uid"] == devUID {
					return true
				}
			}
			return false
		})
		for _, c := range listed {
			if c["uid"] == devUID && (c["listener"] != mesh.ListenerName || c["callsign"] != devCall || c["address"] != ipC) {
				t.Errorf("%s: /Clients lists the device as %v; want listener mesh, callsign %s, address %s", n.name, c, devCall, ipC)
			}
		}
	}

	// Nothing twice, nothing back: over a quiet window, each client got
	// each datagram once, the device never heard itself from a bridge, and
	// each bridge sent only what its own clients said (A: an SA and a chat;
	// B: an SA and the direct chat), whatever it heard from the other.
	time.Sleep(meshQuiet)
	for _, c := range []*clientRecord{ca, cb} {
		if n := c.count(uidIs(devUID)); n != len(lats) {
			t.Errorf("%s's client got the device's SA %d times; the device sent it %d times", c.name, n, len(lats))
		}
		if n := c.count(chatFrom(devUID, "")); n != 2 {
			t.Errorf("%s's client got %d chats of the device; it sent 2", c.name, n)
		}
	}
	if n := ca.count(uidIs("TCP-B")); n != 1 {
		t.Errorf("A's client got TCP-B's SA %d times, want 1", n)
	}
	if n := cb.count(uidIs("TCP-A")); n != 1 {
		t.Errorf("B's client got TCP-A's SA %d times, want 1", n)
	}
	if n := cb.count(chatFrom("GeoChat.TCP-A.", "")); n != 1 {
		t.Errorf("B's client got A's client's chat %d times, want 1", n)
	}
	// Nor does a client hear itself through the mesh (its bridge's own
	// datagrams coming back on loopback are recognised, rule 2).
	if n := ca.count(func(e *cot.Event) bool { return e.UID == "TCP-A" || strings.HasPrefix(e.UID, "GeoChat.TCP-A.") }); n != 0 {
		t.Errorf("A's client got its own SA or chat back %d times", n)
	}
	if n := cb.count(func(e *cot.Event) bool { return e.UID == "TCP-B" || strings.HasPrefix(e.UID, "GeoChat.TCP-B.") }); n != 0 {
		t.Errorf("B's client got its own SA or chat back %d times", n)
	}
	for _, w := range []struct {
		what  string
		match func(meshRecv) bool
		n     int
	}{
		{"TCP-A's SA", func(r meshRecv) bool { return r.UID == "TCP-A" }, 1},
		{"TCP-B's SA", func(r meshRecv) bool { return r.UID == "TCP-B" }, 1},
		{"A's client's chat", func(r meshRecv) bool { return r.Text == "from ALPHA to everyone" }, 1},
		{"B's client's direct chat", func(r meshRecv) bool { return r.Text == "from BRAVO to you" }, 1},
		{"its own SA or chat from a bridge", func(r meshRecv) bool {
			return (r.UID == devUID || strings.HasPrefix(r.UID, "GeoChat."+devUID+".")) && r.fromIP() != ipC
		}, 0},
	} {
		if got := dev.recvs(w.match); len(got) != w.n {
			t.Errorf("the device received %s %d times, want %d: %+v", w.what, len(got), w.n, got)
		}
	}
	outA, outB := a.meshOut(t), b.meshOut(t)
	if outA != 2 || outB != 2 {
		t.Errorf("datagrams out: A %v, B %v; their clients said 2 things each", outA, outB)
	}
	// Rule 2: each bridge hears its own multicast (loopback) and drops it.
	for _, n := range []*meshNode{a, b} {
		if d := n.dropped(t); d["loop"] < 1 {
			t.Errorf("%s dropped none of its own datagrams as loops: %v", n.name, d)
		}
	}

	// Bad datagrams from a socket of machine C: malformed ones are counted
	// and skipped, oversized ones dropped unread.
	before := map[*meshNode]map[string]float64{a: a.dropped(t), b: b.dropped(t)}
	bad := nsC.ListenUDP(t, ipC+":0")
	sa := &net.UDPAddr{IP: net.IPv4(239, 2, 3, 1), Port: 6969}
	malformed := [][]byte{
		[]byte(`<event version="2.0" uid="BROKEN-1" type="a-f-G" how="m-g"`),
		{0xBF, 0x01, 0xBF, 0x0A, 0xFF, 0xFF, 0xFF, 0x0F},
		[]byte(`<notanevent/>`),
	}
	for _, d := range malformed {
		if _, err := bad.WriteTo(d, sa); err != nil {
			t.Fatal(err)
		}
	}
	huge := append([]byte(`<event version="2.0" uid="HUGE-1" type="a-f-G" how="m-g"><detail><remarks>`), bytes.Repeat([]byte("x"), 9000)...)
	huge = append(huge, "</remarks></detail></event>"...)
	for range 2 {
		if _, err := bad.WriteTo(huge, sa); err != nil {
			t.Fatal(err)
		}
	}
	for _, n := range []*meshNode{a, b} {
		testkit.WaitForWithin(t, meshWait, n.name+" to count the malformed and oversized datagrams", func() bool {
			d := n.dropped(t)
			return d["malformed"]-before[n]["malformed"] >= float64(len(malformed)) && d["size"]-before[n]["size"] >= 2
		})
	}

	// A flood from one more source on C: distinct valid position reports,
	// far over the per-source budget (20 events a second here). The
	// device's SA, sent in the middle of it, still gets through.
	flood := nsC.ListenUDP(t, ipC+":0")
	if err := ipv4.NewPacketConn(flood).SetMulticastLoopback(false); err != nil {
		t.Fatal(err)
	}
	const floodN = 500
	floodDone := make(chan error, 1)
	go func() {
		for i := range floodN {
			ev := takclient.SA("FLOOD-1", "FLOOD", 10+float64(i)/1000, 10)
			if _, err := flood.WriteTo(ev.AppendXML(nil), sa); err != nil {
				floodDone <- err
				return
			}
			if i%20 == 19 {
				time.Sleep(20 * time.Millisecond)
			}
		}
		floodDone <- nil
	}()
	time.Sleep(100 * time.Millisecond)
	dev.command(t, map[string]any{"cmd": "sa", "format": "xml", "lat": 59.5})
	if err := <-floodDone; err != nil {
		t.Fatal(err)
	}
	dev.command(t, map[string]any{"cmd": "sa", "format": "v1", "lat": 59.6})
	for _, c := range []*clientRecord{ca, cb} {
		for _, lat := range []float64{59.5, 59.6} {
			c.wait(t, fmt.Sprintf("the device's SA at %v (during and after the flood) at %s's client", lat, c.name), 1,
				func(e *cot.Event) bool { return e.UID == devUID && e.Point.Lat == lat })
		}
	}
	for _, n := range []*meshNode{a, b} {
		testkit.WaitForWithin(t, meshWait, n.name+" to drop the flood as over budget", func() bool {
			return n.dropped(t)["budget"]-before[n]["budget"] >= floodN/2
		})
	}
	for _, c := range []*clientRecord{ca, cb} {
		if n := c.count(uidIs("FLOOD-1")); n == 0 || n > floodN/2 {
			t.Errorf("%s's client got %d of the flood's %d position reports; want some, within the budget", c.name, n, floodN)
		}
	}

	// Still nothing back to the mesh: the bridges sent nothing more.
	time.Sleep(meshQuiet / 2)
	if a2, b2 := a.meshOut(t), b.meshOut(t); a2 != outA || b2 != outB {
		t.Errorf("datagrams out grew with only the mesh talking: A %v -> %v, B %v -> %v", outA, a2, outB, b2)
	}
	t.Logf("datagrams out: A %v, B %v; dropped: A %v, B %v; flood reports relayed: to A's client %d, to B's %d",
		outA, outB, a.dropped(t), b.dropped(t), ca.count(uidIs("FLOOD-1")), cb.count(uidIs("FLOOD-1")))
	for _, l := range dev.lines() {
		if l.Bad != nil && l.Bad.From != "" && !strings.HasPrefix(l.Bad.From, ipC+":") {
			t.Errorf("node-cot could not decode a datagram of a bridge: %+v", *l.Bad)
		}
	}
}

// meshNode is one outpost binary in its namespace, reached from machine C.
type meshNode struct {
	name  string
	p     *testkit.Proc
	token string       // the first run's admin token
	mgmt  string       // http://ip:port of the management API, at its mesh address
	cot   string       // ip:8087
	hc    *http.Client // from machine C
}

// startMeshNode runs outpost in ns with the mesh bridge on mesh0, its
// listeners on every address, and a small per-client budget (20 events a
// second) so a flood is cheap to make.
func startMeshNode(t *testing.T, ns, from *testkit.Netns, mode string) *meshNode {
	t.Helper()
	p := testkit.StartWith(t, ns.Command(testkit.Binary(t)), filepath.Join(t.TempDir(), "data"),
		"--bind", "0.0.0.0", "--public-host", ns.Addr.String(), "--cot-port", "8087",
		"--mesh", mode, "--mesh-interfaces", testkit.NetnsIface,
		"--client-events-per-second", "20", "--key-type", "ecdsa-p256", "--log-level", "info")
	tok, err := os.ReadFile(filepath.Join(p.DataDir, admin.AdminTokenFile))
	if err != nil {
		t.Fatalf("first run wrote no admin token: %v", err)
	}
	_, port, err := net.SplitHostPort(p.Addr(t, netx.ListenerREST))
	if err != nil {
		t.Fatal(err)
	}
	hc := from.HTTPClient()
	t.Cleanup(hc.CloseIdleConnections)
	return &meshNode{name: "outpost --mesh " + mode, p: p, token: strings.TrimSpace(string(tok)),
		mgmt: "http://" + net.JoinHostPort(ns.Addr.String(), port), cot: net.JoinHostPort(ns.Addr.String(), "8087"), hc: hc}
}

// get calls the management API with the admin token and wants 200.
func (n *meshNode) get(t *testing.T, route string) testkit.Response {
	t.Helper()
	r := testkit.Do(t, n.hc, "GET", n.mgmt+route, nil, "Authorization", "Bearer "+n.token)
	if r.Status != 200 {
		t.Fatalf("%s: GET %s: %d %s", n.name, route, r.Status, r.Body)
	}
	return r
}

// meshOut is outpost_mesh_datagrams_total{listener="mesh",direction="out"}.
func (n *meshNode) meshOut(t *testing.T) float64 {
	t.Helper()
	v, _ := metricValue(t, n.get(t, "/metrics").Body, "outpost_mesh_datagrams_total",
		map[string]string{"listener": mesh.ListenerName, "direction": "out"})
	return v
}

// dropped is outpost_mesh_dropped_total of the bridge, by reason.
func (n *meshNode) dropped(t *testing.T) map[string]float64 {
	t.Helper()
	body := n.get(t, "/metrics").Body
	m := map[string]float64{}
	for _, reason := range []string{"size", "loop", "duplicate", "budget", "malformed"} {
		m[reason], _ = metricValue(t, body, "outpost_mesh_dropped_total",
			map[string]string{"listener": mesh.ListenerName, "reason": reason})
	}
	return m
}

// clientRecord keeps everything a TCP client receives.
type clientRecord struct {
	name string
	c    *takclient.Client
	mu   sync.Mutex
	evs  []*cot.Event
}

func recordClient(t *testing.T, name string, c *takclient.Client) *clientRecord {
	t.Helper()
	r := &clientRecord{name: name, c: c}
	t.Cleanup(func() { c.Close() })
	go func() {
		for {
			ev, err := c.Next(time.Second)
			if err != nil {
				select {
				case <-c.Done():
					return
				default:
					continue
				}
			}
			r.mu.Lock()
			r.evs = append(r.evs, ev)
			r.mu.Unlock()
		}
	}()
	return r
}

func (r *clientRecord) count(match func(*cot.Event) bool) int {
	r.mu.Lock()
	defer r.mu.Unlock()
	n := 0
	for _, ev := range r.evs {
		if match(ev) {
			n++
		}
	}
	return n
}

// wait waits until n received events match.
func (r *clientRecord) wait(t *testing.T, what string, n int, match func(*cot.Event) bool) {
	t.Helper()
	testkit.WaitForWithin(t, meshWait, what, func() bool { return r.count(match) >= n })
}

func uidIs(uid string) func(*cot.Event) bool { return func(e *cot.Event) bool { return e.UID == uid } }

// chatFrom matches a GeoChat whose uid begins with prefix ("GeoChat.<sender
// uid>." for ATAK's and node-cot's) and whose detail holds text.
func chatFrom(prefix, text string) func(*cot.Event) bool {
	if !strings.HasPrefix(prefix, "GeoChat.") {
		prefix = "GeoChat." + prefix + "."
	}
	return func(e *cot.Event) bool {
		return e.Type == "b-t-f" && strings.HasPrefix(e.UID, prefix) && bytes.Contains(e.Detail.XML, []byte(text))
	}
}

// meshDevice is scripts/interop/mesh-device.mjs running in a namespace.
type meshDevice struct {
	addr   string // its sending address, ip:port: the device as the servers see it
	stdin  io.WriteCloser
	stderr testkit.Buffer

	mu  sync.Mutex
	out []deviceLine
}

// deviceLine is one line the device printed.
type deviceLine struct {
	Ready bool      `json:"ready"`
	Addr  string    `json:"addr"`
	Sent  string    `json:"sent"`
	Recv  *meshRecv `json:"recv"`
	Bad   *struct {
		From, Via, Error string
		Bytes            int
	} `json:"bad"`
	Fail string `json:"fail"`
}

// meshRecv is a datagram the device received and node-cot decoded.
type meshRecv struct {
	UID, Type, Format, From, Via, Callsign, Text string
	Lat                                          float64
	Bytes                                        int
}

func (r meshRecv) fromIP() string {
	host, _, _ := net.SplitHostPort(r.From)
	return host
}

func startMeshDevice(t *testing.T, ns *testkit.Netns, uid, callsign string) *meshDevice {
	t.Helper()
	argv := ns.Command("node", "mesh-device.mjs")
	cmd := exec.Command(argv[0], argv[1:]...)
	cmd.Dir = testkit.InteropDir(t)
	cmd.Env = append(os.Environ(), "MESH_ADDR="+ns.Addr.String(), "DEVICE_UID="+uid, "DEVICE_CALLSIGN="+callsign,
		"DIRECT_PORT=4242", "TIMEOUT_MS=120000")
	d := &meshDevice{}
	cmd.Stderr = &d.stderr
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if d.stdin, err = cmd.StdinPipe(); err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	exited := make(chan struct{})
	go func() {
		defer close(exited)
		sc := bufio.NewScanner(stdout)
		sc.Buffer(make([]byte, 64<<10), 1<<20)
		for sc.Scan() {
			var l deviceLine
			if json.Unmarshal(sc.Bytes(), &l) != nil {
				l.Fail = "not JSON: " + sc.Text()
			}
			d.mu.Lock()
			d.out = append(d.out, l)
			d.mu.Unlock()
		}
		cmd.Wait()
	}()
	t.Cleanup(func() {
		d.stdin.Close() // it exits at the end of its input
		select {
		case <-exited:
		case <-time.After(5 * time.Second):
			cmd.Process.Kill()
			<-exited
		}
	})
	testkit.WaitForWithin(t, meshWait, "the mesh device to join the groups", func() bool {
		for _, l := range d.lines() {
			if l.Fail != "" {
				t.Fatalf("mesh device: %s\n%s", l.Fail, d.stderr.String())
			}
			if l.Ready {
				d.addr = l.Addr
				return true
			}
		}
		select {
		case <-exited:
			t.Fatalf("mesh device exited before it was ready:\n%s", d.stderr.String())
		default:
		}
		return false
	})
	return d
}

func (d *meshDevice) lines() []deviceLine {
	d.mu.Lock()
	defer d.mu.Unlock()
	return append([]deviceLine(nil), d.out...)
}

// command sends the device one command.
func (d *meshDevice) command(t *testing.T, c map[string]any) {
	t.Helper()
	b, _ := json.Marshal(c)
	if _, err := d.stdin.Write(append(b, '\n')); err != nil {
		t.Fatalf("mesh device command %s: %v\n%s", b, err, d.stderr.String())
	}
}

// recvs returns the received datagrams that match.
func (d *meshDevice) recvs(match func(meshRecv) bool) []meshRecv {
	var got []meshRecv
	for _, l := range d.lines() {
		if l.Recv != nil && match(*l.Recv) {
			got = append(got, *l.Recv)
		}
	}
	return got
}

// waitRecv waits until the device has received a datagram that matches.
func (d *meshDevice) waitRecv(t *testing.T, what string, match func(meshRecv) bool) {
	t.Helper()
	testkit.WaitForWithin(t, meshWait, "the mesh device to receive "+what, func() bool {
		for _, l := range d.lines() {
			if l.Fail != "" {
				t.Fatalf("mesh device: %s\n%s", l.Fail, d.stderr.String())
			}
		}
		return len(d.recvs(match)) > 0
	})
}
