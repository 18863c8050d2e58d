package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"net/http"
	"os"
	"runtime"
	"strings"
	"sync"
	"sync/atomic"
	"time"
)

// The rest subcommand: --clients concurrent operators calling the
// management API (19023) with a bearer token for --duration, each request
// after the previous answer (closed loop), cycling through --paths. It
// reports requests per second, latency percentiles, the answers that were
// not 2xx and, with --pid, the server's CPU per request and peak RSS.
//
//	outpost-load rest --url http://127.0.0.1:19023 --token-file DATA/admin.token --clients 50 --seed 1000

type restOptions struct {
	URL       string
	Token     string
	Clients   int
	Duration  time.Duration
	Warmup    time.Duration
	Paths     []string
	Seed      int
	PID       int
	JSON      string
	Timeout   time.Duration
	BodyLimit int64
}

// defaultRESTPaths is an operator console's reads: geo objects around a
// point, emergencies, the data packages and the system users.
const defaultRESTPaths = "/ManageGeoObject/getGeoObject?latitude=59.3&longitude=18.06&radius=2000," +
	"/ManageEmergency/getEmergency,/DataPackageTable,/ManageSystemUser/getAll"

func parseRESTOptions(args []string, stderr io.Writer) (*restOptions, error) {
	fs := flag.NewFlagSet("outpost-load rest", flag.ContinueOnError)
	fs.SetOutput(stderr)
	o := &restOptions{}
	var tokenFile, paths string
	fs.StringVar(&o.URL, "url", "http://127.0.0.1:19023", "management API base URL")
	fs.StringVar(&o.Token, "token", "", "API token (or --token-file)")
	fs.StringVar(&tokenFile, "token-file", "", "file holding the API token (the server's admin.token)")
	fs.IntVar(&o.Clients, "clients", 50, "concurrent clients, each sending its next request when the last one is answered")
	fs.DurationVar(&o.Duration, "duration", 20*time.Second, "measurement window")
	fs.DurationVar(&o.Warmup, "warmup", 2*time.Second, "requests before the window, not measured")
	fs.StringVar(&paths, "paths", defaultRESTPaths, "comma separated GET paths the clients cycle through")
	fs.IntVar(&o.Seed, "seed", 0, "geo objects to create first (postGeoObject around 59.3, 18.06) so the reads have something to return")
	fs.IntVar(&o.PID, "pid", 0, "server process id: report its CPU time and resident memory (Linux /proc)")
	fs.StringVar(&o.JSON, "json", "", "also write the report as JSON to this file")
	fs.DurationVar(&o.Timeout, "timeout", 30*time.Second, "longest wait for one answer")
	if err := fs.Parse(args); err != nil {
		return nil, err
	}
	if fs.NArg() > 0 {
		return nil, fmt.Errorf("unexpected argument %q", fs.Arg(0))
	}
	if tokenFile != "" {
		b, err := os.ReadFile(tokenFile)
		if err != nil {
			return nil, fmt.Errorf("--token-file: %w", err)
		}
		o.Token = strings.TrimSpace(string(b))
	}
	o.Paths = splitList(paths)
	o.BodyLimit = 64 << 20
	switch {
	case o.Token == "":
		return nil, errors.New("--token or --token-file is required")
	case o.Clients < 1 || o.Clients > 10000:
		return nil, errors.New("--clients must be 1..10000")
	case o.Duration <= 0 || o.Warmup < 0 || o.Timeout <= 0:
		return nil, errors.New("--duration and --timeout must be positive, --warmup not negative")
	case len(o.Paths) == 0:
		return nil, errors.New("--paths is empty")
	case o.Seed < 0 || o.Seed > 1000000:
		return nil, errors.New("--seed must be 0..1000000")
	}
	for _, p := range o.Paths {
		if !strings.HasPrefix(p, "/") {
			return nil, fmt.Errorf("--paths: %q does not start with /", p)
		}
	}
	o.URL = strings.TrimRight(o.URL, "/")
	return o, nil
}

type restReport struct {
	Config    map[string]any `json:"config"`
	Machine   machineInfo    `json:"machine"`
	Requests  int64          `json:"requests"`
	PerSecond float64        `json:"requests_per_second"`
	Failed    map[string]int `json:"failed,omitempty"` // status code or error class → count
	Bytes     int64          `json:"bytes_received"`
	Latency   latency        `json:"latency"`
	WindowSec float64        `json:"window_seconds"`
	Server    *serverInfo    `json:"server,omitempty"`
}

type restRun struct {
	o       *restOptions
	client  *http.Client
	hist    hists
	reqs    atomic.Int64
	bytes   atomic.Int64
	mu      sync.Mutex
	failed  map[string]int
	measure atomic.Bool
}

func runREST(args []string, stdout, stderr io.Writer) int {
	o, err := parseRESTOptions(args, stderr)
	if errors.Is(err, flag.ErrHelp) {
		return exitOK
	}
	if err != nil {
		fmt.Fprintln(stderr, "outpost-load rest:", err)
		return exitUsage
	}
	rep, err := o.run()
	if err != nil {
		fmt.Fprintln(stderr, "outpost-load rest:", err)
		return exitFailure
	}
	rep.print(stdout)
	if o.JSON != "" {
		b, _ := json.MarshalIndent(rep, "", "  ")
		if err := os.WriteFile(o.JSON, append(b, '\n'), 0o644); err != nil {
			fmt.Fprintln(stderr, "outpost-load rest:", err)
			return exitFailure
		}
	}
	if len(rep.Failed) > 0 {
		return exitFailure
	}
	return exitOK
}

func (o *restOptions) run() (*restReport, error) {
	tr := &http.Transport{MaxIdleConnsPerHost: o.Clients, MaxConnsPerHost: o.Clients, ResponseHeaderTimeout: o.Timeout}
	defer tr.CloseIdleConnections()
	r := &restRun{o: o, client: &http.Client{Transport: tr, Timeout: o.Timeout}, hist: newHists(8), failed: map[string]int{}}
	if err := r.seed(); err != nil {
		return nil, err
	}
	rep := &restReport{Config: map[string]any{"url": o.URL, "clients": o.Clients, "duration": o.Duration.String(),
		"paths": o.Paths, "seed": o.Seed}, Machine: machineInfo{CPUs: runtime.NumCPU(), LoadAvgStart: loadAvg()}}
	watch := watchServer(o.PID, 200*time.Millisecond)
	ctx, cancel := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	for i := range o.Clients {
		wg.Go(func() { r.loop(ctx, i) })
	}
	time.Sleep(o.Warmup)
	cpu0 := watch.cpu()
	r.measure.Store(true)
	t0 := time.Now()
	time.Sleep(o.Duration)
	r.measure.Store(false)
	win := time.Since(t0).Seconds()
	cpu1 := watch.cpu()
	cancel()
	wg.Wait()
	werr := watch.close()
	rep.Requests, rep.Bytes, rep.WindowSec = r.reqs.Load(), r.bytes.Load(), win
	rep.PerSecond = float64(rep.Requests) / win
	rep.Latency = r.hist.summary()
	rep.Machine.LoadAvgEnd = loadAvg()
	if len(r.failed) > 0 {
		rep.Failed = r.failed
	}
	if o.PID > 0 {
		s := &serverInfo{PID: o.PID, RSSPeak: watch.peakRSS(), RSSFinal: watch.sample(), CPUWindow: cpu1 - cpu0}
		s.CPUShare = 100 * s.CPUWindow / win
		s.CPUPerDelivery = perUnit(s.CPUWindow, rep.Requests)
		if werr != nil {
			s.Error = werr.Error()
		}
		rep.Server = s
	}
	return rep, nil
}

// loop is one client: requests back to back until ctx ends.
func (r *restRun) loop(ctx context.Context, i int) {
	h := r.hist.shard(i)
	for n := i; ctx.Err() == nil; n++ {
		path := r.o.Paths[n%len(r.o.Paths)]
		start := time.Now()
		size, err := r.do(ctx, http.MethodGet, path, nil)
		if ctx.Err() != nil {
			return
		}
		if !r.measure.Load() {
			continue
		}
		if err != nil {
			r.fail(err.Error())
			continue
		}
		h.add(int64(time.Since(start)))
		r.reqs.Add(1)
		r.bytes.Add(size)
	}
}

// do sends one request and reads the whole answer; a status other than
// 2xx is an error naming it.
func (r *restRun) do(ctx context.Context, method, path string, body []byte) (int64, error) {
	req, err := http.NewRequestWithContext(ctx, method, r.o.URL+path, bytes.NewReader(body))
	if err != nil {
		return 0, err
	}
	req.Header.Set("Authorization", "Bearer "+r.o.Token)
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	resp, err := r.client.Do(req)
	if err != nil {
		return 0, errors.New(classify(err))
	}
	defer resp.Body.Close()
	n, err := io.Copy(io.Discard, io.LimitReader(resp.Body, r.o.BodyLimit))
	if err != nil {
		return n, errors.New(classify(err))
	}
	if resp.StatusCode/100 != 2 {
		return n, fmt.Errorf("HTTP %d", resp.StatusCode)
	}
	return n, nil
}

func (r *restRun) fail(what string) {
	r.mu.Lock()
	r.failed[what]++
	r.mu.Unlock()
}

// seed posts o.Seed geo objects within about 1.6 km of the default query
// point (a grid of 200 rows, 11 m apart), each valid for a day.
func (r *restRun) seed() error {
	for i := range r.o.Seed {
		b, _ := json.Marshal(map[string]any{"geoObject": "Ground", "attitude": "friendly", "how": "nonCoT",
			"name": fmt.Sprintf("load-%d", i), "timeout": 86400,
			"latitude": 59.3 + float64(i%200-100)*0.0001, "longitude": 18.06 + float64(i/200%200-100)*0.0002})
		if _, err := r.do(context.Background(), http.MethodPost, "/ManageGeoObject/postGeoObject", b); err != nil {
			return fmt.Errorf("--seed: geo object %d: %w", i, err)
		}
	}
	return nil
}

func (rep *restReport) print(w io.Writer) {
	p := func(f string, a ...any) { fmt.Fprintf(w, f+"\n", a...) }
	p("requests: %d in %.1f s (%.0f/s), %s received", rep.Requests, rep.WindowSec, rep.PerSecond, mib(rep.Bytes))
	l := rep.Latency
	p("latency: p50 %.2f ms, p90 %.2f ms, p99 %.2f ms, max %.2f ms", l.P50, l.P90, l.P99, l.Max)
	if len(rep.Failed) > 0 {
		p("failed:%s", fmtReasons(rep.Failed))
	}
	if s := rep.Server; s != nil {
		p("server: CPU %.2f s in the window (%.0f %% of a core), %.0f µs per request; RSS peak %s, final %s",
			s.CPUWindow, s.CPUShare, s.CPUPerDelivery, mib(s.RSSPeak), mib(s.RSSFinal))
	}
	p("load average: %s → %s", fmtLoad(rep.Machine.LoadAvgStart), fmtLoad(rep.Machine.LoadAvgEnd))
}
