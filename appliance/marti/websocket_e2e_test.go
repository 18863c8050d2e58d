package marti_test

import (
	"context"
	"crypto/tls"
	"encoding/binary"
	"fmt"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/coder/websocket"

	"outpost/appliance/apptest"
	"outpost/appliance/broker"
	"outpost/appliance/config"
	"outpost/appliance/cot"
	"outpost/appliance/netx"
	"outpost/appliance/takclient"
	"outpost/internal/testkit"
)

// wsClient is a CoT websocket client: every message it receives must be
// exactly one TAK protocol v1 stream frame.
type wsClient struct {
	c      *websocket.Conn
	events chan *cot.Event
	done   chan struct{}
	err    error // why reading stopped; read after done
}

func dialWS(t *testing.T, e *env, cert *tls.Certificate) *wsClient {
	t.Helper()
	return dialWSFrom(t, e, cert, "")
}

// openWS opens /takproto/1 with cert from the loopback address src ("":
// the system's choice).
func openWS(t *testing.T, e *env, cert *tls.Certificate, src string) (*websocket.Conn, *http.Response, error) {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	client := e.HTTPSClient(cert)
	if src != "" {
		client.Transport.(*http.Transport).DialContext = func(_ context.Context, _, addr string) (net.Conn, error) {
			return testkit.DialFrom(src, addr)
		}
	}
	return websocket.Dial(ctx, "wss://"+e.Addr(t, netx.ListenerHTTPS)+"/takproto/1", &websocket.DialOptions{HTTPClient: client})
}

func dialWSFrom(t *testing.T, e *env, cert *tls.Certificate, src string) *wsClient {
	t.Helper()
	c, resp, err := openWS(t, e, cert, src)
	if err != nil {
		status := 0
		if resp != nil {
			status = resp.StatusCode
		}
		t.Fatalf("dial /takproto/1: %d %v", status, err)
	}
	c.SetReadLimit(1 << 20)
	w := &wsClient{c: c, events: make(chan *cot.Event, 1024), done: make(chan struct{})}
	go w.read()
	t.Cleanup(func() { c.CloseNow() })
	return w
}

func (w *wsClient) read() {
	defer close(w.done)
	for {
		typ, msg, err := w.c.Read(context.Background())
		if err != nil {
			w.err = err
			return
		}
		if typ != websocket.MessageBinary || len(msg) < 2 || msg[0] != 0xBF {
			w.err = fmt.Errorf("not a binary stream frame: type %v, % x", typ, msg[:min(len(msg), 8)])
			return
		}
		n, k := binary.Uvarint(msg[1:])
		if k <= 0 || int(n) != len(msg)-1-k {
			w.err = fmt.Errorf("message is not exactly one frame: length %d, %d bytes after the header", n, len(msg)-1-k)
			return
		}
		ev, err := cot.DecodeProto(msg[1+k:])
		if err != nil {
			w.err = fmt.Errorf("frame does not decode: %w", err)
			return
		}
		w.events <- ev
	}
}

func (w *wsClient) waitFor(t *testing.T, what string, match func(*cot.Event) bool) *cot.Event {
	t.Helper()
	timeout := time.After(10 * time.Second)
	for {
		select {
		case ev := <-w.events:
			if match(ev) {
				return ev
			}
		case <-w.done:
			t.Fatalf("waiting for %s: socket ended: %v", what, w.err)
		case <-timeout:
			t.Fatalf("timed out waiting for %s", what)
		}
	}
}

// closed waits for the socket to end and returns its close status.
func (w *wsClient) closed(t *testing.T) websocket.StatusCode {
	t.Helper()
	select {
	case <-w.done:
		return websocket.CloseStatus(w.err)
	case <-time.After(10 * time.Second):
		t.Fatal("the socket is still open")
		return 0
	}
}

func (w *wsClient) send(t *testing.T, msg []byte) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if err := w.c.Write(ctx, websocket.MessageBinary, msg); err != nil {
		t.Fatal(err)
	}
}

func takMessage(t *testing.T, ev *cot.Event) []byte {
	t.Helper()
	b, err := ev.MarshalProto()
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func framed(t *testing.T, evs ...*cot.Event) []byte {
	var out []byte
	for _, ev := range evs {
		out = cot.AppendStreamFrame(out, takMessage(t, ev))
	}
	return out
}

func uid(u string) func(*cot.Event) bool { return func(ev *cot.Event) bool { return ev.UID == u } }

func ping(u string) *cot.Event {
	now := time.Now().UTC()
	return &cot.Event{Version: "2.0", UID: u + "-ping", Type: "t-x-c-t", How: "m-g", Time: now, Start: now,
		Stale: now.Add(20 * time.Second), Point: cot.Point{Hae: cot.Unknown, Ce: cot.Unknown, Le: cot.Unknown}}
}

// TestWebsocketCoT: a /takproto/1 socket with a client certificate and a
// TCP client exchange position reports and chats both ways; the socket gets
// the replay on join, pongs to its pings, its identity from the
// certificate, and its departure is announced.
func TestWebsocketCoT(t *testing.T) {
	e := start(t, nil)
	tcp := e.DialTCP(t)
	tcp.Send(takclient.SA("ANDROID-TCP", "TCPCALL", 59.1, 18.1))
	testkit.WaitFor(t, "the TCP client identified", func() bool { return len(e.Broker().Clients()) == 1 })

	ws := dialWS(t, e, e.Issue(t, "wsuser"))
	// The latest SA of every connected client is replayed on join.
	if ev := ws.waitFor(t, "the replayed SA", uid("ANDROID-TCP")); ev.Detail.Contact == nil || ev.Detail.Contact.Callsign != "TCPCALL" {
		t.Fatalf("replay: %+v", ev.Detail)
	}
	// A stream frame per message (WebTAK, pytak, the official server)...
	ws.send(t, framed(t, takclient.SA("WS-1", "WSCALL", 59.2, 18.2)))
	if ev, err := tcp.WaitFor(takclient.Type("a-f-G-U-C"), 10*time.Second); err != nil || ev.UID != "WS-1" || ev.Point.Lat != 59.2 {
		t.Fatalf("TCP client did not get the socket's SA: %v %+v", err, ev)
	}
	// ... a bare TakMessage (what a protobuf library encodes) ...
	ws.send(t, takMessage(t, takclient.SA("WS-1", "WSCALL", 59.3, 18.3)))
	if ev, err := tcp.WaitFor(func(ev *cot.Event) bool { return ev.UID == "WS-1" && ev.Point.Lat == 59.3 }, 10*time.Second); err != nil {
		t.Fatalf("bare TakMessage not relayed: %v %+v", err, ev)
	}
	// ... and several frames in one message.
	ws.send(t, framed(t, takclient.Chat("WS-CHAT-1", "first"), takclient.Chat("WS-CHAT-2", "second")))
	for _, u := range []string{"WS-CHAT-1", "WS-CHAT-2"} {
		if _, err := tcp.WaitFor(func(ev *cot.Event) bool { return ev.UID == u }, 10*time.Second); err != nil {
			t.Fatalf("%s: %v", u, err)
		}
	}
	// The other way: TCP to socket.
	tcp.Send(takclient.Chat("TCP-CHAT", "hello socket"))
	if ev := ws.waitFor(t, "the TCP chat", uid("TCP-CHAT")); !strings.Contains(string(ev.Detail.XML), "hello socket") {
		t.Fatalf("chat detail: %s", ev.Detail.XML)
	}
	// Pings are answered on the socket with a pong, never relayed.
	ws.send(t, framed(t, ping("WS-1")))
	if ev := ws.waitFor(t, "the pong", func(ev *cot.Event) bool { return ev.Type == "t-x-c-t-r" }); ev.UID != "takPong" {
		t.Fatalf("pong: %+v", ev)
	}
	// Junk is skipped, not fatal.
	ws.send(t, []byte{0xBF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0x01})
	ws.send(t, []byte("definitely not protobuf"))
	ws.send(t, framed(t, ping("WS-1")))
	ws.waitFor(t, "a pong after junk", func(ev *cot.Event) bool { return ev.Type == "t-x-c-t-r" })

	// The socket's identity is its certificate's name, on both lists.
	eps := e.endpoints(t, both[0], "")
	if w := findEndpoint(eps, "WS-1"); w == nil || w["username"] != "wsuser" || w["callsign"] != "WSCALL" || w["lastStatus"] != "Connected" {
		t.Fatalf("endpoint of the socket: %v", eps.Data)
	}
	// uid binding applies: another certificate cannot claim WS-1.
	mallory := dialWS(t, e, e.Issue(t, "mallory"))
	mallory.waitFor(t, "mallory's replay", uid("WS-1"))
	before := e.Broker().Stats().Impostor
	mallory.send(t, framed(t, takclient.SA("WS-1", "EVIL", 1, 1)))
	testkit.WaitFor(t, "the impostor refused", func() bool { return e.Broker().Stats().Impostor == before+1 })

	// A socket that leaves is announced to the others.
	ws.c.Close(websocket.StatusNormalClosure, "bye")
	dep, err := tcp.WaitFor(takclient.Type("t-x-d-d"), 10*time.Second)
	if err != nil || !strings.Contains(string(dep.Detail.XML), `uid="WS-1"`) {
		t.Fatalf("departure: %v %+v", err, dep)
	}
	testkit.WaitFor(t, "the socket's session closed as client closed", func() bool {
		return e.Broker().Stats().Closed[broker.ReasonClientClosed] >= 1
	})
}

// TestWebsocketRefusals: plain HTTP is refused with 403, text messages and
// oversize messages close the socket, the cap on sockets answers 503.
func TestWebsocketRefusals(t *testing.T) {
	e := start(t, func(c *config.Config) { c.MaxConnections = 3 })
	resp := e.do(t, netx.ListenerHTTP, "GET", "/takproto/1", nil, "Connection", "Upgrade", "Upgrade", "websocket",
		"Sec-WebSocket-Version", "13", "Sec-WebSocket-Key", "dGhlIHNhbXBsZSBub25jZQ==")
	if resp.Status != http.StatusForbidden || !strings.Contains(resp.Message(), "client certificate") {
		t.Fatalf("plain HTTP: %d %s", resp.Status, resp.Body)
	}
	cert := e.Issue(t, "wsuser")

	text := dialWS(t, e, cert)
	text.c.Write(context.Background(), websocket.MessageText, []byte(`<event/>`))
	if st := text.closed(t); st != websocket.StatusUnsupportedData {
		t.Fatalf("text message: close status %v (%v)", st, text.err)
	}

	big := dialWS(t, e, cert)
	big.c.Write(context.Background(), websocket.MessageBinary, make([]byte, 100<<10))
	if st := big.closed(t); st != websocket.StatusMessageTooBig {
		t.Fatalf("oversize message: close status %v (%v)", st, big.err)
	}
	testkit.WaitFor(t, "the oversize close recorded", func() bool {
		return e.Broker().Stats().Closed[broker.ReasonTooLarge] == 1
	})

	// The cap (maxConnections): three open, the fourth refused with 503.
	for range 3 {
		dialWS(t, e, cert)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	testkit.WaitFor(t, "the closed sockets released", func() bool { return e.Broker().Stats().Sessions == 3 })
	_, r, err := websocket.Dial(ctx, "wss://"+e.Addr(t, netx.ListenerHTTPS)+"/takproto/1", &websocket.DialOptions{HTTPClient: e.HTTPSClient(cert)})
	if err == nil || r == nil || r.StatusCode != http.StatusServiceUnavailable || r.Header.Get("Retry-After") == "" {
		t.Fatalf("over the cap: %v %v", r, err)
	}
}

// TestWebsocketPerSourceCap: a CoT websocket is authenticated at its
// upgrade (a client certificate on 8443; plain HTTP is refused), so there
// are no unauthenticated sockets to time out; what bounds one address is
// the per-source cap of the HTTP listeners (httpMaxConnectionsPerSource),
// which holds a socket's connection for as long as it is open. Beyond it,
// that address's connections are refused and other addresses are served.
func TestWebsocketPerSourceCap(t *testing.T) {
	e := start(t, func(c *config.Config) { c.HTTPMaxConnectionsPerSource = 3 })
	cert := e.Issue(t, "wsuser")
	var held []*wsClient
	for range 3 {
		held = append(held, dialWSFrom(t, e, cert, "127.0.7.1"))
	}
	if c, resp, err := openWS(t, e, cert, "127.0.7.1"); err == nil {
		c.CloseNow()
		t.Fatalf("a fourth socket from one address was opened (%v)", resp.Status)
	}
	other := dialWSFrom(t, e, cert, "127.0.8.1")
	other.send(t, framed(t, ping("OTHER")))
	other.waitFor(t, "the other address's pong", func(ev *cot.Event) bool { return ev.Type == "t-x-c-t-r" })
	held[0].c.Close(websocket.StatusNormalClosure, "")
	testkit.WaitFor(t, "the address's place back", func() bool {
		c, _, err := openWS(t, e, cert, "127.0.7.1")
		if err == nil {
			c.CloseNow()
		}
		return err == nil
	})
}

// TestWebsocketRevokedAndShutdown: a socket whose certificate is revoked is
// cut off at once; at shutdown the others are closed with 1001 after
// receiving what was queued.
func TestWebsocketRevokedAndShutdown(t *testing.T) {
	app := apptest.StartWithLog(t, nil, testkit.Logger(t))
	e := &env{App: app}
	eve := dialWS(t, e, e.Issue(t, "eve"))
	ok := dialWS(t, e, e.Issue(t, "okuser"))
	eve.send(t, framed(t, ping("EVE")))
	eve.waitFor(t, "eve's pong", func(ev *cot.Event) bool { return ev.Type == "t-x-c-t-r" })
	if n, err := e.Authority().RevokeName("eve", "key_compromise"); err != nil || n != 1 {
		t.Fatalf("revoke: %d %v", n, err)
	}
	eve.closed(t)
	testkit.WaitFor(t, "the revoked session recorded", func() bool { return e.Broker().Stats().Closed[broker.ReasonRevoked] == 1 })
	// A socket that never reads what it is sent (nor the close at
	// shutdown) costs the shutdown its drain budget, never an error.
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	silent, _, err := websocket.Dial(ctx, "wss://"+e.Addr(t, netx.ListenerHTTPS)+"/takproto/1",
		&websocket.DialOptions{HTTPClient: e.HTTPSClient(e.Issue(t, "silent"))})
	if err != nil {
		t.Fatal(err)
	}
	defer silent.CloseNow()

	ok.send(t, framed(t, ping("OK")))
	ok.waitFor(t, "okuser's pong", func(ev *cot.Event) bool { return ev.Type == "t-x-c-t-r" })
	sctx, scancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer scancel()
	if err := e.Close(sctx); err != nil {
		t.Fatal(err)
	}
	if st := ok.closed(t); st != websocket.StatusGoingAway {
		t.Fatalf("shutdown: close status %v (%v)", st, ok.err)
	}
}

// TestWebsocketKeepalive: the server pings silent sockets; one that
// answers stays, one that does not is closed as idle within
// SSL_SOCK_TIMEOUT.
func TestWebsocketKeepalive(t *testing.T) {
	e := start(t, func(c *config.Config) { c.SSLSockTimeout = time.Second })
	alive := dialWS(t, e, e.Issue(t, "alive")) // reads, so its library answers pings
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	deaf, _, err := websocket.Dial(ctx, "wss://"+e.Addr(t, netx.ListenerHTTPS)+"/takproto/1",
		&websocket.DialOptions{HTTPClient: e.HTTPSClient(e.Issue(t, "deaf"))})
	if err != nil {
		t.Fatal(err)
	}
	defer deaf.CloseNow() // never reads: never answers a ping
	testkit.WaitFor(t, "the deaf socket closed as idle", func() bool { return e.Broker().Stats().Closed[broker.ReasonIdle] == 1 })
	alive.send(t, framed(t, ping("ALIVE")))
	alive.waitFor(t, "a pong on the socket that answers pings", func(ev *cot.Event) bool { return ev.Type == "t-x-c-t-r" })
	if n := e.Broker().Stats().Closed[broker.ReasonIdle]; n != 1 {
		t.Fatalf("%d sockets closed as idle, want only the deaf one", n)
	}
}

// TestWebsocketSlowConsumer: a socket whose client stops reading is closed
// once a write blocks for writeTimeout; the sender is unaffected.
func TestWebsocketSlowConsumer(t *testing.T) {
	e := start(t, func(c *config.Config) {
		c.WriteTimeout = time.Second
		c.QueueHardBytes, c.QueueSoftBytes = 512<<20, 256<<20 // the write deadline, not the queue, must trip
		c.ClientEventsPerSecond, c.ClientBytesPerSecond = 0, 0
	})
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	stalled, _, err := websocket.Dial(ctx, "wss://"+e.Addr(t, netx.ListenerHTTPS)+"/takproto/1",
		&websocket.DialOptions{HTTPClient: e.HTTPSClient(e.Issue(t, "stalled"))})
	if err != nil {
		t.Fatal(err)
	}
	defer stalled.CloseNow()
	tcp := e.DialTCP(t)
	text := strings.Repeat("x", 32<<10)
	// 32 MiB: far more than the socket buffers between the server and the
	// stalled client hold.
	for i := range 1024 {
		if err := tcp.Send(takclient.Chat(fmt.Sprint("FLOOD-", i), text)); err != nil {
			t.Fatalf("the sender was cut off: %v", err)
		}
	}
	testkit.WaitFor(t, "the stalled socket closed as a slow consumer", func() bool {
		return e.Broker().Stats().Closed[broker.ReasonWriteDeadline] == 1
	})
	testkit.WaitFor(t, "the stalled socket's queue released", func() bool { return e.Broker().Stats().QueuedBytes == 0 })
	// The sender is still served.
	tcp.Ping("SENDER")
	if _, err := tcp.WaitFor(takclient.Type("t-x-c-t-r"), 10*time.Second); err != nil {
		t.Fatalf("pong to the sender: %v", err)
	}
}
