package netx

import (
	"crypto/tls"
	"crypto/x509"
	"errors"
	"io"
	"net"
	"os"
	"runtime"
	"testing"
	"time"
)

// parked is what the stream listeners use of an accepted connection.
type parked interface {
	net.Conn
	ReadNonblocking() bool
	NotifyReadable(w *Waiter, ready func()) error
	StopNotify()
}

// acceptOne dials the listener and returns both ends.
func acceptOne(t *testing.T, l *Listener, dial func() (net.Conn, error)) (server net.Conn, client net.Conn) {
	t.Helper()
	got := make(chan net.Conn, 1)
	go func() {
		c, err := l.Accept()
		if err == nil {
			got <- c
		}
	}()
	client, err := dial()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { client.Close() })
	select {
	case server = <-got:
	case <-time.After(10 * time.Second):
		t.Fatal("nothing accepted")
	}
	t.Cleanup(func() { server.Close() })
	return server, client
}

// notifier arms connections on a waiter and tells when they were reported.
type notifier struct {
	w     *Waiter
	ready chan struct{}
}

func newNotifier(t *testing.T) *notifier {
	t.Helper()
	w, err := NewWaiter()
	if err != nil {
		if runtime.GOOS == "linux" {
			t.Fatal(err)
		}
		t.Skip("waiters are Linux-only")
	}
	t.Cleanup(w.Close)
	return &notifier{w: w, ready: make(chan struct{}, 1)}
}

func (n *notifier) arm(t *testing.T, p parked) {
	t.Helper()
	if err := p.NotifyReadable(n.w, func() { n.ready <- struct{}{} }); err != nil {
		t.Fatal(err)
	}
}

// reported waits up to 10 s for the report of an armed connection.
func (n *notifier) reported(t *testing.T) {
	t.Helper()
	select {
	case <-n.ready:
	case <-time.After(10 * time.Second):
		t.Fatal("the armed connection was never reported")
	}
}

// notReported checks that no report comes within 50 ms.
func (n *notifier) notReported(t *testing.T) {
	t.Helper()
	select {
	case <-n.ready:
		t.Fatal("reported with nothing to read")
	case <-time.After(50 * time.Millisecond):
	}
}

func switchNonblocking(t *testing.T, c net.Conn) parked {
	t.Helper()
	p := c.(parked)
	if !p.ReadNonblocking() {
		if runtime.GOOS == "linux" {
			t.Fatal("nonblocking reads are not available on Linux")
		}
		t.Skip("nonblocking reads are Linux-only")
	}
	return p
}

// TestNonblockingTCP: a read with nothing ready says so at once; the wait
// returns for data (also data that arrived before it began), the end of the
// stream and the deadline, and holds nothing of what it saw.
func TestNonblockingTCP(t *testing.T) {
	l := listen(t, Config{})
	server, client := acceptOne(t, l, func() (net.Conn, error) { return net.Dial("tcp", l.Addr().String()) })
	p := switchNonblocking(t, server)
	buf := make([]byte, 64)
	if n, err := p.Read(buf); n != 0 || !errors.Is(err, ErrWouldBlock) {
		t.Fatalf("idle read: %d %v, want ErrWouldBlock", n, err)
	}
	var ne net.Error
	if !errors.As(ErrWouldBlock, &ne) || !ne.Temporary() || ne.Timeout() {
		t.Fatal("ErrWouldBlock must be a temporary net.Error that is not a timeout")
	}

	n := newNotifier(t)
	// Data that arrives while armed.
	n.arm(t, p)
	n.notReported(t)
	client.Write([]byte("hello"))
	n.reported(t)
	if n, err := p.Read(buf); err != nil || string(buf[:n]) != "hello" {
		t.Fatalf("read %q %v", buf[:n], err)
	}
	if _, err := p.Read(buf); !errors.Is(err, ErrWouldBlock) {
		t.Fatalf("drained read: %v", err)
	}
	// One report per arming: more data, no report until armed again.
	client.Write([]byte("early"))
	n.notReported(t)
	// Data that arrived before the arming is reported at once.
	n.arm(t, p)
	n.reported(t)
	if n, _ := p.Read(buf); string(buf[:n]) != "early" {
		t.Fatalf("read %q", buf[:n])
	}

	// The deadline ends a read with a timeout.
	p.SetReadDeadline(time.Now().Add(-time.Second))
	if _, err := p.Read(buf); !errors.Is(err, os.ErrDeadlineExceeded) {
		t.Fatalf("read past the deadline: %v", err)
	}
	p.SetReadDeadline(time.Time{})

	// The end of the stream is reported.
	n.arm(t, p)
	client.Close()
	n.reported(t)
	if _, err := p.Read(buf); err != io.EOF {
		t.Fatalf("read at the end: %v, want io.EOF", err)
	}
	// A forgotten connection is not reported; a closed one cannot be armed.
	p.StopNotify()
	if n.w.Len() != 0 {
		t.Fatalf("%d connections still registered", n.w.Len())
	}
	p.Close()
	if err := p.NotifyReadable(n.w, func() {}); err == nil {
		t.Fatal("a closed connection was armed")
	}
}

// TestWaiterManyConnections: one waiter reports each of many connections
// once per arming, whichever order their input comes in.
func TestWaiterManyConnections(t *testing.T) {
	l := listen(t, Config{})
	w := newNotifier(t).w
	const conns = 50
	reports := make(chan int, conns*4)
	servers := make([]parked, conns)
	clients := make([]net.Conn, conns)
	for i := range conns {
		server, client := acceptOne(t, l, func() (net.Conn, error) { return net.Dial("tcp", l.Addr().String()) })
		servers[i], clients[i] = switchNonblocking(t, server), client
		if err := servers[i].NotifyReadable(w, func() { reports <- i }); err != nil {
			t.Fatal(err)
		}
	}
	for i := conns - 1; i >= 0; i-- {
		clients[i].Write([]byte("x"))
	}
	seen := map[int]bool{}
	for len(seen) < conns {
		select {
		case i := <-reports:
			if seen[i] {
				t.Fatalf("connection %d reported twice for one arming", i)
			}
			seen[i] = true
		case <-time.After(10 * time.Second):
			t.Fatalf("%d of %d connections reported", len(seen), conns)
		}
	}
	for _, p := range servers {
		p.StopNotify()
	}
	if w.Len() != 0 {
		t.Fatalf("%d still registered", w.Len())
	}
	// A closed waiter arms nothing.
	w.Close()
	server, _ := acceptOne(t, l, func() (net.Conn, error) { return net.Dial("tcp", l.Addr().String()) })
	if err := switchNonblocking(t, server).NotifyReadable(w, func() {}); err == nil {
		t.Fatal("armed on a closed waiter")
	}
}

// splitConn writes each buffer in two halves with a pause between them,
// so a TLS record arrives in two parts.
type splitConn struct{ net.Conn }

func (c splitConn) Write(p []byte) (int, error) {
	h := len(p) / 2
	n, err := c.Conn.Write(p[:h])
	if err != nil {
		return n, err
	}
	time.Sleep(30 * time.Millisecond)
	m, err := c.Conn.Write(p[h:])
	return n + m, err
}

// TestNonblockingTLS: a *tls.Conn over a nonblocking connection returns
// ErrWouldBlock for a record that has only partly arrived, keeps that part,
// and returns the plaintext once the rest is there.
func TestNonblockingTLS(t *testing.T) {
	pki := newTestPKI(t)
	l := listen(t, Config{TLS: pki.serverConfig()})
	cert := pki.issue(t, "client", x509.ExtKeyUsageClientAuth)
	server, client := acceptOne(t, l, func() (net.Conn, error) {
		raw, err := net.Dial("tcp", l.Addr().String())
		if err != nil {
			return nil, err
		}
		c := tls.Client(splitConn{raw}, pki.clientConfig(&cert))
		return c, c.Handshake()
	})
	tc := server.(*tls.Conn)
	p := switchNonblocking(t, tc.NetConn())
	buf := make([]byte, 64)
	if _, err := tc.Read(buf); !errors.Is(err, ErrWouldBlock) {
		t.Fatalf("idle TLS read: %v", err)
	}
	go client.Write([]byte("one record"))
	var got []byte
	partial := 0
	notify := newNotifier(t)
	for len(got) < len("one record") {
		notify.arm(t, p)
		notify.reported(t)
		n, err := tc.Read(buf)
		switch {
		case errors.Is(err, ErrWouldBlock):
			partial++
		case err != nil:
			t.Fatalf("TLS read: %v", err)
		}
		got = append(got, buf[:n]...)
	}
	if string(got) != "one record" {
		t.Fatalf("got %q", got)
	}
	if partial == 0 {
		t.Fatal("the record never arrived in parts: the test did not test that")
	}
	if _, err := tc.Read(buf); !errors.Is(err, ErrWouldBlock) {
		t.Fatalf("drained TLS read: %v", err)
	}
	// The connection still works both ways.
	if _, err := tc.Write([]byte("back")); err != nil {
		t.Fatal(err)
	}
	client.SetReadDeadline(time.Now().Add(10 * time.Second))
	if n, err := client.Read(buf); err != nil || string(buf[:n]) != "back" {
		t.Fatalf("client read %q %v", buf[:n], err)
	}
}
