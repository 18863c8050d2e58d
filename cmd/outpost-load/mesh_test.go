package main

import (
	"bytes"
	"encoding/json"
	"io"
	"net"
	"net/netip"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"

	"outpost/appliance/cot"
	"outpost/internal/testkit"
)

func TestMeshOptionsRefused(t *testing.T) {
	cases := []struct {
		name string
		args []string
		want string
	}{
		{"bad addr", []string{"--addr", "nowhere"}, "--addr"},
		{"no clients", []string{"--clients", "0"}, "--clients"},
		{"no devices", []string{"--devices", "0"}, "--devices"},
		{"too many devices", []string{"--devices", "70000"}, "--devices"},
		{"zero rate", []string{"--rate", "0"}, "--rate"},
		{"huge rate", []string{"--rate", "5000"}, "--rate"},
		{"unicast group", []string{"--group", "10.0.0.1:6969"}, "not an IPv4 multicast group"},
		{"group without port", []string{"--group", "239.2.3.1"}, "--group"},
		{"group port zero", []string{"--group", "239.2.3.1:0"}, "--group"},
		{"IPv6 group", []string{"--group", "[ff02::1]:6969"}, "--group"},
		{"format", []string{"--format", "protobuf"}, "--format"},
		{"no such interface", []string{"--interface", "no-such-if0"}, "--interface"},
		{"no window", []string{"--duration", "0"}, "--duration"},
		{"negative warmup", []string{"--warmup", "-1s"}, "--warmup"},
		{"negative drain", []string{"--drain", "-1s"}, "--drain"},
		{"connect timeout", []string{"--connect-timeout", "0"}, "--connect-timeout"},
		{"short ping", []string{"--ping-interval", "10ms"}, "--ping-interval"},
		{"negative pid", []string{"--pid", "-3"}, "--pid"},
		{"bad local addr", []string{"--local-addrs", "127.0.0.x"}, "--local-addrs"},
		{"bad device addr", []string{"--device-addrs", "127.0.1.x"}, "--device-addrs"},
		{"IPv6 device", []string{"--devices", "1", "--device-addrs", "::1"}, "not an IPv4 address"},
		{"nine ports on one address", []string{"--devices", "9", "--device-addrs", "127.0.1.1"}, "at most 8 ports"},
		{"seventeen on two", []string{"--devices", "17", "--device-addrs", "127.0.1.1-127.0.1.2"}, "give 3 addresses"},
		{"unknown flag", []string{"--senders", "3"}, "senders"},
		{"stray argument", []string{"extra"}, "extra"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			_, err := parseMeshOptions(tc.args, io.Discard)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("%v: error %v, want one naming %q", tc.args, err, tc.want)
			}
		})
	}
	// Every problem is named at once.
	_, err := parseMeshOptions([]string{"--clients", "0", "--format", "x", "--rate", "-1"}, io.Discard)
	for _, want := range []string{"--clients", "--format", "--rate"} {
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("several errors: %v lacks %s", err, want)
		}
	}
}

func TestMeshOptionsDefaultsAndAddresses(t *testing.T) {
	o, err := parseMeshOptions(nil, io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	if o.Clients != 200 || o.Devices != 100 || o.Rate != 1 || o.Format != "xml" || o.Warmup != 5*time.Second ||
		o.Duration != time.Minute || o.Drain != 10*time.Second || o.group != netip.MustParseAddrPort("239.2.3.1:6969") ||
		o.Addr != "127.0.0.1:8087" || o.ifi != nil || len(o.local) != 0 {
		t.Errorf("defaults: %+v", o)
	}
	if len(o.devAddr) != 100 || o.devAddr[0].String() != "127.0.1.1" || o.devAddr[99].String() != "127.0.1.100" || distinctAddrs(o) != 100 {
		t.Errorf("default device addresses: %v … %v", o.devAddr[0], o.devAddr[len(o.devAddr)-1])
	}
	if len(o.warnings()) != 0 {
		t.Errorf("warnings for the defaults: %q", o.warnings())
	}

	// One address each, past 127.0.1.255.
	addrs, err := deviceAddrs("", 300)
	if err != nil || addrs[254].String() != "127.0.1.255" || addrs[255].String() != "127.0.2.0" || addrs[299].String() != "127.0.2.44" {
		t.Errorf("300 devices: %v, %v %v %v", err, addrs[254], addrs[255], addrs[299])
	}
	// A range given: round robin, up to 8 each.
	o, err = parseMeshOptions([]string{"--devices", "16", "--device-addrs", "127.0.1.1-127.0.1.2", "--format", "v1",
		"--rate", "150", "--ping-interval", "0", "--local-addrs", "127.0.0.1-127.0.0.4"}, io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	if o.devAddr[0].String() != "127.0.1.1" || o.devAddr[1].String() != "127.0.1.2" || o.devAddr[15].String() != "127.0.1.2" ||
		distinctAddrs(o) != 2 || len(o.local) != 4 || o.PingEvery != 0 {
		t.Errorf("spread: %v, %d local", o.devAddr, len(o.local))
	}
	if w := o.warnings(); len(w) != 1 || !strings.Contains(w[0], "budget") {
		t.Errorf("a rate over the budget: warnings %q", w)
	}
	o, err = parseMeshOptions([]string{"--devices", "300"}, io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	if w := o.warnings(); len(w) != 1 || !strings.Contains(w[0], "meshMaxSources") {
		t.Errorf("300 devices: warnings %q", w)
	}
	if c := meshConfigOf(o); c["devices"] != 300 || c["device_addresses"] != 300 || c["interface"] != "default" {
		t.Errorf("config: %v", c)
	}
}

func TestSeqWindow(t *testing.T) {
	var w seqWindow
	steps := []struct {
		seq  uint32
		want int
	}{
		{1, seqNew}, {2, seqNew}, {3, seqNew}, {2, seqDup}, {3, seqDup},
		{5, seqNew}, {4, seqNew}, {4, seqDup}, // out of order within the window
		{70, seqNew}, {6, seqLate}, {7, seqNew}, {7, seqDup}, // 64 behind is late, 63 is not
		{200, seqNew}, {200, seqDup}, {199, seqNew}, {137, seqNew}, {136, seqLate},
	}
	for i, s := range steps {
		if got := w.accept(s.seq); got != s.want {
			t.Fatalf("step %d: seq %d gave %d, want %d", i, s.seq, got, s.want)
		}
	}
}

func TestTallyMesh(t *testing.T) {
	sent := []int64{3, 2, 0}
	got := [][]int32{{3, 2, 0}, {1, 2, 0}, {3, 0, 0}}
	d := tallyMesh(sent, got)
	if d.Expected != 15 || d.Received != 11 || d.Lost != 4 || d.Lost != d.Expected-d.Received {
		t.Errorf("counts: %+v", d)
	}
	if d.ReceiversWithLoss != 2 || d.DevicesWithLoss != 2 {
		t.Errorf("losses by receiver %d and device %d, want 2 and 2", d.ReceiversWithLoss, d.DevicesWithLoss)
	}
	if r := d.WorstReceiver; r == nil || *r != (lossOf{Index: 1, Lost: 2, Expected: 5}) {
		t.Errorf("worst receiver %+v", r)
	}
	if w := d.WorstDevice; w == nil || *w != (lossOf{Index: 0, Lost: 2, Expected: 9}) {
		t.Errorf("worst device %+v", w)
	}
	if d.Percent < 73.33 || d.Percent > 73.34 {
		t.Errorf("percent %v", d.Percent)
	}

	all := tallyMesh([]int64{4, 4}, [][]int32{{4, 4}, {4, 4}, {4, 4}})
	if all.Expected != 24 || all.Received != 24 || all.Lost != 0 || all.Percent != 100 || all.WorstReceiver != nil || all.WorstDevice != nil {
		t.Errorf("nothing lost: %+v", all)
	}

	// The verdict and its exit code.
	rep := &meshReport{Deliveries: all}
	if !rep.ok() {
		t.Errorf("a clean run failed: %q", rep.failures())
	}
	for name, spoil := range map[string]func(*meshReport){
		"lost":             func(r *meshReport) { r.Deliveries.Lost = 1 },
		"duplicates":       func(r *meshReport) { r.Deliveries.Duplicates = 2 },
		"late":             func(r *meshReport) { r.Deliveries.Late = 1 },
		"receivers closed": func(r *meshReport) { r.Receivers.Disconnected = 1 },
		"send errors":      func(r *meshReport) { r.Datagrams.SendErrors = 1 },
		"no SA sent":       func(r *meshReport) { r.Deliveries.Expected = 0 },
	} {
		bad := *rep
		spoil(&bad)
		if f := bad.failures(); bad.ok() || len(f) != 1 || !strings.Contains(f[0], name) {
			t.Errorf("%s: failures %q", name, f)
		}
	}
}

// TestMeshDatagrams: both datagram formats decode as the bridge decodes
// them, and once relayed as XML (what the receivers read) still carry the
// device, sequence number and send time in the load remarks.
func TestMeshDatagrams(t *testing.T) {
	now := time.Unix(1_700_000_000, 123_456_789)
	addr := netip.MustParseAddr("127.0.1.4")
	for _, v1 := range []bool{false, true} {
		b, _, err := appendMeshSA(nil, nil, v1, 3, addr, 42, now, true)
		if err != nil {
			t.Fatal(err)
		}
		var ev *cot.Event
		if v1 {
			if !bytes.HasPrefix(b, []byte{0xBF, 0x01, 0xBF}) {
				t.Fatalf("v1 datagram starts % x", b[:3])
			}
			msg, err := cot.ParseMeshFrame(b)
			if err != nil {
				t.Fatal(err)
			}
			ev, err = cot.DecodeProto(msg)
			if err != nil {
				t.Fatal(err)
			}
		} else if ev, err = cot.Decode(b); err != nil {
			t.Fatalf("%v\n%s", err, b)
		}
		if ev.UID != "MESH-3" || ev.Type != "a-f-G-U-C" || !ev.IsSA() {
			t.Errorf("v1 %v: event %s %s", v1, ev.UID, ev.Type)
		}
		relayed := ev.AppendXML(nil)
		m, ok := findMark(relayed)
		if !ok || m.sender != 3 || m.seq != 42 || m.sent != now.UnixNano() || !m.measured {
			t.Errorf("v1 %v: mark %+v %v in %s", v1, m, ok, relayed)
		}
		if len(b) > 1024 {
			t.Errorf("v1 %v: a %d byte datagram; an SA should stay under 1 KiB", v1, len(b))
		}
	}
	// The receivers' own SA carries no load remarks.
	rsa := appendReceiverSA(nil, 7)
	if _, ok := findMark(rsa); ok {
		t.Errorf("a receiver's SA reads as a device's: %s", rsa)
	}
	if ev, err := cot.Decode(rsa); err != nil || ev.UID != uidOf(7) {
		t.Errorf("receiver SA: %v %v", ev, err)
	}
}

// TestMeshReceiverReads feeds one receiver a stream cut at awkward places:
// device SAs (one twice, one of a device it does not know, unmeasured
// ones), a pong and other events; then the server closes it.
func TestMeshReceiverReads(t *testing.T) {
	o, err := parseMeshOptions([]string{"--devices", "2", "--quiet"}, io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	m := &meshRun{o: o, progress: io.Discard, hist: newHists(1)}
	r := &meshReceiver{m: m, hist: m.hist.shard(0), pairs: make([]seqWindow, 2)}
	addr := netip.MustParseAddr("127.0.1.1")
	var stream []byte
	sa := func(dev int, seq uint32, measured bool) {
		b, _, err := appendMeshSA(nil, nil, false, dev, addr, seq, time.Now(), measured)
		if err != nil {
			t.Fatal(err)
		}
		ev, err := cot.Decode(b)
		if err != nil {
			t.Fatal(err)
		}
		stream = append(ev.AppendXML(stream), '\n')
	}
	sa(0, 1, false)
	sa(0, 2, true)
	sa(1, 1, true)
	sa(0, 2, true) // again
	sa(0, 3, true)
	sa(5, 1, true) // not a device of this run
	stream = cot.NewPong(time.Now()).AppendXML(stream)
	stream = appendReceiverSA(stream, 9)

	client, server := net.Pipe()
	go func() {
		for b := stream; len(b) > 0; {
			n := min(7, len(b))
			server.Write(b[:n])
			b = b[n:]
		}
		server.Close()
	}()
	ready := false
	if !r.readLoop(client, func() { ready = true }) || !ready {
		t.Fatal("the receiver did not become ready")
	}
	if r.recv.Load() != 3 || r.pairs[0].got != 2 || r.pairs[1].got != 1 || r.dups != 1 || r.late != 0 {
		t.Errorf("received %d (%d, %d), %d duplicates", r.recv.Load(), r.pairs[0].got, r.pairs[1].got, r.dups)
	}
	if r.msgs != 8 || r.pongs != 1 || r.other != 2 || r.bytes != int64(len(stream)) {
		t.Errorf("messages %d, pongs %d, other %d, bytes %d of %d", r.msgs, r.pongs, r.other, r.bytes, len(stream))
	}
	if m.disconnected.Load() != 1 || r.err == nil {
		t.Errorf("the server's close was not counted: %d, %v", m.disconnected.Load(), r.err)
	}
	if l := m.hist.summary(); l.Count != 3 {
		t.Errorf("latency of %d deliveries, want 3", l.Count)
	}
}

func TestMeshSummarize(t *testing.T) {
	dir := t.TempDir()
	write := func(name string, v any) string {
		b, _ := json.Marshal(v)
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, b, 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	var mesh []string
	for i, per := range []float64{30, 10, 20} {
		mesh = append(mesh, write("m"+string(rune('a'+i))+".json", meshReport{Kind: meshReportKind,
			Deliveries: meshDeliveries{Percent: 100, Latency: latency{P99: per / 10}},
			Server:     &meshServerInfo{CPUPerEvent: per, RSSPeak: 30 << 20}}))
	}
	var out bytes.Buffer
	if err := summarizeReports(mesh, &out); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"server CPU/bridged event µs", "20.0", "10.0", "30.0", "delivered %", "runs"} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("summary lacks %q:\n%s", want, out.String())
		}
	}
	main := write("main.json", report{Clients: clientsInfo{Connected: 5}})
	if err := summarizeReports(append(mesh, main), &out); err == nil || !strings.Contains(err.Error(), "together") {
		t.Errorf("mixed reports: %v", err)
	}
	out.Reset()
	if err := summarizeReports([]string{main}, &out); err != nil || !strings.Contains(out.String(), "clients connected") {
		t.Errorf("a main mode report: %v\n%s", err, out.String())
	}
	if err := summarizeReports(nil, &out); err == nil {
		t.Error("no report summarised")
	}
}

func TestMeshExitCodes(t *testing.T) {
	var out, errb bytes.Buffer
	if code := realMain([]string{"mesh", "--format", "json"}, &out, &errb); code != exitUsage || !strings.Contains(errb.String(), "--format") {
		t.Errorf("bad flag: exit %d, %q", code, errb.String())
	}
	errb.Reset()
	if code := realMain([]string{"mesh", "-h"}, &out, &errb); code != exitOK || !strings.Contains(errb.String(), "-device-addrs") {
		t.Errorf("help: exit %d, %q", code, errb.String())
	}
	// Nothing listens on port 1: no receiver connects (on a system where
	// 127.0.1.1 is not this machine's, binding the device fails first).
	errb.Reset()
	code := realMain([]string{"mesh", "--addr", "127.0.0.1:1", "--clients", "2", "--devices", "1", "--connect-timeout", "100ms", "--quiet"}, &out, &errb)
	if code != exitFailure || !strings.Contains(errb.String(), "did not connect") && !strings.Contains(errb.String(), "device 0") {
		t.Errorf("nothing listening: exit %d, %q", code, errb.String())
	}
}

// TestMeshScript runs scripts/bench/mesh.sh for real, briefly, in both
// formats: the server and a handful of devices and receivers in a network
// namespace of their own. Root only (network namespaces).
func TestMeshScript(t *testing.T) {
	if runtime.GOOS != "linux" || os.Geteuid() != 0 {
		t.Skip("the mesh scenario needs Linux and root (unshare -n)")
	}
	for _, tool := range []string{"bash", "unshare", "ip"} {
		if _, err := exec.LookPath(tool); err != nil {
			t.Skipf("no %s", tool)
		}
	}
	root, err := filepath.Abs("../..")
	if err != nil {
		t.Fatal(err)
	}
	bin := t.TempDir()
	build := exec.Command("go", "build", "-o", filepath.Join(bin, "outpost-load"), ".")
	build.Env = append(os.Environ(), "CGO_ENABLED=0")
	if b, err := build.CombinedOutput(); err != nil {
		t.Fatalf("building outpost-load: %v\n%s", err, b)
	}
	if err := os.Symlink(testkit.Binary(t), filepath.Join(bin, "outpost")); err != nil {
		t.Fatal(err)
	}
	for _, format := range []string{"xml", "v1"} {
		t.Run(format, func(t *testing.T) {
			t.Parallel()
			outDir := t.TempDir()
			cmd := exec.Command(filepath.Join(root, "scripts", "bench", "mesh.sh"))
			cmd.Env = append(os.Environ(), "BENCH_BUILT=1", "BENCH_BIN="+bin, "BENCH_OUT="+outDir, "MESH_FORMAT="+format,
				"DEVICES=6", "CLIENTS=5", "RATE=4", "DURATION=2s", "WARMUP=1s")
			b, err := cmd.CombinedOutput()
			if err != nil {
				t.Fatalf("mesh.sh: %v\n%s", err, b)
			}
			if !strings.Contains(string(b), "result:     OK") {
				t.Errorf("no OK verdict:\n%s", b)
			}
			j, err := os.ReadFile(filepath.Join(outDir, "mesh-"+format+"-6x4-5.run1.json"))
			if err != nil {
				t.Fatalf("%v\n%s", err, b)
			}
			var rep meshReport
			if err := json.Unmarshal(j, &rep); err != nil {
				t.Fatal(err)
			}
			d, g := rep.Deliveries, rep.Datagrams
			// 6 devices at 4 SA/s for 2 s: about 48 in the window (each
			// device's phase moves it by one).
			if g.InWindow < 40 || g.InWindow > 56 || g.Sent <= g.InWindow || g.SendErrors != 0 {
				t.Errorf("datagrams: %+v", g)
			}
			if d.Expected != 5*g.InWindow || d.Received != d.Expected || d.Lost != 0 || d.Duplicates != 0 || d.Latency.Count != uint64(d.Received) {
				t.Errorf("deliveries: %+v", d)
			}
			if s := rep.Server; s == nil || s.RSSPeak <= 0 || s.CPUWindow <= 0 || s.CPUPerEvent <= 0 || s.CPUPerDelivery <= 0 || s.Error != "" {
				t.Errorf("server: %+v", s)
			}
			if rep.Kind != meshReportKind || rep.Config["format"] != format {
				t.Errorf("report: kind %q, config %v", rep.Kind, rep.Config)
			}
		})
	}
}

// BenchmarkMeshReceive is a receiver's cost per device SA read: cutting
// the stream, reading the remarks, the sequence window and the latency
// histogram (not the read system call).
func BenchmarkMeshReceive(b *testing.B) {
	m := &meshRun{o: &meshOptions{Quiet: true}, progress: io.Discard, hist: newHists(1)}
	const devices = 100
	r := &meshReceiver{m: m, hist: m.hist.shard(0), pairs: make([]seqWindow, devices)}
	var stream []byte
	var offsets []int
	for i := range devices {
		sa, _, _ := appendMeshSA(nil, nil, false, i, netip.MustParseAddr("127.0.1.1"), 1, time.Now(), true)
		ev, err := cot.Decode(sa)
		if err != nil {
			b.Fatal(err)
		}
		stream = ev.AppendXML(stream)
		offsets = append(offsets, len(stream))
	}
	now := time.Now().UnixNano()
	b.SetBytes(int64(len(stream) / devices))
	b.ResetTimer()
	for n := 0; n < b.N; {
		for i := range r.pairs {
			r.pairs[i] = seqWindow{}
		}
		for start := 0; start < len(stream) && n < b.N; n++ {
			k := cutXML(stream[start:], 0)
			r.handle(stream[start:start+k], now)
			start += k
		}
	}
}
