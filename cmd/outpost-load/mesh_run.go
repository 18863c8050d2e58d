package main

import (
	"context"
	"fmt"
	"io"
	"math/rand/v2"
	"net"
	"net/netip"
	"runtime"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"golang.org/x/net/ipv4"

	"outpost/appliance/cot"
)

// meshRun is one run of the mesh subcommand: the receivers, the devices
// and what they counted.
type meshRun struct {
	o        *meshOptions
	progress io.Writer
	ctx      context.Context
	cancel   context.CancelFunc
	closing  atomic.Bool
	hist     hists

	receivers []*meshReceiver
	devices   []*meshDevice
	connectWG sync.WaitGroup // until each receiver is ready or failed
	readWG    sync.WaitGroup // receiver goroutines
	sendWG    sync.WaitGroup // device goroutines

	sentTotal    atomic.Int64 // datagrams the devices sent, whole run
	disconnected atomic.Int64 // receivers the server closed during the run
	dialErrors   atomic.Int64 // failed connection attempts, retried
}

// A meshDevice is one UDP socket bound to its own address, sending SAs to
// the group.
type meshDevice struct {
	idx  int
	addr netip.Addr
	conn *net.UDPConn

	// The sender's own; read after it exited.
	sent, measured, errs int64
	err                  error // the first send error
}

// meshUID is device i's uid (receivers use uidOf).
func meshUID(i int) string { return "MESH-" + strconv.Itoa(i) }

func runMeshLoad(o *meshOptions, progress io.Writer) (*meshReport, error) {
	fdLimit, err := raiseFileLimit(o.Clients + o.Devices + fdMargin)
	if err != nil {
		return nil, err
	}
	m := &meshRun{o: o, progress: progress, hist: newHists(8)}
	m.ctx, m.cancel = context.WithCancel(context.Background())
	defer m.teardown()
	if err := m.openDevices(); err != nil {
		return nil, err
	}
	rep := &meshReport{Kind: meshReportKind, Config: meshConfigOf(o),
		Machine: machineInfo{CPUs: runtime.NumCPU(), LoadAvgStart: loadAvg(), FDLimit: fdLimit}}
	watch := watchServer(o.PID, 200*time.Millisecond)
	closeWatch := sync.OnceValue(watch.close) // serverWatch.close runs once
	defer closeWatch()
	rssStart := watch.sample()

	// The receivers first, so that every one of them is in the broker
	// before the first device speaks.
	t0 := time.Now()
	m.receivers = make([]*meshReceiver, o.Clients)
	for i := range m.receivers {
		r := &meshReceiver{m: m, idx: i, hist: m.hist.shard(i), pairs: make([]seqWindow, o.Devices)}
		m.receivers[i] = r
		m.connectWG.Add(1)
		m.readWG.Add(1)
		go r.run()
	}
	m.connectWG.Wait()
	if failed := m.failedReceivers(); len(failed) > 0 {
		return nil, fmt.Errorf("%d of %d receivers did not connect to %s:%s", m.countFailed(), o.Clients, o.Addr, fmtReasons(failed))
	}
	rep.Receivers.ConnectSec = time.Since(t0).Seconds()
	m.logf("%d receivers connected in %.2f s; %d devices sending %g SA/s each to %s (%s)",
		o.Clients, rep.Receivers.ConnectSec, o.Devices, o.Rate, o.group, o.Format)
	if o.PingEvery > 0 {
		go m.pinger()
	}

	// The devices: warm-up, then the window.
	start := time.Now()
	winStart := start.Add(o.Warmup)
	winEnd := winStart.Add(o.Duration)
	stop := make(chan struct{})
	for _, d := range m.devices {
		m.sendWG.Add(1)
		go m.send(d, start, winStart, winEnd, stop)
	}
	m.progressUntil(winStart, "warm-up")
	win := startWindow(watch)
	m.progressUntil(winEnd, "window")
	win.end()
	close(stop)
	m.sendWG.Wait()

	// Drain: until every expected delivery arrived, or --drain.
	var measured int64
	for _, d := range m.devices {
		measured += d.measured
	}
	expected := measured * int64(o.Clients)
	drainFrom := time.Now()
	for m.received() < expected && time.Since(drainFrom) < o.Drain {
		time.Sleep(20 * time.Millisecond)
	}
	rep.DrainSec = time.Since(drainFrom).Seconds()
	rep.Machine.LoadAvgEnd = loadAvg()
	rep.Machine.StealPercent = win.steal
	rssFinal := watch.sample()
	m.teardown()
	watchErr := closeWatch()

	m.fill(rep, win)
	if o.PID > 0 {
		s := &meshServerInfo{PID: o.PID, RSSStart: rssStart, RSSPeak: watch.peakRSS(), RSSFinal: rssFinal, CPUWindow: win.srvCPU,
			CPUShare:    100 * win.srvCPU / max(win.sec, 1e-9),
			CPUPerEvent: perUnit(win.srvCPU, rep.Datagrams.InWindow), CPUPerDelivery: perUnit(win.srvCPU, rep.Deliveries.Received)}
		if watchErr != nil {
			s.Error = watchErr.Error()
		}
		rep.Server = s
	}
	return rep, nil
}

// openDevices binds every device's socket.
func (m *meshRun) openDevices() error {
	o := m.o
	m.devices = make([]*meshDevice, o.Devices)
	for i := range m.devices {
		d := &meshDevice{idx: i, addr: o.devAddr[i]}
		m.devices[i] = d
		c, err := net.ListenUDP("udp4", net.UDPAddrFromAddrPort(netip.AddrPortFrom(d.addr, 0)))
		if err != nil {
			return fmt.Errorf("device %d: %w (device addresses must be this machine's: 127.x.y.z on loopback)", i, err)
		}
		d.conn = c
		p := ipv4.NewPacketConn(c)
		if o.ifi != nil {
			if err := p.SetMulticastInterface(o.ifi); err != nil {
				return fmt.Errorf("device %d: --interface %s: %w", i, o.ifi.Name, err)
			}
		}
		// The server on this machine hears the group only with loopback
		// on (the default; set in case the system's is not).
		if err := p.SetMulticastLoopback(true); err != nil {
			return fmt.Errorf("device %d: multicast loopback: %w", i, err)
		}
	}
	return nil
}

func (m *meshRun) logf(format string, a ...any) {
	if !m.o.Quiet {
		fmt.Fprintf(m.progress, "outpost-load mesh: "+format+"\n", a...)
	}
}

// progressUntil sleeps until t, printing what was sent and received every
// 10 s.
func (m *meshRun) progressUntil(t time.Time, phase string) {
	for {
		d := time.Until(t)
		if d <= 0 {
			return
		}
		time.Sleep(min(d, 10*time.Second))
		if time.Until(t) > time.Second {
			m.logf("%s: %d datagrams sent, %d measured deliveries received, %d receivers closed by the server",
				phase, m.sentTotal.Load(), m.received(), m.disconnected.Load())
		}
	}
}

// received counts the measured deliveries so far.
func (m *meshRun) received() (n int64) {
	for _, r := range m.receivers {
		n += r.recv.Load()
	}
	return n
}

func (m *meshRun) failedReceivers() map[string]int {
	out := map[string]int{}
	for _, r := range m.receivers {
		if !r.ready.Load() {
			out[classify(r.err)]++
		}
	}
	return out
}

func (m *meshRun) countFailed() (n int) {
	for _, r := range m.receivers {
		if !r.ready.Load() {
			n++
		}
	}
	return n
}

// teardown closes every socket and waits for every goroutine (once).
func (m *meshRun) teardown() {
	if m.closing.Swap(true) {
		return
	}
	m.cancel()
	for _, r := range m.receivers {
		if p := r.nc.Load(); p != nil {
			(*p).Close()
		}
	}
	m.readWG.Wait()
	for _, d := range m.devices {
		if d != nil && d.conn != nil {
			d.conn.Close()
		}
	}
	m.sendWG.Wait()
}

// pinger sends ATAK's keepalive from every receiver that wrote nothing for
// --ping-interval (the server closes a silent TCP client after
// cotIdleTimeout, 60 s by default).
func (m *meshRun) pinger() {
	t := time.NewTicker(time.Second)
	defer t.Stop()
	for {
		select {
		case <-m.ctx.Done():
			return
		case <-t.C:
		}
		limit := time.Now().Add(-m.o.PingEvery).UnixNano()
		for _, r := range m.receivers {
			if m.closing.Load() {
				return
			}
			if r.lastWrite.Load() > limit {
				continue
			}
			r.write(func(dst []byte) ([]byte, error) { return appendPing(dst, false, r.idx) })
		}
	}
}

// send is one device: an SA every 1/--rate s from a random phase, those
// sent in [winStart, winEnd) marked as measured, until winEnd.
func (m *meshRun) send(d *meshDevice, start, winStart, winEnd time.Time, stop <-chan struct{}) {
	defer m.sendWG.Done()
	interval := time.Duration(float64(time.Second) / m.o.Rate)
	phase := time.NewTimer(time.Until(start.Add(rand.N(interval))))
	select {
	case <-phase.C:
	case <-stop:
		phase.Stop()
		return
	}
	t := time.NewTicker(interval)
	defer t.Stop()
	v1 := m.o.Format == "v1"
	var buf, detail []byte
	for seq := uint32(1); ; seq++ {
		now := time.Now()
		if !now.Before(winEnd) {
			return
		}
		measured := !now.Before(winStart)
		var err error
		buf, detail, err = appendMeshSA(buf[:0], detail[:0], v1, d.idx, d.addr, seq, now, measured)
		if err == nil {
			_, err = d.conn.WriteToUDPAddrPort(buf, m.o.group)
		}
		if err != nil {
			if d.err == nil {
				d.err = err
			}
			d.errs++
		} else {
			d.sent++
			m.sentTotal.Add(1)
			if measured {
				d.measured++
			}
		}
		select {
		case <-stop:
			return
		case <-t.C:
		}
	}
}

// appendMeshSA appends device idx's SA number seq, sent at now, as one
// datagram: the XML event, or 0xBF 0x01 0xBF and the TakMessage (v1).
// detail is scratch space, returned for reuse.
func appendMeshSA(dst, detail []byte, v1 bool, idx int, addr netip.Addr, seq uint32, now time.Time, measured bool) ([]byte, []byte, error) {
	d := append(detail, `<takv device="outpost-load" platform="outpost-load mesh" os="linux" version="1"/><contact callsign="M`...)
	d = strconv.AppendInt(d, int64(idx), 10)
	d = append(d, `" endpoint="`...)
	d = addr.AppendTo(d)
	d = append(d, `:4242:tcp"/><__group name="Cyan" role="Team Member"/><status battery="77"/><track speed="0.0" course="90.0"/>`...)
	d = appendRemarks(d, idx, seq, now.UnixNano(), measured, 0)
	utc := now.UTC()
	ev := cot.Event{
		Version: "2.0", UID: meshUID(idx), Type: "a-f-G-U-C", How: "m-g",
		Time: utc, Start: utc, Stale: utc.Add(6 * time.Minute),
		Point:  cot.Point{Lat: 60 + float64(idx%1000)*1e-4, Lon: 18 + float64(idx/1000)*1e-4, Hae: 25, Ce: 9.9, Le: cot.Unknown},
		Detail: cot.Detail{XML: d},
	}
	if !v1 {
		return ev.AppendXML(dst), d, nil
	}
	msg, err := ev.MarshalProto()
	if err != nil {
		return dst, d, err
	}
	return cot.AppendMeshFrame(dst, msg), d, nil
}

// appendReceiverSA appends receiver idx's one SA: no load remarks, so no
// receiver counts it as a device's.
func appendReceiverSA(dst []byte, idx int) []byte {
	d := make([]byte, 0, 256)
	d = append(d, `<takv device="outpost-load" platform="outpost-load" os="linux" version="1"/><contact callsign="R`...)
	d = strconv.AppendInt(d, int64(idx), 10)
	d = append(d, `" endpoint="*:-1:stcp"/><__group name="Cyan" role="Team Member"/><status battery="88"/><track speed="0.0" course="0.0"/>`...)
	now := time.Now().UTC()
	ev := cot.Event{
		Version: "2.0", UID: uidOf(idx), Type: "a-f-G-U-C", How: "m-g",
		Time: now, Start: now, Stale: now.Add(6 * time.Minute),
		Point:  cot.Point{Lat: 59 + float64(idx%1000)*1e-4, Lon: 18 + float64(idx/1000)*1e-4, Hae: 25, Ce: 9.9, Le: cot.Unknown},
		Detail: cot.Detail{XML: d},
	}
	return ev.AppendXML(dst)
}
