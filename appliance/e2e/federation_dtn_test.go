package e2e

import (
	"context"
	"io"
	"math"
	"net"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"outpost/appliance/apptest"
	"outpost/appliance/config"
	"outpost/appliance/cot"
	"outpost/appliance/federation"
	"outpost/appliance/takclient"
)

// cutProxy forwards TCP connections to a target until cut: then it closes
// every connection and refuses new ones until restored (a link that
// drops, on real sockets).
type cutProxy struct {
	ln     net.Listener
	target string
	mu     sync.Mutex
	down   bool
	conns  map[net.Conn]bool
}

func newCutProxy(t *testing.T, target string) *cutProxy {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	p := &cutProxy{ln: ln, target: target, conns: map[net.Conn]bool{}}
	t.Cleanup(func() { ln.Close(); p.cut() })
	go p.serve()
	return p
}

func (p *cutProxy) addr() string { return p.ln.Addr().String() }

func (p *cutProxy) serve() {
	for {
		c, err := p.ln.Accept()
		if err != nil {
			return
		}
		p.mu.Lock()
		if p.down {
			p.mu.Unlock()
			c.Close()
			continue
		}
		up, err := net.DialTimeout("tcp", p.target, 5*time.Second)
		if err != nil {
			p.mu.Unlock()
			c.Close()
			continue
		}
		p.conns[c], p.conns[up] = true, true
		p.mu.Unlock()
		go pipe(c, up)
		go pipe(up, c)
	}
}

func pipe(dst, src net.Conn) {
	_, _ = io.Copy(dst, src)
	dst.Close()
	src.Close()
}

// cut closes every connection and refuses new ones.
func (p *cutProxy) cut() {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.down = true
	for c := range p.conns {
		c.Close()
	}
	clear(p.conns)
}

func (p *cutProxy) restore() {
	p.mu.Lock()
	p.down = false
	p.mu.Unlock()
}

// TestFederationDisruption: A's link to B is cut for some seconds while a
// client on A keeps sending positions of three uids. A queues what it
// cannot send (in its database) and sends it when the link returns: B's
// client gets every position, none twice, in order per uid.
func TestFederationDisruption(t *testing.T) {
	ca := newFedCA(t, "Federation CA")
	b := startFederated(t, ca, "bravo-server", "")
	proxy := newCutProxy(t, fedListener(t, b))
	a := startFederated(t, ca, "alpha-server", "", "B="+proxy.addr())
	cliB := b.DialTCP(t)
	cliA := a.DialTCP(t)
	waitFed(t, a, "B", func(s federation.FederateStats) bool { return s.Connected })

	const uids = 3
	var sent int
	stop := make(chan struct{})
	done := make(chan error, 1)
	go func() { // 20 positions a second until stopped
		for i := 0; ; i++ {
			select {
			case <-stop:
				sent = i
				done <- nil
				return
			case <-time.After(50 * time.Millisecond):
			}
			if err := cliA.Send(takclient.SA("DTN-"+strconv.Itoa(i%uids), "DTN", float64(i)/100, 1)); err != nil {
				done <- err
				return
			}
		}
	}()
	time.Sleep(time.Second)
	proxy.cut()
	waitFed(t, a, "B", func(s federation.FederateStats) bool { return !s.Connected })
	time.Sleep(5 * time.Second) // the link stays down while A's client sends
	proxy.restore()
	waitFed(t, a, "B", func(s federation.FederateStats) bool { return s.Connected && s.Links >= 2 })
	time.Sleep(time.Second)
	close(stop)
	if err := <-done; err != nil {
		t.Fatal(err)
	}

	got := map[int]int{}     // sequence number → times received
	last := map[string]int{} // uid → last sequence number received
	deadline := time.Now().Add(fedWait)
	for len(got) < sent && time.Now().Before(deadline) {
		ev, err := cliB.Next(time.Until(deadline))
		if err != nil {
			break
		}
		if !isDTN(ev) {
			continue
		}
		n := int(math.Round(ev.Point.Lat * 100))
		got[n]++
		if p, ok := last[ev.UID]; ok && n <= p {
			t.Errorf("%s: position %d after %d", ev.UID, n, p)
		}
		last[ev.UID] = n
	}
	extra := quietCount(cliB, isDTN)
	missing := 0
	for i := 0; i < sent; i++ {
		if got[i] == 0 {
			missing++
		}
		if got[i] > 1 {
			t.Errorf("position %d received %d times", i, got[i])
		}
	}
	s := fedStats(a, "B")
	t.Logf("sent %d, received %d distinct, %d more after; A's counters of B: queued %d, sent from the queue %d, dropped from it %d, links %d",
		sent, len(got), extra, s.Queued, s.QueueSent, s.DroppedQueued, s.Links)
	if missing > 0 || extra > 0 || s.Queued == 0 || s.QueueSent == 0 || s.DroppedQueued != 0 {
		t.Fatalf("%d of %d positions missing, %d extra", missing, sent, extra)
	}
}

func isDTN(ev *cot.Event) bool { return len(ev.UID) > 4 && ev.UID[:4] == "DTN-" }

// TestFederationQueueRestart: what A queued for B while the link was down
// survives A's restart and reaches B's client, each once, when the link
// comes up.
func TestFederationQueueRestart(t *testing.T) {
	ca := newFedCA(t, "Federation CA")
	b := startFederated(t, ca, "bravo-server", "")
	proxy := newCutProxy(t, fedListener(t, b))
	proxy.cut()
	dataDir := t.TempDir()
	start := func() *apptest.App {
		certFile, keyFile, _ := ca.issue(t, "alpha-server")
		return apptest.Start(t, func(c *config.Config) {
			c.DataDir = dataDir
			c.FederationPort, c.FederationTrust = 0, ca.trust()
			c.FederationCert, c.FederationKey = certFile, keyFile
			c.FederationName = "alpha-server"
			c.Federates = []string{"B=" + proxy.addr()}
		})
	}
	a := start()
	cliA := a.DialTCP(t)
	const n = 10
	for i := range n {
		if err := cliA.Send(takclient.SA("RST-"+strconv.Itoa(i), "RST", float64(i), 1)); err != nil {
			t.Fatal(err)
		}
	}
	waitFed(t, a, "B", func(s federation.FederateStats) bool { return s.Queued >= n })
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := a.Close(ctx); err != nil {
		t.Fatal(err)
	}
	cliB := b.DialTCP(t)
	a = start()
	proxy.restore()
	got := map[string]int{}
	deadline := time.Now().Add(fedWait)
	for len(got) < n && time.Now().Before(deadline) {
		ev, err := cliB.Next(time.Until(deadline))
		if err != nil {
			break
		}
		if strings.HasPrefix(ev.UID, "RST-") {
			got[ev.UID]++
		}
	}
	extra := quietCount(cliB, func(ev *cot.Event) bool { return strings.HasPrefix(ev.UID, "RST-") })
	if len(got) != n || extra != 0 {
		t.Fatalf("after A's restart B's client got %v and %d more; want each of %d once", got, extra, n)
	}
	if s := fedStats(a, "B"); s.QueueSent < n {
		t.Fatalf("A's counters after the restart: %+v", s)
	}
}
