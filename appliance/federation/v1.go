package federation

import (
	"bufio"
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"net"
	"sync"
	"sync/atomic"
	"time"

	"outpost/appliance/federation/fedproto"
	"outpost/appliance/logx"
)

// Federation v1 (docs/federation.md "Federation v1"): the official
// server's legacy federation, a TLS stream of framed FederatedEvents
// (v1_codec.go) on its port 9000. Only the transport differs from v2: a
// v1 connection is one link (link.go), with the same sessions, provenance,
// hops, memory of copies, counters and persistent queue. Neither side
// sends anything before its events: the official server, once the TLS
// handshake is done, sends the latest position of its clients and a
// ContactListEntry per contact, then live traffic (its
// DistributedFederationManager.handleOnConnect, the same for the server
// and the client side); Outpost sends its link's replay, then live
// traffic.

// ListenerV1Name is the federation v1 listener's name.
const ListenerV1Name = "federation-v1"

// Timing of a v1 connection. The protocol has no heartbeat: Outpost sends
// an empty frame after v1KeepAlive without writing (the official server
// parses it as an empty FederatedEvent and does nothing with it), and ends
// a connection that sent nothing for v1Idle (an official server with no
// traffic is silent: its link is then made again). Every write must finish
// within v1WriteTimeout.
const (
	v1KeepAlive    = 30 * time.Second
	v1Idle         = 5 * time.Minute
	v1WriteTimeout = 30 * time.Second
	v1ReadBuffer   = 32 << 10
)

// V1Listener is the federation v1 listener: it follows the listener
// contract (architecture.md "The five listeners"), and its links belong to
// the Federation that made it.
type V1Listener struct {
	f  *Federation
	ln net.Listener

	mu     sync.Mutex
	conns  map[net.Conn]struct{}
	closed bool
	wg     sync.WaitGroup
}

// V1 returns the federation v1 listener (nil without Config.V1Addr).
func (f *Federation) V1() *V1Listener {
	if f.cfg.V1Addr == "" {
		return nil
	}
	f.v1Once.Do(func() { f.v1 = &V1Listener{f: f, conns: map[net.Conn]struct{}{}} })
	return f.v1
}

// Listen binds the listener.
func (v *V1Listener) Listen() error {
	tc := v.f.serverTLS()
	tc.NextProtos = nil // a plain TLS stream
	var err error
	if v.f.cfg.V1Listen != nil {
		v.ln, err = v.f.cfg.V1Listen(v.f.cfg.V1Addr, tc)
	} else {
		v.ln, err = tls.Listen("tcp", v.f.cfg.V1Addr, tc)
	}
	return err
}

// Addr is the bound address.
func (v *V1Listener) Addr() net.Addr {
	if v.ln == nil {
		return nil
	}
	return v.ln.Addr()
}

// Serve accepts federates in the background.
func (v *V1Listener) Serve() {
	v.wg.Add(1)
	go func() {
		defer v.wg.Done()
		for {
			c, err := v.ln.Accept()
			if err != nil {
				if errors.Is(err, net.ErrClosed) || v.isClosed() {
					return
				}
				v.f.warn.Warn("federation v1 accept", "err", err)
				time.Sleep(100 * time.Millisecond) // netx backs off; a plain listener's errors are rare
				continue
			}
			if !v.track(c, true) {
				c.Close()
				return
			}
			v.wg.Add(1)
			go func() {
				defer v.wg.Done()
				defer v.track(c, false)
				v.f.serveV1Inbound(c)
			}()
		}
	}()
}

func (v *V1Listener) isClosed() bool {
	v.mu.Lock()
	defer v.mu.Unlock()
	return v.closed
}

// track adds (false once shut down) or removes an open connection.
func (v *V1Listener) track(c net.Conn, add bool) bool {
	v.mu.Lock()
	defer v.mu.Unlock()
	if !add {
		delete(v.conns, c)
		return true
	}
	if v.closed {
		return false
	}
	v.conns[c] = struct{}{}
	return true
}

// Shutdown stops accepting and ends the listener's connections (and with
// them their links).
func (v *V1Listener) Shutdown(ctx context.Context) error {
	v.mu.Lock()
	v.closed = true
	for c := range v.conns {
		c.Close()
	}
	v.mu.Unlock()
	if v.ln != nil {
		v.ln.Close()
	}
	done := make(chan struct{})
	go func() { v.wg.Wait(); close(done) }()
	select {
	case <-done:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// federateName is the name a connecting federate is known by: the managed
// federate's whose CA its certificate chains to, or its certificate's
// common name.
func (f *Federation) federateName(certs []*x509.Certificate) string {
	if m := f.managedFor(certs[0], intermediates(certs)); m != "" {
		return m
	}
	return certName(certs[0])
}

// serveV1Inbound serves one connection of the v1 listener as a link until
// it ends.
func (f *Federation) serveV1Inbound(c net.Conn) {
	defer c.Close()
	tc, ok := c.(*tls.Conn)
	if !ok {
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), setupTimeout)
	err := tc.HandshakeContext(ctx) // done already when the connection came through netx
	cancel()
	if err != nil {
		f.warn.Warn("federation v1 handshake failed", "remote", c.RemoteAddr().String(), "err", errString(err))
		return
	}
	certs := tc.ConnectionState().PeerCertificates
	if len(certs) == 0 {
		return
	}
	name := f.federateName(certs)
	f.attachMu.Lock()
	l, err := f.attach(name, "", c.RemoteAddr().String(), nil, certs[0])
	f.attachMu.Unlock()
	if err != nil {
		return
	}
	f.serveV1(tc, l, nil, nil)
}

// runOutboundV1 connects to o's v1 listener and serves the link until it
// ends (dialLoop connects again).
func (f *Federation) runOutboundV1(o Outbound, stop <-chan struct{}) error {
	ctx, cancel := context.WithTimeout(context.Background(), setupTimeout)
	defer cancel()
	go func() {
		select {
		case <-f.stop:
		case <-stop:
		case <-ctx.Done():
		}
		cancel()
	}()
	d := net.Dialer{KeepAlive: 30 * time.Second}
	raw, err := d.DialContext(ctx, "tcp", o.Address)
	if err != nil {
		return err
	}
	tcfg := f.clientTLS(o)
	tcfg.NextProtos = nil // a plain TLS stream
	tc := tls.Client(raw, tcfg)
	if err := tc.HandshakeContext(ctx); err != nil {
		raw.Close()
		return fmt.Errorf("federation v1 handshake: %w", err)
	}
	cancel()
	sp := f.spoolerOf(o.Name)
	l, err := f.attach(o.Name, "", o.Address, sp, leafOfConn(tc))
	if err != nil {
		tc.Close()
		return err
	}
	if sp != nil {
		sp.stop() // the link's session reads from here on (spool.go)
	}
	err = f.serveV1(tc, l, stop, func() {
		if sp != nil {
			sp.open() // before the link's session closes
		}
	})
	if sp != nil {
		sp.setPeer(l.peer())
		sp.requeue(l)
		sp.drain()
	}
	return err
}

// serveV1 runs link l on conn: what the federate sends is read and
// received, what the link queues is written, and an empty frame keeps a
// quiet connection open. It returns once the link ended (conn closed,
// detached), calling beforeDetach first.
func (f *Federation) serveV1(conn net.Conn, l *link, stop <-chan struct{}, beforeDetach func()) error {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	w := &v1Writer{conn: conn, limit: f.cfg.MaxMessage}
	w.last.Store(time.Now().UnixNano())
	errc := make(chan error, 3)
	var wg sync.WaitGroup
	wg.Add(3)
	go func() { defer wg.Done(); errc <- f.readV1(conn, l) }()
	go func() { defer wg.Done(); errc <- l.sendLoop(ctx, w.send) }()
	go func() { defer wg.Done(); errc <- w.keepAlive(ctx) }()
	var err error
	select {
	case err = <-errc:
	case <-l.done:
		err = errors.New("link closed")
	case <-stop:
		err = errors.New("federate removed")
	case <-f.stop:
		err = errors.New("shutting down")
	}
	if beforeDetach != nil {
		beforeDetach()
	}
	cancel()
	conn.Close()
	f.detach(l, err)
	wg.Wait()
	return err
}

// readV1 reads frames until the connection ends: a malformed message is
// dropped and counted (the framing holds), a frame over the limit ends the
// connection.
func (f *Federation) readV1(conn net.Conn, l *link) error {
	r := bufio.NewReaderSize(conn, v1ReadBuffer)
	var buf []byte
	for {
		conn.SetReadDeadline(time.Now().Add(v1Idle))
		msg, err := readV1Frame(r, buf, f.cfg.MaxMessage)
		if err != nil {
			var fe *v1FrameError
			if errors.As(err, &fe) {
				l.stats.dropSize.Add(1)
				f.warn.Warn("federation v1 frame refused: connection ended", "federate", logx.Clip(l.name), "err", err.Error())
			} else if errors.Is(err, errV1Truncated) {
				f.warn.Warn("federation v1 connection ended inside a frame", "federate", logx.Clip(l.name))
			}
			return err
		}
		if cap(msg) <= v1ReadBuffer {
			buf = msg[:0] // kept for the next frame; a large one is let go
		}
		l.stats.lastContact.Store(f.cfg.Now().Unix())
		if len(msg) == 0 {
			continue // a keep-alive
		}
		ev, err := decodeV1(msg)
		if err != nil {
			l.stats.in.Add(1)
			l.stats.dropMalformed.Add(1)
			f.warn.Warn("federation v1 message refused: not a FederatedEvent", "federate", logx.Clip(l.name), "err", logx.Clip(err.Error()))
			continue
		}
		if l.peer() == "" {
			// The sender's id is the last of an event's provenance (each
			// server adds its own): nothing that came through it is sent
			// back to it. The official server's v1 sends none.
			if p := ev.GetFederateProvenance(); len(p) > 0 {
				l.setPeer(p[len(p)-1].GetFederationServerId())
			}
		}
		l.receive(ev, len(msg))
	}
}

// v1Writer writes frames to a v1 connection, one at a time, each within
// v1WriteTimeout.
type v1Writer struct {
	conn  net.Conn
	limit int
	mu    sync.Mutex
	buf   []byte
	last  atomic.Int64 // unix nanoseconds of the last write
}

// send writes fe (nil: the empty frame). An event too large to frame is
// dropped (a federate would refuse it), not an error.
func (w *v1Writer) send(fe *fedproto.FederatedEvent) error {
	w.mu.Lock()
	defer w.mu.Unlock()
	b, err := appendV1Frame(w.buf[:0], fe, w.limit)
	if err != nil {
		var fr *v1FrameError
		if errors.As(err, &fr) {
			return nil
		}
		return err
	}
	w.conn.SetWriteDeadline(time.Now().Add(v1WriteTimeout))
	_, err = w.conn.Write(b)
	if cap(b) <= v1ReadBuffer {
		w.buf = b[:0]
	} else {
		w.buf = nil
	}
	w.last.Store(time.Now().UnixNano())
	return err
}

// keepAlive sends the empty frame when nothing was written for v1KeepAlive.
func (w *v1Writer) keepAlive(ctx context.Context) error {
	t := time.NewTicker(v1KeepAlive / 3)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-t.C:
		}
		if time.Since(time.Unix(0, w.last.Load())) < v1KeepAlive {
			continue
		}
		if err := w.send(nil); err != nil {
			return fmt.Errorf("keep-alive: %w", err)
		}
	}
}

// leafOfConn is the certificate the peer of a TLS connection presented
// (nil: none).
func leafOfConn(tc *tls.Conn) *x509.Certificate {
	if cs := tc.ConnectionState().PeerCertificates; len(cs) > 0 {
		return cs[0]
	}
	return nil
}
