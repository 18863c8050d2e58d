package main

import (
	"encoding/json"
	"fmt"
	"io"
	"maps"
	"os"
	"runtime"
	"slices"
	"strings"
)

// report is what a run measured; its JSON form is the --json file.
type report struct {
	Config  map[string]any `json:"config"`
	Machine machineInfo    `json:"machine"`
	Clients clientsInfo    `json:"clients"`
	Load    *loadInfo      `json:"load,omitempty"` // nil in --idle runs
	Idle    *idleInfo      `json:"idle,omitempty"`
	Server  *serverInfo    `json:"server,omitempty"` // nil without --pid
	Tool    toolInfo       `json:"tool"`
}

type machineInfo struct {
	CPUs         int       `json:"cpus"`
	LoadAvgStart []float64 `json:"loadavg_start"`
	LoadAvgEnd   []float64 `json:"loadavg_end"`
	FDLimit      uint64    `json:"fd_limit"`
	// StealPercent is the share of the machine's CPU time the hypervisor
	// gave to other machines during the measured window (Linux; absent
	// elsewhere). On a shared VM a run with steal says little about the
	// server: its latency and CPU figures are the machine's.
	StealPercent *float64 `json:"steal_percent,omitempty"`
}

type clientsInfo struct {
	Requested     int            `json:"requested"`
	Connected     int            `json:"connected"` // became ready at some point
	ReadyAtEnd    int            `json:"connected_at_end"`
	Failed        int            `json:"failed"` // never connected
	Disconnected  int            `json:"disconnected"`
	DisconnectsBy map[string]int `json:"disconnects_by_reason,omitempty"`
	DialErrors    int            `json:"dial_errors"` // failed attempts, retried
	DialErrorsBy  map[string]int `json:"dial_errors_by_reason,omitempty"`
	FailedBy      map[string]int `json:"failed_by_reason,omitempty"`
	Protobuf      int            `json:"protobuf"`
	NegotiationKO int            `json:"negotiation_failed"`
	Slow          int            `json:"slow"`
	ConnectSec    float64        `json:"connect_seconds"` // until the last one was connected
	// The latest-SA replay (protocol.md §5): until every connected client
	// held the SA of every other one.
	ReplayComplete int     `json:"replay_complete"`
	ReplaySec      float64 `json:"replay_all_seconds"`
	ReplayP50Sec   float64 `json:"replay_client_p50_seconds"` // per client, from its own connection start
	ReplayP99Sec   float64 `json:"replay_client_p99_seconds"`
	ReplaySAs      int64   `json:"replay_deliveries"` // SAs received while connecting and replaying
}

type deliveries struct {
	Clients   int     `json:"clients"`
	Expected  int64   `json:"expected"`
	Received  int64   `json:"received"`
	Percent   float64 `json:"delivered_percent"`
	Coalesced int64   `json:"coalesced"`
	Missing   int64   `json:"missing"`
	Latency   latency `json:"latency"`
}

type loadInfo struct {
	Senders       int        `json:"senders"`
	Sent          int64      `json:"sent"` // measured SAs
	SendErrors    int64      `json:"send_errors"`
	WindowSec     float64    `json:"window_seconds"`
	DrainSec      float64    `json:"drain_seconds"`
	Expected      int64      `json:"expected"`
	Received      int64      `json:"received"`
	Percent       float64    `json:"delivered_percent"`
	Arrived       int64      `json:"arrived_in_window"`     // SAs delivered during the window, whenever sent
	PerSecond     float64    `json:"deliveries_per_second"` // Arrived / WindowSec
	Coalesced     int64      `json:"coalesced"`
	Missing       int64      `json:"missing"`
	Duplicates    int64      `json:"duplicates"`
	Normal        deliveries `json:"normal"`
	SlowConsumers deliveries `json:"slow"`
}

type idleInfo struct {
	Senders   int     `json:"senders"` // clients that sent their one SA
	WindowSec float64 `json:"window_seconds"`
	Pings     int64   `json:"pings"`
	Pongs     int64   `json:"pongs"`
}

type serverInfo struct {
	PID             int     `json:"pid"`
	RSSIdle         int64   `json:"rss_idle_bytes"`      // before connecting
	RSSConnected    int64   `json:"rss_connected_bytes"` // every client connected and replayed
	RSSPeak         int64   `json:"rss_peak_bytes"`
	RSSFinal        int64   `json:"rss_final_bytes"` // at the end, clients still connected
	RSSPerClient    float64 `json:"rss_per_client_bytes"`
	CPUConnect      float64 `json:"cpu_connect_seconds"`         // connecting and the replay
	CPUConnectPerSA float64 `json:"cpu_connect_per_delivery_us"` // the same per SA delivered meanwhile
	CPUWindow       float64 `json:"cpu_window_seconds"`
	CPUShare        float64 `json:"cpu_window_percent"` // of one core
	CPUPerDelivery  float64 `json:"cpu_per_delivery_us"`
	Error           string  `json:"error,omitempty"`
}

type toolInfo struct {
	CPUConnect     float64 `json:"cpu_connect_seconds"`
	CPUWindow      float64 `json:"cpu_window_seconds"`
	CPUShare       float64 `json:"cpu_window_percent"`
	CPUPerDelivery float64 `json:"cpu_per_delivery_us"`
	MaxRSS         int64   `json:"max_rss_bytes"`
	Messages       int64   `json:"messages_received"`
	Bytes          int64   `json:"bytes_received"`
	Pongs          int64   `json:"pongs"`
	Departures     int64   `json:"departures"`
	Other          int64   `json:"other_messages"`
	Goroutines     int     `json:"goroutines_peak"`
}

// configOf is the run's settings as the report shows them.
func configOf(o *options) map[string]any {
	m := map[string]any{
		"addr": o.Addr, "tls": o.TLS, "clients": o.Clients, "senders": o.Senders, "rate": o.Rate,
		"size": o.Size, "proto": o.Proto, "slow": o.Slow, "slow_rate": o.SlowRate, "idle": o.Idle,
		"ramp": o.Ramp.String(), "duration": o.Duration.String(), "warmup": o.Warmup.String(),
		"ping": o.Ping, "ping_interval": o.PingEvery.String(), "local_addrs": len(o.local),
		"go": runtime.Version(),
	}
	if o.TLS {
		m["credentials"] = max(len(splitList(o.Cert)), len(splitList(o.P12)))
	}
	return m
}

func pct(a, b int64) float64 {
	if b <= 0 {
		return 0
	}
	return 100 * float64(a) / float64(b)
}

func perUnit(sec float64, n int64) float64 {
	if n <= 0 {
		return 0
	}
	return sec / float64(n) * 1e6
}

// writeJSON writes the report to path.
func (rep *report) writeJSON(path string) error {
	b, err := json.MarshalIndent(rep, "", "  ")
	if err != nil {
		return err
	}
	if err := os.WriteFile(path, append(b, '\n'), 0o644); err != nil {
		return fmt.Errorf("--json: %w", err)
	}
	return nil
}

// stealWarn is the steal, in percent of the window's CPU time, from which
// the report says the run was disturbed (a few percent already move p99 by
// milliseconds at 200 x 5: BENCHMARKS.md "Load scenarios").
const stealWarn = 1.0

// print writes the human-readable report.
func (rep *report) print(w io.Writer) {
	p := func(format string, a ...any) { fmt.Fprintf(w, format+"\n", a...) }
	c := rep.Clients
	mode := "TCP"
	if rep.Config["tls"] == true {
		mode = "TLS"
	}
	p("outpost-load: %d clients over %s to %v (%d protobuf, %d slow), load average %s at start, %s at the end",
		c.Requested, mode, rep.Config["addr"], c.Protobuf, c.Slow, fmtLoad(rep.Machine.LoadAvgStart), fmtLoad(rep.Machine.LoadAvgEnd))
	p("clients:    %d connected in %.2f s, %d failed, %d dial errors%s, %d disconnected%s, %d negotiation failures",
		c.Connected, c.ConnectSec, c.Failed, c.DialErrors, fmtReasons(c.DialErrorsBy), c.Disconnected, fmtReasons(c.DisconnectsBy), c.NegotiationKO)
	p("replay:     %d of %d clients hold every other client's SA after %.2f s (per client p50 %.2f s, p99 %.2f s); %d SAs delivered",
		c.ReplayComplete, c.ReadyAtEnd, c.ReplaySec, c.ReplayP50Sec, c.ReplayP99Sec, c.ReplaySAs)
	if l := rep.Load; l != nil {
		p("load:       %d senders x %v SA/s, %d measured SAs in %.1f s (%d send errors)", l.Senders, rep.Config["rate"], l.Sent, l.WindowSec, l.SendErrors)
		p("deliveries: %d of %d expected (%.3f %%); %d coalesced, %d missing, %d duplicates; %.0f per second arrived in the window",
			l.Received, l.Expected, l.Percent, l.Coalesced, l.Missing, l.Duplicates, l.PerSecond)
		printClass(p, "normal", l.Normal)
		if l.SlowConsumers.Clients > 0 {
			printClass(p, "slow", l.SlowConsumers)
		}
	}
	if i := rep.Idle; i != nil {
		p("idle:       %d clients sent one SA; %.1f s connected after the replay; %d pings and %d pongs in the whole run", i.Senders, i.WindowSec, i.Pings, i.Pongs)
	}
	if s := rep.Server; s != nil {
		p("server:     RSS %s idle, %s connected (%s per client), %s peak, %s final",
			mib(s.RSSIdle), mib(s.RSSConnected), kib(s.RSSPerClient), mib(s.RSSPeak), mib(s.RSSFinal))
		p("server CPU: %.2f s connecting (%.3f µs per SA delivered); %.2f s in the window (%.1f %% of one core), %.3f µs per delivery",
			s.CPUConnect, s.CPUConnectPerSA, s.CPUWindow, s.CPUShare, s.CPUPerDelivery)
		if s.Error != "" {
			p("server:     reading /proc failed: %s", s.Error)
		}
	}
	rep.Machine.printSteal(p)
	t := rep.Tool
	p("tool CPU:   %.2f s connecting; %.2f s in the window (%.1f %% of one core), %.3f µs per delivery; max RSS %s; %d messages, %s received",
		t.CPUConnect, t.CPUWindow, t.CPUShare, t.CPUPerDelivery, mib(t.MaxRSS), t.Messages, mib(t.Bytes))
}

func printClass(p func(string, ...any), name string, d deliveries) {
	p("  %-7s  %d clients: %d of %d (%.3f %%), %d coalesced, %d missing; latency p50 %.2f ms, p90 %.2f ms, p99 %.2f ms, p99.9 %.2f ms, max %.2f ms",
		name, d.Clients, d.Received, d.Expected, d.Percent, d.Coalesced, d.Missing,
		d.Latency.P50, d.Latency.P90, d.Latency.P99, d.Latency.P999, d.Latency.Max)
}

func mib(b int64) string { return fmt.Sprintf("%.1f MiB", float64(b)/(1<<20)) }

func kib(b float64) string { return fmt.Sprintf("%.1f KiB", b/1024) }

func fmtLoad(l []float64) string {
	if len(l) < 3 {
		return "unknown"
	}
	return fmt.Sprintf("%.2f/%.2f/%.2f", l[0], l[1], l[2])
}

func fmtReasons(m map[string]int) string {
	if len(m) == 0 {
		return ""
	}
	var parts []string
	for _, k := range slices.Sorted(maps.Keys(m)) {
		parts = append(parts, fmt.Sprintf("%s: %d", k, m[k]))
	}
	return " (" + strings.Join(parts, ", ") + ")"
}

// printSteal prints the machine line: its CPUs and the steal of the
// window, with a warning when the machine was shared.
func (m machineInfo) printSteal(p func(format string, a ...any)) {
	st := m.StealPercent
	if st == nil {
		return
	}
	note := ""
	if *st >= stealWarn {
		note = " — the machine was shared: this run's latency and CPU figures are not the server's alone"
	}
	p("machine:    %d CPUs, %.1f %% of their time stolen by the hypervisor in the window%s", m.CPUs, *st, note)
}
