package main

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"runtime"
	"strings"
	"syscall"
)

// meshReportKind marks a mesh report's JSON, so that summarize tells it
// from the main mode's.
const meshReportKind = "mesh"

// meshReport is what a mesh run measured; its JSON form is the --json file.
type meshReport struct {
	Kind       string          `json:"kind"`
	Config     map[string]any  `json:"config"`
	Machine    machineInfo     `json:"machine"`
	Receivers  meshReceivers   `json:"receivers"`
	Datagrams  meshDatagrams   `json:"datagrams"`
	Deliveries meshDeliveries  `json:"deliveries"`
	WindowSec  float64         `json:"window_seconds"`
	DrainSec   float64         `json:"drain_seconds"`
	Server     *meshServerInfo `json:"server,omitempty"` // nil without --pid
	Tool       meshToolInfo    `json:"tool"`
}

type meshReceivers struct {
	Clients       int            `json:"clients"`
	ConnectSec    float64        `json:"connect_seconds"`
	DialErrors    int64          `json:"dial_errors"` // failed attempts, retried
	Disconnected  int            `json:"disconnected"`
	DisconnectsBy map[string]int `json:"disconnects_by_reason,omitempty"`
}

type meshDatagrams struct {
	Devices      int            `json:"devices"`
	Addresses    int            `json:"addresses"` // distinct source IP addresses
	Sent         int64          `json:"sent"`      // the whole run: warm-up and window
	InWindow     int64          `json:"sent_in_window"`
	PerSecond    float64        `json:"sent_per_second"` // in the window
	SendErrors   int64          `json:"send_errors"`
	SendErrorsBy map[string]int `json:"send_errors_by_reason,omitempty"`
}

// meshDeliveries counts deliveries of the SAs sent in the window: one
// receiver getting one device's SA number seq.
type meshDeliveries struct {
	Expected   int64   `json:"expected"` // sent in the window x receivers
	Received   int64   `json:"received"` // distinct (receiver, device, seq)
	Percent    float64 `json:"delivered_percent"`
	Lost       int64   `json:"lost"`
	Duplicates int64   `json:"duplicates"` // a (receiver, device, seq) received again, any SA of the run
	Late       int64   `json:"late"`       // older than the newest of its device by 64 or more: not counted
	PerSecond  float64 `json:"per_second"` // received / window
	// Where the losses were: how many receivers and devices had at least
	// one, and the worst of each.
	ReceiversWithLoss int     `json:"receivers_with_loss"`
	DevicesWithLoss   int     `json:"devices_with_loss"`
	WorstReceiver     *lossOf `json:"worst_receiver,omitempty"`
	WorstDevice       *lossOf `json:"worst_device,omitempty"`
	Latency           latency `json:"latency"`
}

type lossOf struct {
	Index    int   `json:"index"`
	Lost     int64 `json:"lost"`
	Expected int64 `json:"expected"`
}

type meshServerInfo struct {
	PID            int     `json:"pid"`
	RSSStart       int64   `json:"rss_start_bytes"`
	RSSPeak        int64   `json:"rss_peak_bytes"`
	RSSFinal       int64   `json:"rss_final_bytes"`
	CPUWindow      float64 `json:"cpu_window_seconds"`
	CPUShare       float64 `json:"cpu_window_percent"`  // of one core
	CPUPerEvent    float64 `json:"cpu_per_event_us"`    // window CPU / SAs the devices sent in the window
	CPUPerDelivery float64 `json:"cpu_per_delivery_us"` // window CPU / deliveries received
	Error          string  `json:"error,omitempty"`
}

type meshToolInfo struct {
	CPUWindow      float64 `json:"cpu_window_seconds"`
	CPUShare       float64 `json:"cpu_window_percent"`
	CPUPerDelivery float64 `json:"cpu_per_delivery_us"`
	MaxRSS         int64   `json:"max_rss_bytes"`
	Messages       int64   `json:"messages_received"`
	Bytes          int64   `json:"bytes_received"`
	Pongs          int64   `json:"pongs"`
	Other          int64   `json:"other_messages"` // the protocol offer, the receivers' SAs, …
}

func meshConfigOf(o *meshOptions) map[string]any {
	iface := o.Interface
	if iface == "" {
		iface = "default"
	}
	return map[string]any{
		"addr": o.Addr, "clients": o.Clients, "devices": o.Devices, "device_addresses": distinctAddrs(o),
		"rate": o.Rate, "group": o.Group, "format": o.Format, "interface": iface, "local_addrs": len(o.local),
		"warmup": o.Warmup.String(), "duration": o.Duration.String(), "drain": o.Drain.String(), "go": runtime.Version(),
	}
}

func distinctAddrs(o *meshOptions) int {
	seen := map[[4]byte]bool{}
	for _, a := range o.devAddr {
		seen[a.As4()] = true
	}
	return len(seen)
}

// tallyMesh counts the deliveries: sent[d] is how many SAs device d sent
// in the window, got[r][d] how many of them receiver r received once.
// Every receiver expects every one.
func tallyMesh(sent []int64, got [][]int32) meshDeliveries {
	var t meshDeliveries
	var sentAll int64
	for _, s := range sent {
		sentAll += s
	}
	t.Expected = sentAll * int64(len(got))
	byDevice := make([]int64, len(sent))
	for r, row := range got {
		var lostR int64
		for d, g := range row {
			t.Received += int64(g)
			if l := sent[d] - int64(g); l > 0 {
				lostR += l
				byDevice[d] += l
			}
		}
		t.Lost += lostR
		if lostR > 0 {
			t.ReceiversWithLoss++
			if t.WorstReceiver == nil || lostR > t.WorstReceiver.Lost {
				t.WorstReceiver = &lossOf{Index: r, Lost: lostR, Expected: sentAll}
			}
		}
	}
	for d, l := range byDevice {
		if l > 0 {
			t.DevicesWithLoss++
			if t.WorstDevice == nil || l > t.WorstDevice.Lost {
				t.WorstDevice = &lossOf{Index: d, Lost: l, Expected: sent[d] * int64(len(got))}
			}
		}
	}
	t.Percent = pct(t.Received, t.Expected)
	return t
}

// fill writes what the receivers and devices counted into rep (after
// teardown: their goroutines have exited).
func (m *meshRun) fill(rep *meshReport, win *window) {
	rep.WindowSec = win.sec
	g := &rep.Datagrams
	g.Devices, g.Addresses = len(m.devices), distinctAddrs(m.o)
	sent := make([]int64, len(m.devices))
	for i, d := range m.devices {
		sent[i] = d.measured
		g.Sent += d.sent
		g.InWindow += d.measured
		if d.errs > 0 {
			g.SendErrors += d.errs
			if g.SendErrorsBy == nil {
				g.SendErrorsBy = map[string]int{}
			}
			g.SendErrorsBy[sendErrorClass(d.err)] += int(d.errs)
		}
	}
	g.PerSecond = float64(g.InWindow) / max(win.sec, 1e-9)

	rc := &rep.Receivers
	rc.Clients, rc.DialErrors = len(m.receivers), m.dialErrors.Load()
	got := make([][]int32, len(m.receivers))
	var dups, late int64
	t := &rep.Tool
	for i, r := range m.receivers {
		row := make([]int32, len(r.pairs))
		for d := range r.pairs {
			row[d] = r.pairs[d].got
		}
		got[i] = row
		dups += r.dups
		late += r.late
		t.Messages += r.msgs
		t.Bytes += r.bytes
		t.Pongs += r.pongs
		t.Other += r.other
		if r.ready.Load() && r.err != nil {
			rc.Disconnected++
			if rc.DisconnectsBy == nil {
				rc.DisconnectsBy = map[string]int{}
			}
			rc.DisconnectsBy[classify(r.err)]++
		}
	}
	dl := tallyMesh(sent, got)
	dl.Duplicates, dl.Late = dups, late
	dl.PerSecond = float64(dl.Received) / max(win.sec, 1e-9)
	dl.Latency = m.hist.summary()
	rep.Deliveries = dl

	t.CPUWindow = win.toolCPU
	t.CPUShare = 100 * win.toolCPU / max(win.sec, 1e-9)
	t.CPUPerDelivery = perUnit(win.toolCPU, dl.Received)
	t.MaxRSS = selfMaxRSS()
}

// sendErrorClass names a send error without its addresses.
func sendErrorClass(err error) string {
	var errno syscall.Errno
	if errors.As(err, &errno) {
		return errno.Error()
	}
	return classify(err)
}

// ok is true when the run delivered every expected SA once: nothing lost,
// duplicated or late, no receiver closed, no send failed, and the window
// held at least one SA.
func (rep *meshReport) ok() bool {
	return len(rep.failures()) == 0
}

func (rep *meshReport) failures() []string {
	var f []string
	d := rep.Deliveries
	if d.Expected == 0 {
		f = append(f, "no SA sent in the window")
	}
	if d.Lost > 0 {
		f = append(f, fmt.Sprintf("%d lost", d.Lost))
	}
	if d.Duplicates > 0 {
		f = append(f, fmt.Sprintf("%d duplicates", d.Duplicates))
	}
	if d.Late > 0 {
		f = append(f, fmt.Sprintf("%d late", d.Late))
	}
	if n := rep.Receivers.Disconnected; n > 0 {
		f = append(f, fmt.Sprintf("%d receivers closed", n))
	}
	if n := rep.Datagrams.SendErrors; n > 0 {
		f = append(f, fmt.Sprintf("%d send errors", n))
	}
	return f
}

// print writes the human-readable report.
func (rep *meshReport) print(w io.Writer) {
	p := func(format string, a ...any) { fmt.Fprintf(w, format+"\n", a...) }
	c, g, d := rep.Config, rep.Datagrams, rep.Deliveries
	p("outpost-load mesh: %d devices on %d addresses x %v SA/s to %v as %v; %d receivers on %v; load average %s at start, %s at the end",
		g.Devices, g.Addresses, c["rate"], c["group"], c["format"], rep.Receivers.Clients, c["addr"],
		fmtLoad(rep.Machine.LoadAvgStart), fmtLoad(rep.Machine.LoadAvgEnd))
	p("receivers:  %d connected in %.2f s, %d dial errors, %d closed by the server%s",
		rep.Receivers.Clients, rep.Receivers.ConnectSec, rep.Receivers.DialErrors, rep.Receivers.Disconnected, fmtReasons(rep.Receivers.DisconnectsBy))
	p("datagrams:  %d sent, %d of them in the %.1f s window (%.1f/s), %d send errors%s",
		g.Sent, g.InWindow, rep.WindowSec, g.PerSecond, g.SendErrors, fmtReasons(g.SendErrorsBy))
	p("deliveries: %d of %d expected (%.3f %%), %d lost, %d duplicates, %d late; %.0f per second; drained in %.2f s",
		d.Received, d.Expected, d.Percent, d.Lost, d.Duplicates, d.Late, d.PerSecond, rep.DrainSec)
	if d.Lost > 0 {
		p("losses:     %d of %d receivers and %d of %d devices lost some; worst receiver %d (%d of %d), worst device %d (%d of %d)",
			d.ReceiversWithLoss, rep.Receivers.Clients, d.DevicesWithLoss, g.Devices,
			d.WorstReceiver.Index, d.WorstReceiver.Lost, d.WorstReceiver.Expected, d.WorstDevice.Index, d.WorstDevice.Lost, d.WorstDevice.Expected)
	}
	l := d.Latency
	p("latency:    p50 %.2f ms, p90 %.2f ms, p99 %.2f ms, p99.9 %.2f ms, max %.2f ms", l.P50, l.P90, l.P99, l.P999, l.Max)
	if s := rep.Server; s != nil {
		p("server:     CPU %.2f s in the window (%.1f %% of one core): %.1f µs per bridged event, %.3f µs per delivery; RSS %s at start, %s peak, %s final",
			s.CPUWindow, s.CPUShare, s.CPUPerEvent, s.CPUPerDelivery, mib(s.RSSStart), mib(s.RSSPeak), mib(s.RSSFinal))
		if s.Error != "" {
			p("server:     reading /proc failed: %s", s.Error)
		}
	}
	rep.Machine.printSteal(p)
	t := rep.Tool
	p("tool:       CPU %.2f s in the window (%.1f %% of one core), %.3f µs per delivery; max RSS %s; %d messages, %s received",
		t.CPUWindow, t.CPUShare, t.CPUPerDelivery, mib(t.MaxRSS), t.Messages, mib(t.Bytes))
	if f := rep.failures(); len(f) > 0 {
		p("result:     FAILED: %s", strings.Join(f, ", "))
	} else {
		p("result:     OK: every SA of the window reached every receiver once")
	}
}

// meshMetrics are the figures summarize prints for mesh reports.
var meshMetrics = []metric[meshReport]{
	{"devices", func(r *meshReport) (float64, bool) { return float64(r.Datagrams.Devices), true }},
	{"receivers", func(r *meshReport) (float64, bool) { return float64(r.Receivers.Clients), true }},
	{"datagrams sent/s", func(r *meshReport) (float64, bool) { return r.Datagrams.PerSecond, true }},
	{"delivered %", func(r *meshReport) (float64, bool) { return r.Deliveries.Percent, true }},
	{"lost", func(r *meshReport) (float64, bool) { return float64(r.Deliveries.Lost), true }},
	{"duplicates", func(r *meshReport) (float64, bool) { return float64(r.Deliveries.Duplicates), true }},
	{"deliveries/s", func(r *meshReport) (float64, bool) { return r.Deliveries.PerSecond, true }},
	{"p50 ms", func(r *meshReport) (float64, bool) { return r.Deliveries.Latency.P50, true }},
	{"p99 ms", func(r *meshReport) (float64, bool) { return r.Deliveries.Latency.P99, true }},
	{"max ms", func(r *meshReport) (float64, bool) { return r.Deliveries.Latency.Max, true }},
	{"server CPU % of a core", func(r *meshReport) (float64, bool) {
		return serverOf(r, func(s *meshServerInfo) float64 { return s.CPUShare })
	}},
	{"server CPU/bridged event µs", func(r *meshReport) (float64, bool) {
		return serverOf(r, func(s *meshServerInfo) float64 { return s.CPUPerEvent })
	}},
	{"server CPU/delivery µs", func(r *meshReport) (float64, bool) {
		return serverOf(r, func(s *meshServerInfo) float64 { return s.CPUPerDelivery })
	}},
	{"server RSS peak MiB", func(r *meshReport) (float64, bool) {
		return serverOf(r, func(s *meshServerInfo) float64 { return float64(s.RSSPeak) / miB })
	}},
	{"tool CPU % of a core", func(r *meshReport) (float64, bool) { return r.Tool.CPUShare, true }},
	{"CPU steal % (window)", func(r *meshReport) (float64, bool) {
		if r.Machine.StealPercent == nil {
			return 0, false
		}
		return *r.Machine.StealPercent, true
	}},
	{"load average (1 min, start)", func(r *meshReport) (float64, bool) {
		if len(r.Machine.LoadAvgStart) == 0 {
			return 0, false
		}
		return r.Machine.LoadAvgStart[0], true
	}},
}

func serverOf(r *meshReport, f func(*meshServerInfo) float64) (float64, bool) {
	if r.Server == nil {
		return 0, false
	}
	return f(r.Server), true
}

// summarizeReports is the summarize subcommand: the medians of main mode
// reports, or of mesh reports (not both at once).
func summarizeReports(paths []string, w io.Writer) error {
	kinds := map[string]int{}
	for _, p := range paths {
		b, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		var k struct {
			Kind string `json:"kind"`
		}
		if err := json.Unmarshal(b, &k); err != nil {
			return fmt.Errorf("%s: %w", p, err)
		}
		kinds[k.Kind]++
	}
	switch {
	case kinds[meshReportKind] == 0:
		return summarize(paths, w)
	case kinds[meshReportKind] < len(paths):
		return errors.New("mesh reports and other reports given together")
	}
	reps, err := readReports[meshReport](paths)
	if err != nil {
		return err
	}
	return printMedians(w, reps, meshMetrics)
}
