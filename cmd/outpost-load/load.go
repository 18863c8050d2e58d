package main

import (
	"fmt"
	"io"
	"maps"
	"runtime"
	"slices"
	"sync"
	"time"
)

// run executes one load run and returns its report. Phases: connect the
// clients (over --ramp; each sends its SA once connected), wait until every
// client holds every other client's SA (the replay), then either stay
// connected for --duration (--idle) or send SAs for --warmup plus
// --duration and let what is in flight arrive (--drain).
func run(o *options, progress io.Writer) (*report, error) {
	fdLimit, err := raiseFileLimit(o.Clients + fdMargin)
	if err != nil {
		return nil, err
	}
	r := newRunner(o, progress)
	if o.TLS {
		if r.tls, err = tlsConfigs(o); err != nil {
			return nil, err
		}
		if per := (o.Clients + len(r.tls) - 1) / len(r.tls); per > 64 && !o.Quiet {
			r.logf("warning: %d clients per certificate; the server accepts at most 64 uids per certificate", per)
		}
	}
	rep := &report{Config: configOf(o), Machine: machineInfo{CPUs: runtime.NumCPU(), LoadAvgStart: loadAvg(), FDLimit: fdLimit}}
	watch := watchServer(o.PID, 200*time.Millisecond)
	rssIdle := watch.sample()
	srvCPU0, toolCPU0 := watch.cpu(), selfCPU()
	goroutines := newPeak()

	r.t0 = time.Now()
	defer r.teardown()
	for i, c := range r.clients {
		r.wg.Add(1)
		var at time.Duration
		if o.Clients > 1 {
			at = time.Duration(int64(o.Ramp) * int64(i) / int64(o.Clients))
		}
		go c.run(at)
	}
	if o.Ping {
		go r.pinger()
	}
	r.waitConnected(goroutines)
	pending, ready, _, _ := r.states()
	if ready == 0 {
		watch.close()
		r.mu.Lock()
		why := fmtReasons(r.dialFailures)
		r.mu.Unlock()
		return nil, fmt.Errorf("%w (%d still connecting):%s", errNoClient, pending, why)
	}
	replaySec := r.waitReplayed(goroutines)
	rssConnected := watch.sample()
	srvCPU1, toolCPU1 := watch.cpu(), selfCPU()
	rep.Clients.ReplaySAs = r.arrived()

	var win *window
	if o.Idle {
		r.throttling.Store(true)
		win = startWindow(watch)
		r.sleepFor(o.Duration)
		win.end()
		rep.Idle = &idleInfo{Senders: len(r.senders), WindowSec: win.sec, Pings: r.pings.Load()}
	} else {
		rep.Load = &loadInfo{Senders: len(r.senders)}
		win = r.sendLoad(watch, rep.Load, goroutines)
	}
	rep.Machine.StealPercent = win.steal
	var delivered int64 // in the window, for the CPU per delivery
	if rep.Load != nil {
		delivered = rep.Load.Arrived
	}
	goroutines.sample()
	rssFinal := watch.sample()
	rep.Machine.LoadAvgEnd = loadAvg()
	r.teardown()
	watchErr := watch.close()

	r.fillClients(rep, replaySec)
	if l := rep.Load; l != nil {
		r.fillLoad(l, win.sec)
	}
	if o.PID > 0 {
		s := &serverInfo{PID: o.PID, RSSIdle: rssIdle, RSSConnected: rssConnected, RSSPeak: watch.peakRSS(), RSSFinal: rssFinal,
			CPUConnect: srvCPU1 - srvCPU0, CPUConnectPerSA: perUnit(srvCPU1-srvCPU0, rep.Clients.ReplaySAs), CPUWindow: win.srvCPU, CPUShare: 100 * win.srvCPU / max(win.sec, 1e-9),
			CPUPerDelivery: perUnit(win.srvCPU, delivered)}
		if n := rep.Clients.Connected; n > 0 {
			s.RSSPerClient = float64(rssConnected-rssIdle) / float64(n)
		}
		if watchErr != nil {
			s.Error = watchErr.Error()
		}
		rep.Server = s
	}
	t := &rep.Tool
	t.CPUConnect = (toolCPU1 - toolCPU0).Seconds()
	t.CPUWindow, t.CPUShare = win.toolCPU, 100*win.toolCPU/max(win.sec, 1e-9)
	t.CPUPerDelivery = perUnit(win.toolCPU, delivered)
	t.MaxRSS = selfMaxRSS()
	t.Goroutines = goroutines.max()
	if rep.Idle != nil {
		rep.Idle.Pongs = t.Pongs
	}
	return rep, nil
}

// waitConnected waits until no client is still connecting.
func (r *runner) waitConnected(g *peak) {
	last := time.Now()
	for {
		pending, ready, failed, gone := r.states()
		g.sample()
		if pending == 0 {
			r.logf("%d connected, %d failed, %d disconnected after %.1f s", ready, failed, gone, r.since().Seconds())
			return
		}
		if time.Since(last) >= 5*time.Second {
			last = time.Now()
			r.logf("connecting: %d connected, %d connecting, %d failed (%.0f s)", ready, pending, failed, r.since().Seconds())
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// waitReplayed waits until every ready client holds every other ready
// client's SA, or --settle. It returns the time until then (since the
// run's start), or -1 when the wait timed out.
func (r *runner) waitReplayed(g *peak) float64 {
	deadline := time.Now().Add(r.o.Settle)
	last := time.Now()
	for {
		complete, ready := r.replayed()
		g.sample()
		if complete == ready {
			var at time.Duration
			for _, c := range r.clients {
				if c.state.Load() == stReady {
					at = max(at, time.Duration(c.lastNewPeer.Load()), c.readyAt)
				}
			}
			r.logf("every client holds every other client's SA after %.2f s", at.Seconds())
			return at.Seconds()
		}
		if time.Now().After(deadline) {
			r.logf("replay incomplete after --settle %v: %d of %d clients hold every other client's SA", r.o.Settle, complete, ready)
			return -1
		}
		if time.Since(last) >= 5*time.Second {
			last = time.Now()
			r.logf("replay: %d of %d clients hold every other client's SA, %d SAs delivered (%.0f s)", complete, ready, r.arrived(), r.since().Seconds())
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// sendLoad runs the senders through the warm-up and the window, then
// waits for the deliveries in flight. It returns the measured window.
func (r *runner) sendLoad(watch *serverWatch, l *loadInfo, g *peak) *window {
	o := r.o
	r.throttling.Store(true)
	stop := make(chan struct{})
	begin := time.Now()
	winStart := begin.Add(o.Warmup)
	winEnd := winStart.Add(o.Duration)
	var swg sync.WaitGroup
	for slot := range r.senders {
		swg.Add(1)
		go func() {
			defer swg.Done()
			r.sender(slot, stop, winStart, winEnd)
		}()
	}
	r.logf("sending: %d senders x %g SA/s, %v warm-up, %v measured", len(r.senders), o.Rate, o.Warmup, o.Duration)
	sleepTo := func(t time.Time) {
		for time.Now().Before(t) && r.sleepFor(min(time.Until(t), time.Second)) {
			g.sample()
		}
	}
	sleepTo(winStart)
	win, arrived0 := startWindow(watch), r.arrived()
	sleepTo(winEnd)
	win.end()
	l.Arrived = r.arrived() - arrived0
	close(stop)
	swg.Wait()

	// Drain: until everything expected arrived, nothing arrived for a
	// second, or --drain.
	drainStart := time.Now()
	want := r.expectedNormal.Load() + r.expectedSlow.Load()
	var prev int64 = -1
	quietSince := time.Now()
	for time.Since(drainStart) < o.Drain {
		n, s := r.received()
		if n+s >= want {
			break
		}
		if n+s != prev {
			prev, quietSince = n+s, time.Now()
		} else if time.Since(quietSince) >= time.Second {
			break
		}
		time.Sleep(50 * time.Millisecond)
	}
	l.DrainSec = time.Since(drainStart).Seconds()
	return win
}

// fillClients totals the clients' states and the replay.
func (r *runner) fillClients(rep *report, replaySec float64) {
	c := &rep.Clients
	c.Requested = len(r.clients)
	var replay []float64
	for _, cl := range r.clients {
		st := cl.state.Load()
		if cl.proto {
			c.Protobuf++
		}
		if cl.slow {
			c.Slow++
		}
		if cl.proto && cl.neg != negSwitched && st != stFailed {
			c.NegotiationKO++
		}
		switch st {
		case stFailed:
			c.Failed++
			continue
		case stGone:
			c.Disconnected++
		}
		if cl.everReady {
			c.Connected++
		}
		if st == stReady {
			c.ReadyAtEnd++
		}
		c.ConnectSec = max(c.ConnectSec, cl.readyAt.Seconds())
		t := &rep.Tool
		t.Messages += cl.msgs
		t.Bytes += cl.bytes
		t.Pongs += cl.pongs
		t.Departures += cl.departures
		t.Other += cl.other
		if st == stReady && replaySec >= 0 {
			c.ReplayComplete++
			replay = append(replay, max(time.Duration(cl.lastNewPeer.Load()), cl.readyAt).Seconds()-cl.startedAt.Seconds())
		}
	}
	if replaySec < 0 {
		c.ReplayComplete, _ = r.replayed()
	}
	c.ReplaySec = replaySec
	slices.Sort(replay)
	if len(replay) > 0 {
		c.ReplayP50Sec = replay[(len(replay)-1)/2]
		c.ReplayP99Sec = replay[(len(replay)-1)*99/100]
	}
	c.DisconnectsBy = maps.Clone(r.gone)
	c.DialErrorsBy = maps.Clone(r.dialErrors)
	c.FailedBy = maps.Clone(r.dialFailures)
	for _, n := range r.dialErrors {
		c.DialErrors += n
	}
}

// fillLoad totals the deliveries.
func (r *runner) fillLoad(l *loadInfo, winSec float64) {
	l.Sent, l.SendErrors, l.WindowSec = r.sent.Load(), r.sendErrors.Load(), winSec
	l.Normal.Expected, l.SlowConsumers.Expected = r.expectedNormal.Load(), r.expectedSlow.Load()
	for _, c := range r.clients {
		d := &l.Normal
		if c.slow {
			d = &l.SlowConsumers
		}
		if c.state.Load() != stFailed {
			d.Clients++
		}
		d.Received += c.recv.Load()
		d.Coalesced += c.coalesced
		l.Duplicates += c.dups
	}
	for _, d := range []*deliveries{&l.Normal, &l.SlowConsumers} {
		d.Percent = pct(d.Received, d.Expected)
		d.Missing = max(0, d.Expected-d.Received-d.Coalesced)
		l.Expected += d.Expected
		l.Received += d.Received
		l.Coalesced += d.Coalesced
		l.Missing += d.Missing
	}
	l.Normal.Latency, l.SlowConsumers.Latency = r.normal.summary(), r.slow.summary()
	l.Percent = pct(l.Received, l.Expected)
	if winSec > 0 {
		l.PerSecond = float64(l.Arrived) / winSec
	}
}

// peak tracks the largest goroutine count seen.
type peak struct{ n int }

func newPeak() *peak     { return &peak{n: runtime.NumGoroutine()} }
func (p *peak) sample()  { p.n = max(p.n, runtime.NumGoroutine()) }
func (p *peak) max() int { return p.n }
