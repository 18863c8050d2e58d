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
	WaitReadable() error
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

// waitReturns runs WaitReadable and reports its result, or fails after 10 s.
func waitReturns(t *testing.T, p parked) error {
	t.Helper()
	res := make(chan error, 1)
	go func() { res <- p.WaitReadable() }()
	select {
	case err := <-res:
		return err
	case <-time.After(10 * time.Second):
		t.Fatal("WaitReadable did not return")
		return nil
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

	// Data that arrives while waiting.
	res := make(chan error, 1)
	go func() { res <- p.WaitReadable() }()
	select {
	case err := <-res:
		t.Fatalf("WaitReadable returned %v with nothing to read", err)
	case <-time.After(50 * time.Millisecond):
	}
	client.Write([]byte("hello"))
	if err := <-res; err != nil {
		t.Fatal(err)
	}
	if n, err := p.Read(buf); err != nil || string(buf[:n]) != "hello" {
		t.Fatalf("read %q %v", buf[:n], err)
	}
	if _, err := p.Read(buf); !errors.Is(err, ErrWouldBlock) {
		t.Fatalf("drained read: %v", err)
	}

	// Data that arrived before the wait began: the poller's readiness was
	// reported already, the wait must still see it.
	client.Write([]byte("early"))
	time.Sleep(50 * time.Millisecond)
	if err := waitReturns(t, p); err != nil {
		t.Fatal(err)
	}
	if n, _ := p.Read(buf); string(buf[:n]) != "early" {
		t.Fatalf("read %q", buf[:n])
	}

	// The deadline ends a wait and a read with a timeout.
	p.SetReadDeadline(time.Now().Add(20 * time.Millisecond))
	if err := waitReturns(t, p); !errors.Is(err, os.ErrDeadlineExceeded) {
		t.Fatalf("wait past the deadline: %v", err)
	}
	if _, err := p.Read(buf); !errors.Is(err, os.ErrDeadlineExceeded) {
		t.Fatalf("read past the deadline: %v", err)
	}
	p.SetReadDeadline(time.Time{})

	// The end of the stream.
	client.Close()
	if err := waitReturns(t, p); err != nil {
		t.Fatal(err)
	}
	if _, err := p.Read(buf); err != io.EOF {
		t.Fatalf("read at the end: %v, want io.EOF", err)
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
	for len(got) < len("one record") {
		if err := waitReturns(t, p); err != nil {
			t.Fatal(err)
		}
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
