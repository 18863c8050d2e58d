package pki

import (
	"crypto/tls"
	"errors"
	"io"
	"net"
	"testing"
	"time"
)

func newHandshakeListener(t *testing.T, a *Authority, timeout time.Duration) *HandshakeListener {
	t.Helper()
	raw, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	l := NewHandshakeListener(raw, a.ServerTLSConfig(), timeout, nil).(*HandshakeListener)
	t.Cleanup(func() { _ = l.Close() })
	return l
}

func dialTLS(t *testing.T, addr string, a *Authority, cc *ClientCert) (*tls.Conn, error) {
	t.Helper()
	cfg := &tls.Config{RootCAs: poolOf(a), ServerName: testHost, MinVersion: tls.VersionTLS12}
	if cc != nil {
		cfg.Certificates = []tls.Certificate{*tlsCert(cc)}
	}
	d := &net.Dialer{Timeout: 10 * time.Second}
	c, err := tls.DialWithDialer(d, "tcp", addr, cfg)
	if err != nil {
		return nil, err
	}
	_ = c.SetDeadline(time.Now().Add(20 * time.Second))
	return c, nil
}

// A client that connects and never sends a ClientHello is cut at the timeout,
// while another client completes its handshake and is accepted meanwhile.
func TestHandshakeListenerSilentClientDoesNotBlock(t *testing.T) {
	a := newTestAuthority(t)
	cc := issue(t, a, "eve")
	// The timeout is generous so the good handshake surely finishes while the
	// silent client is still pending, even on a loaded machine under -race.
	l := newHandshakeListener(t, a, 2*time.Second)

	silent, err := net.Dial("tcp", l.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	defer silent.Close()
	silentClosed := make(chan error, 1)
	go func() {
		_ = silent.SetReadDeadline(time.Now().Add(30 * time.Second))
		_, err := silent.Read(make([]byte, 1))
		silentClosed <- err
	}()

	accepted := make(chan net.Conn, 1)
	go func() {
		c, err := l.Accept()
		if err != nil {
			close(accepted)
			return
		}
		accepted <- c
	}()
	client, err := dialTLS(t, l.Addr().String(), a, cc)
	if err != nil {
		t.Fatalf("good client handshake: %v", err)
	}
	defer client.Close()
	var server net.Conn
	select {
	case server = <-accepted:
		if server == nil {
			t.Fatal("Accept failed")
		}
	case <-time.After(20 * time.Second):
		t.Fatal("the good connection was never accepted")
	}
	defer server.Close()
	select {
	case err := <-silentClosed:
		t.Fatalf("the silent client was closed before the good one was accepted (%v)", err)
	default:
	}
	tc, ok := server.(*tls.Conn)
	if !ok {
		t.Fatalf("Accept returned %T", server)
	}
	if name, _, ok := a.Identity(tc.ConnectionState()); !ok || name != "eve" {
		t.Errorf("Identity = %q, %v", name, ok)
	}
	// The deadline was cleared: the accepted connection carries data.
	if _, err := client.Write([]byte("ping")); err != nil {
		t.Fatal(err)
	}
	buf := make([]byte, 4)
	if _, err := io.ReadFull(server, buf); err != nil || string(buf) != "ping" {
		t.Fatalf("read %q, %v", buf, err)
	}

	select {
	case err := <-silentClosed:
		if err == nil {
			t.Fatal("silent client read data instead of being closed")
		}
	case <-time.After(20 * time.Second):
		t.Fatal("the silent client was never cut")
	}
	waitFor(t, "the failed handshake to be counted", func() bool { return l.FailedHandshakes() == 1 })
	if l.CompletedHandshakes() != 1 {
		t.Errorf("CompletedHandshakes = %d", l.CompletedHandshakes())
	}
}

func TestHandshakeListenerRefusals(t *testing.T) {
	a := newTestAuthority(t)
	other := newTestAuthority(t)
	tests := []struct {
		name string
		do   func(t *testing.T, addr string)
	}{
		{"plain text instead of TLS", func(t *testing.T, addr string) {
			c, err := net.Dial("tcp", addr)
			if err != nil {
				t.Fatal(err)
			}
			defer c.Close()
			_, _ = c.Write([]byte("<?xml version='1.0'?><event/>\n"))
			_ = c.SetReadDeadline(time.Now().Add(20 * time.Second))
			_, _ = io.Copy(io.Discard, c) // returns when the server closes
		}},
		{"foreign client certificate", func(t *testing.T, addr string) {
			c, err := dialTLS(t, addr, a, issue(t, other, "x"))
			if err == nil {
				_, err = c.Read(make([]byte, 1)) // TLS 1.3 reports the refusal here
				c.Close()
			}
			if err == nil {
				t.Error("foreign certificate accepted")
			}
		}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			l := newHandshakeListener(t, a, time.Second)
			tc.do(t, l.Addr().String())
			waitFor(t, "the refusal to be counted", func() bool { return l.FailedHandshakes() == 1 })
			if l.CompletedHandshakes() != 0 {
				t.Error("a refused connection was accepted")
			}
		})
	}
}

func TestHandshakeListenerClose(t *testing.T) {
	a := newTestAuthority(t)
	l := newHandshakeListener(t, a, 10*time.Second)
	pending, err := net.Dial("tcp", l.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	defer pending.Close()
	waitFor(t, "the pending handshake to be tracked", func() bool {
		l.mu.Lock()
		defer l.mu.Unlock()
		return len(l.pend) == 1
	})
	acceptErr := make(chan error, 1)
	go func() { _, err := l.Accept(); acceptErr <- err }()
	if err := l.Close(); err != nil {
		t.Fatal(err)
	}
	select {
	case err := <-acceptErr:
		if !errors.Is(err, net.ErrClosed) {
			t.Fatalf("Accept after Close: %v", err)
		}
	case <-time.After(15 * time.Second):
		t.Fatal("Accept did not return after Close")
	}
	_ = pending.SetReadDeadline(time.Now().Add(15 * time.Second))
	if _, err := pending.Read(make([]byte, 1)); err == nil {
		t.Error("the pending connection was not closed")
	}
	if _, err := net.DialTimeout("tcp", l.Addr().String(), 2*time.Second); err == nil {
		t.Error("the port still accepts connections")
	}
	if err := l.Close(); err != nil {
		t.Errorf("second Close: %v", err)
	}
}
