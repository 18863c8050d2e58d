//go:build linux

package e2e

import (
	"bytes"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"outpost/appliance/admin"
	"outpost/appliance/federation"
	"outpost/appliance/netx"
	"outpost/appliance/sysinfo"
	"outpost/appliance/takclient"
	"outpost/internal/testkit"
)

// BenchmarkFederationSim (BENCHMARKS.md "Federation: four servers";
// `make federation-sim`): four outpost binaries on loopback, federated as
// a star (a hub, three leaves connecting to it) or a chain (each connects
// to the one before it), with 100 TCP clients on each. Every client sends
// its position every 2 s and reads; every client should receive every
// other client's positions once. It reports what was lost or duplicated,
// the latency from the position's time (millisecond resolution) to its
// reading by the number of federation links crossed (hops 0 to 3), and
// the servers' CPU (their processes' user and system time, from /proc)
// per delivery to a client, all deliveries and those that crossed a link:
//
//	go test -run '^$' -bench FederationSim -benchtime 1x -count 3 ./appliance
//
// OUTPOST_FED_SIM_CLIENTS (per server, default 100), OUTPOST_FED_SIM_INTERVAL
// (default 2s) and OUTPOST_FED_SIM_DURATION (the window, default 30s)
// change the load.
func BenchmarkFederationSim(b *testing.B) {
	for _, topo := range []string{"star", "chain"} {
		b.Run(topo, func(b *testing.B) { fedSim(b, topo) })
	}
}

const (
	simServers = 4
	simMaxSeq  = 1024 // positions one client sends at most
	simWarmup  = 5 * time.Second
)

// simHops is the number of federation links between servers i and j: in
// the star server 0 is the hub, in the chain server i connects to i-1.
func simHops(topo string, i, j int) int {
	switch {
	case i == j:
		return 0
	case topo == "chain":
		return max(i-j, j-i)
	case i == 0 || j == 0:
		return 1
	default:
		return 2
	}
}

// simEnv reads a duration or count from the environment.
func simEnv[T int | time.Duration](name string, def T, parse func(string) (T, error)) T {
	if v, err := parse(os.Getenv(name)); err == nil && v > 0 {
		return v
	}
	return def
}

// simReceiver is what one client received.
type simReceiver struct {
	server int
	seen   []uint64 // bit (sender*simMaxSeq + seq)
	dups   int64
	lat    [simServers][]int32 // milliseconds, by hops
}

type simRun struct {
	topo      string
	perServer int
	server    []int // each client's server
	recording atomic.Bool
	received  atomic.Int64 // distinct positions received while recording
	federated atomic.Int64 // of which crossed at least one link
}

func fedSim(b *testing.B, topo string) {
	perServer := simEnv("OUTPOST_FED_SIM_CLIENTS", 100, strconv.Atoi)
	interval := simEnv("OUTPOST_FED_SIM_INTERVAL", 2*time.Second, time.ParseDuration)
	window := simEnv("OUTPOST_FED_SIM_DURATION", 30*time.Second, time.ParseDuration)
	ca := newFedCA(b, "Federation CA")
	procs := make([]*testkit.Proc, simServers)
	for i := range procs {
		name := "sim-" + strconv.Itoa(i)
		certFile, keyFile, _ := ca.issue(b, name)
		args := []string{"--federation-port", "0", "--federation-trust", ca.trust(),
			"--max-connections-per-source", "0", "--key-type", "ecdsa-p256", "--log-level", "info"}
		if i > 0 {
			up := i - 1 // the chain
			if topo == "star" {
				up = 0
			}
			args = append(args, "--federates", "UP="+procs[up].Addr(b, federation.ListenerName))
		}
		procs[i] = testkit.StartWith(b, []string{"env", "OUTPOST_FEDERATION_CERT=" + certFile,
			"OUTPOST_FEDERATION_KEY=" + keyFile, "OUTPOST_FEDERATION_NAME=" + name, testkit.Binary(b)},
			filepath.Join(b.TempDir(), "data"), args...)
	}
	for i, p := range procs[1:] {
		testkit.WaitForWithin(b, fedWait, fmt.Sprintf("sim-%d's link", i+1), func() bool {
			return simLinked(b, p)
		})
	}

	run := &simRun{topo: topo, perServer: perServer}
	n := simServers * perServer
	recv := make([]*simReceiver, n)
	conns := make([]net.Conn, n)
	var readers sync.WaitGroup
	for i := range n {
		run.server = append(run.server, i/perServer)
		recv[i] = &simReceiver{server: i / perServer, seen: make([]uint64, n*simMaxSeq/64)}
		c, err := net.Dial("tcp", procs[i/perServer].Addr(b, netx.ListenerCoTTCP))
		if err != nil {
			b.Fatal(err)
		}
		defer c.Close()
		conns[i] = c
		readers.Add(1)
		go func() { defer readers.Done(); run.read(recv[i], c) }()
	}
	time.Sleep(time.Second) // every client connected before anyone sends

	stop := make(chan struct{})
	var senders sync.WaitGroup
	first, last := make([]atomic.Int64, n), make([]atomic.Int64, n)
	var measuring atomic.Bool
	var sendErr atomic.Int64
	for i := range n {
		first[i].Store(-1)
		senders.Add(1)
		go func() {
			defer senders.Done()
			select { // spread over the interval
			case <-stop:
				return
			case <-time.After(time.Duration(i) * interval / time.Duration(n)):
			}
			t := time.NewTicker(interval)
			defer t.Stop()
			uid := "SIM-" + strconv.Itoa(i)
			for seq := 0; seq < simMaxSeq; seq++ {
				ev := takclient.SA(uid, uid, float64(seq)/100, float64(i%180))
				if measuring.Load() {
					first[i].CompareAndSwap(-1, int64(seq))
					last[i].Store(int64(seq))
				}
				_ = conns[i].SetWriteDeadline(time.Now().Add(10 * time.Second))
				if _, err := conns[i].Write(ev.AppendXML(nil)); err != nil {
					sendErr.Add(1)
					return
				}
				select {
				case <-stop:
					return
				case <-t.C:
				}
			}
		}()
	}
	time.Sleep(simWarmup)
	cpu0 := simCPU(b, procs)
	rec0, fed0 := run.received.Load(), run.federated.Load()
	run.recording.Store(true)
	measuring.Store(true)
	b.ResetTimer()
	time.Sleep(window)
	measuring.Store(false)
	cpu1 := simCPU(b, procs)
	rec1, fed1 := run.received.Load(), run.federated.Load()
	b.StopTimer()
	close(stop)
	senders.Wait()
	for prev := int64(-1); prev != run.received.Load(); { // drain: until 3 s pass with nothing new
		prev = run.received.Load()
		time.Sleep(3 * time.Second)
	}
	run.recording.Store(false)

	var expected, got, dups int64
	var lats [simServers][]int32
	for r, rc := range recv {
		for s := range n {
			f, l := first[s].Load(), last[s].Load()
			if s == r || f < 0 {
				continue
			}
			for q := f; q <= l; q++ {
				expected++
				bit := s*simMaxSeq + int(q)
				if rc.seen[bit/64]&(1<<(bit%64)) != 0 {
					got++
				}
			}
		}
		dups += rc.dups
		for h := range lats {
			lats[h] = append(lats[h], rc.lat[h]...)
		}
	}
	b.ReportMetric(float64(expected-got), "lost")
	b.ReportMetric(float64(dups), "dups")
	b.ReportMetric(float64(expected), "expected")
	for h := range lats {
		if len(lats[h]) == 0 {
			continue
		}
		slices.Sort(lats[h])
		p := func(q float64) float64 { return float64(lats[h][min(len(lats[h])-1, int(q*float64(len(lats[h]))))]) }
		b.ReportMetric(p(0.5), fmt.Sprintf("hop%d-p50-ms", h))
		b.ReportMetric(p(0.99), fmt.Sprintf("hop%d-p99-ms", h))
	}
	cpu := cpu1 - cpu0
	b.ReportMetric(cpu.Seconds()/window.Seconds(), "server-cores")
	b.ReportMetric(float64(cpu.Microseconds())/float64(max(rec1-rec0, 1)), "cpu-µs/delivery")
	b.ReportMetric(float64(cpu.Microseconds())/float64(max(fed1-fed0, 1)), "cpu-µs/fed-delivery")
	if sendErr.Load() > 0 {
		b.Errorf("%d clients failed to send", sendErr.Load())
	}
	for _, c := range conns {
		c.Close()
	}
	readers.Wait()
}

// simLinked reports whether p's federate UP is connected, from its
// management API (the admin token of its first run).
func simLinked(b *testing.B, p *testkit.Proc) bool {
	tok, err := os.ReadFile(filepath.Join(p.DataDir, admin.AdminTokenFile))
	if err != nil {
		b.Fatal(err)
	}
	r := testkit.Do(b, nil, "GET", "http://"+p.Addr(b, netx.ListenerREST)+"/api/federation", nil,
		"Authorization", "Bearer "+strings.TrimSpace(string(tok)))
	var doc struct {
		Federates []struct {
			Name      string `json:"name"`
			Connected bool   `json:"connected"`
		} `json:"federates"`
	}
	r.JSON(b, &doc)
	for _, f := range doc.Federates {
		if f.Name == "UP" && f.Connected {
			return true
		}
	}
	return false
}

// simCPU is the servers' CPU time together.
func simCPU(b *testing.B, procs []*testkit.Proc) time.Duration {
	var total time.Duration
	for _, p := range procs {
		d, err := sysinfo.ProcessCPU(p.PID())
		if err != nil {
			b.Fatal(err)
		}
		total += d
	}
	return total
}

// read records the positions of the simulation (SIM-<n>) that arrive on c
// until it closes.
func (run *simRun) read(r *simReceiver, c net.Conn) {
	readEvents(c, func(ev []byte, now time.Time) { run.event(r, ev, now) })
}

func (run *simRun) event(r *simReceiver, ev []byte, now time.Time) {
	uid := attr(ev, ` uid="`)
	if !bytes.HasPrefix(uid, []byte("SIM-")) {
		return
	}
	s, err1 := strconv.Atoi(string(uid[4:]))
	lat, err2 := strconv.ParseFloat(string(attr(ev, ` lat="`)), 64)
	at, err3 := time.Parse("2006-01-02T15:04:05.000Z", string(attr(ev, ` time="`)))
	q := int(lat*100 + 0.5)
	if err1 != nil || err2 != nil || err3 != nil || s < 0 || s >= len(run.server) || q < 0 || q >= simMaxSeq {
		return
	}
	bit := s*simMaxSeq + q
	if r.seen[bit/64]&(1<<(bit%64)) != 0 {
		r.dups++
		return
	}
	r.seen[bit/64] |= 1 << (bit % 64)
	if !run.recording.Load() {
		return
	}
	h := simHops(run.topo, r.server, run.server[s])
	r.lat[h] = append(r.lat[h], int32(now.Sub(at).Milliseconds()))
	run.received.Add(1)
	if h > 0 {
		run.federated.Add(1)
	}
}
