package netx

import (
	"crypto/tls"
	"crypto/x509"
	"errors"
	"io"
	"log/slog"
	"net"
	"outpost/internal/testkit"
	"strings"
	"sync"
	"testing"
	"time"
)

func listen(t *testing.T, cfg Config) *Listener {
	t.Helper()
	cfg.Addr = "127.0.0.1:0"
	if cfg.Name == "" {
		cfg.Name = "test"
	}
	l, err := Listen(cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { l.Close() })
	return l
}

// acceptAll accepts in the background and keeps what it got.
func acceptAll(l *Listener) (got func() []net.Conn) {
	var mu sync.Mutex
	var conns []net.Conn
	go func() {
		for {
			c, err := l.Accept()
			if err != nil {
				return
			}
			mu.Lock()
			conns = append(conns, c)
			mu.Unlock()
		}
	}()
	return func() []net.Conn {
		mu.Lock()
		defer mu.Unlock()
		return append([]net.Conn(nil), conns...)
	}
}

// closedByServer reports whether the server closed c (read returns EOF or
// a reset) within the timeout.
func closedByServer(c net.Conn, within time.Duration) bool {
	c.SetReadDeadline(time.Now().Add(within))
	_, err := c.Read(make([]byte, 1))
	var ne net.Error
	return err != nil && !(errors.As(err, &ne) && ne.Timeout())
}

func TestPerSourceAndTotalLimits(t *testing.T) {
	shared := NewLimits(3, 0)
	own := NewLimits(0, 5)
	l := listen(t, Config{Conns: []*Limits{shared, own}})
	got := acceptAll(l)
	var clients []net.Conn
	for range 3 {
		c, err := net.Dial("tcp", l.Addr().String())
		if err != nil {
			t.Fatal(err)
		}
		clients = append(clients, c)
	}
	testkit.WaitFor(t, "3 accepted", func() bool { return len(got()) == 3 })
	extra, _ := net.Dial("tcp", l.Addr().String())
	if !closedByServer(extra, 5*time.Second) {
		t.Fatal("a 4th connection from one source was kept")
	}
	if st := l.Stats(); st.Refused[CausePerSource] != 1 || shared.InUse() != 3 || own.InUse() != 3 {
		t.Fatalf("stats %+v shared %d own %d", st, shared.InUse(), own.InUse())
	}
	// Closing a connection gives its slot back in every limit.
	got()[0].Close()
	testkit.WaitFor(t, "the slot to come back", func() bool { return shared.InUse() == 2 && own.InUse() == 2 })
	again, _ := net.Dial("tcp", l.Addr().String())
	defer again.Close()
	testkit.WaitFor(t, "a new connection to be accepted", func() bool { return len(got()) == 4 })
	for _, c := range clients {
		c.Close()
	}
}

func TestTotalLimit(t *testing.T) {
	l := listen(t, Config{Conns: []*Limits{NewLimits(0, 2)}})
	got := acceptAll(l)
	a, _ := net.Dial("tcp", l.Addr().String())
	b, _ := net.Dial("tcp", l.Addr().String())
	defer a.Close()
	defer b.Close()
	testkit.WaitFor(t, "2 accepted", func() bool { return len(got()) == 2 })
	c, _ := net.Dial("tcp", l.Addr().String())
	if !closedByServer(c, 5*time.Second) || l.Stats().Refused[CauseTotal] != 1 {
		t.Fatalf("third connection kept: %+v", l.Stats())
	}
}

// A client that connects and never sends a ClientHello is cut at the
// timeout, while another client completes its handshake meanwhile.
func TestSilentHandshakeDoesNotBlock(t *testing.T) {
	p := newTestPKI(t)
	l := listen(t, Config{TLS: p.serverConfig(), HandshakeTimeout: 2 * time.Second})
	silent, err := net.Dial("tcp", l.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	defer silent.Close()
	got := acceptAll(l)
	cert := p.issue(t, "eve", x509.ExtKeyUsageClientAuth)
	client, err := tls.Dial("tcp", l.Addr().String(), p.clientConfig(&cert))
	if err != nil {
		t.Fatalf("good client: %v", err)
	}
	defer client.Close()
	testkit.WaitFor(t, "the good connection to be accepted", func() bool { return len(got()) == 1 })
	tc, ok := got()[0].(*tls.Conn)
	if !ok {
		t.Fatalf("Accept returned %T", got()[0])
	}
	if cs := tc.ConnectionState(); len(cs.PeerCertificates) == 0 || cs.PeerCertificates[0].Subject.CommonName != "eve" {
		t.Fatal("no verified client certificate")
	}
	// The deadline was cleared: the accepted connection carries data.
	client.Write([]byte("ping"))
	buf := make([]byte, 4)
	tc.SetReadDeadline(time.Now().Add(10 * time.Second))
	if _, err := io.ReadFull(tc, buf); err != nil || string(buf) != "ping" {
		t.Fatalf("read %q, %v", buf, err)
	}
	if !closedByServer(silent, 15*time.Second) {
		t.Fatal("the silent client was never cut")
	}
	testkit.WaitFor(t, "the timeout to be counted", func() bool { return l.Stats().HandshakeFailures["timeout"] == 1 })
}

// TestHandshakeCaps: one source cannot hold more handshakes in flight than
// its share; a client from the same source is refused while another
// source's handshakes proceed (here: the cap frees up as soon as the
// silent ones are cut).
func TestHandshakeCaps(t *testing.T) {
	p := newTestPKI(t)
	hs := NewLimits(2, 100)
	l := listen(t, Config{TLS: p.serverConfig(), HandshakeTimeout: 3 * time.Second, Handshakes: hs})
	got := acceptAll(l)
	var silent []net.Conn
	for range 2 {
		c, _ := net.Dial("tcp", l.Addr().String())
		defer c.Close()
		silent = append(silent, c)
	}
	testkit.WaitFor(t, "2 handshakes in flight", func() bool { return hs.InUse() == 2 })
	third, _ := net.Dial("tcp", l.Addr().String())
	if !closedByServer(third, 5*time.Second) {
		t.Fatal("third concurrent handshake from one source kept")
	}
	if l.Stats().Refused["handshakes_"+CausePerSource] != 1 {
		t.Fatalf("stats %+v", l.Stats())
	}
	for _, c := range silent {
		c.Close()
	}
	testkit.WaitFor(t, "handshake slots back", func() bool { return hs.InUse() == 0 })
	cert := p.issue(t, "ok", x509.ExtKeyUsageClientAuth)
	c, err := tls.Dial("tcp", l.Addr().String(), p.clientConfig(&cert))
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	testkit.WaitFor(t, "accepted", func() bool { return len(got()) == 1 })
	if hs.InUse() != 0 {
		t.Fatalf("a completed handshake still holds its slot: %d", hs.InUse())
	}
}

func TestHandshakeFailureCauses(t *testing.T) {
	p, other := newTestPKI(t), newTestPKI(t)
	l := listen(t, Config{TLS: p.serverConfig(), Classify: func(err error) string {
		if strings.Contains(err.Error(), "marker") {
			return "custom"
		}
		return ""
	}})
	acceptAll(l)
	plain, _ := net.Dial("tcp", l.Addr().String())
	plain.Write([]byte("<?xml version='1.0'?><event/>\n"))
	closedByServer(plain, 10*time.Second)
	plain.Close()
	foreign := other.issue(t, "x", x509.ExtKeyUsageClientAuth)
	if c, err := tls.Dial("tcp", l.Addr().String(), p.clientConfig(&foreign)); err == nil {
		c.Read(make([]byte, 1)) // TLS 1.3 reports the refusal here
		c.Close()
	}
	testkit.WaitFor(t, "both failures counted", func() bool {
		f := l.Stats().HandshakeFailures
		return f["not_tls"] == 1 && f["certificate"] == 1
	})
	if l.Stats().Accepted != 0 {
		t.Fatal("a refused connection was accepted")
	}
}

func TestCloseEndsEverything(t *testing.T) {
	p := newTestPKI(t)
	hs := NewLimits(0, 0)
	conns := NewLimits(0, 0)
	l, err := Listen(Config{Name: "t", Addr: "127.0.0.1:0", TLS: p.serverConfig(), HandshakeTimeout: 30 * time.Second,
		Handshakes: hs, Conns: []*Limits{conns}, Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		t.Fatal(err)
	}
	pending, _ := net.Dial("tcp", l.Addr().String())
	defer pending.Close()
	testkit.WaitFor(t, "the pending handshake", func() bool { return l.Stats().Handshaking == 1 })
	acceptErr := make(chan error, 1)
	go func() { _, err := l.Accept(); acceptErr <- err }()
	if err := l.Close(); err != nil {
		t.Fatal(err)
	}
	if err := <-acceptErr; !errors.Is(err, net.ErrClosed) {
		t.Fatalf("Accept after Close: %v", err)
	}
	if !closedByServer(pending, 10*time.Second) {
		t.Fatal("pending handshake not closed")
	}
	if hs.InUse() != 0 || conns.InUse() != 0 {
		t.Fatalf("slots leaked: handshakes %d conns %d", hs.InUse(), conns.InUse())
	}
	if _, err := net.DialTimeout("tcp", l.Addr().String(), 2*time.Second); err == nil {
		t.Error("the port still accepts connections")
	}
	if err := l.Close(); err != nil {
		t.Errorf("second Close: %v", err)
	}
}
