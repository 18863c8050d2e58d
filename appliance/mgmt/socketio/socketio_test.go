package socketio

import (
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/coder/websocket"

	"outpost/internal/testkit"
)

func TestHandshake(t *testing.T) {
	s := startServer(t, Options{PingInterval: 7 * time.Second, PingTimeout: 3 * time.Second, MaxMessageBytes: 4096})
	_, open := dial(t, s)
	if sid, _ := open["sid"].(string); len(sid) < 16 {
		t.Errorf("sid %q too short", sid)
	}
	if up, ok := open["upgrades"].([]any); !ok || len(up) != 0 {
		t.Errorf("upgrades %v, want []", open["upgrades"])
	}
	for k, want := range map[string]float64{"pingInterval": 7000, "pingTimeout": 3000, "maxPayload": 4096} {
		if open[k] != want {
			t.Errorf("%s = %v, want %v", k, open[k], want)
		}
	}
	_, open2 := dial(t, s)
	if open2["sid"] == open["sid"] {
		t.Error("two sessions got the same sid")
	}
}

func TestHandshakeErrors(t *testing.T) {
	s := startServer(t, Options{})
	base := s.ts.URL + "/socket.io/"
	cases := []struct {
		name, method, query string
		status, code        int
		message             string
	}{
		{"no transport", "GET", "EIO=4", 400, 0, "Transport unknown"},
		{"unknown transport", "GET", "EIO=4&transport=flash", 400, 0, "Transport unknown"},
		{"polling POST, unknown session", "POST", "EIO=4&transport=polling&sid=abc", 400, 1, "Session ID unknown"},
		{"polling GET, unknown session", "GET", "EIO=4&transport=polling&sid=abc", 400, 1, "Session ID unknown"},
		{"polling handshake by POST", "POST", "EIO=4&transport=polling", 400, 2, "Bad handshake method"},
		{"old protocol, polling", "GET", "EIO=3&transport=polling", 400, 5, "Unsupported protocol version"},
		{"old protocol", "GET", "EIO=3&transport=websocket", 400, 5, "Unsupported protocol version"},
		{"no protocol", "GET", "transport=websocket", 400, 5, "Unsupported protocol version"},
		{"upgrade from polling", "GET", "EIO=4&transport=websocket&sid=abc", 400, 1, "Session ID unknown"},
		{"wrong method", "PUT", "EIO=4&transport=websocket", 400, 2, "Bad handshake method"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			r := testkit.Do(t, nil, tc.method, base+"?"+tc.query, nil)
			var body struct {
				Code    *int   `json:"code"`
				Message string `json:"message"`
			}
			r.JSON(t, &body)
			if r.Status != tc.status || body.Code == nil || *body.Code != tc.code || body.Message != tc.message {
				t.Fatalf("got %d %s, want %d code %d %q", r.Status, r.Body, tc.status, tc.code, tc.message)
			}
		})
	}
	// A websocket query without the upgrade headers is refused by the
	// websocket library with a client error, never served.
	r := testkit.Do(t, nil, "GET", base+"?EIO=4&transport=websocket", nil)
	if r.Status < 400 || r.Status > 499 {
		t.Fatalf("plain GET of the websocket endpoint: %d %s", r.Status, r.Body)
	}
	if s.Len() != 0 {
		t.Fatalf("%d sockets after refused handshakes", s.Len())
	}
}

func TestConnectEventAndDisconnect(t *testing.T) {
	var mu sync.Mutex
	var connected []string
	var reasons []string
	s := startServer(t, Options{
		OnConnect: func(so *Socket) error {
			mu.Lock()
			connected = append(connected, so.ID())
			mu.Unlock()
			return so.Emit("welcome", map[string]string{"auth": string(so.Auth())})
		},
		OnDisconnect: func(so *Socket, reason string) {
			mu.Lock()
			reasons = append(reasons, reason)
			mu.Unlock()
		},
	})
	echo(s)
	rc, _ := dial(t, s)
	// An event before the namespace connect is a protocol error; this
	// client connects properly.
	rc.send(`40{"token":"abc"}`)
	ans := rc.read()
	if !strings.HasPrefix(ans, `40{"sid":"`) {
		t.Fatalf("connect answer %q", ans)
	}
	if got := rc.read(); got != `42["welcome",{"auth":"{\"token\":\"abc\"}"}]` {
		t.Fatalf("welcome %q", got)
	}
	rc.send(`42["echo",1,"two",{"three":[3]},null]`)
	if got := rc.read(); got != `42["echoed",1,"two",{"three":[3]},null]` {
		t.Fatalf("echoed %q", got)
	}
	// An event without a handler is ignored; the socket keeps working.
	rc.send(`42["nobody-listens",1]`)
	rc.roundTrip("still-here")
	mu.Lock()
	if len(connected) != 1 || !strings.Contains(ans, connected[0]) {
		t.Errorf("OnConnect saw %v; answer %q", connected, ans)
	}
	mu.Unlock()
	rc.send("41")
	if code, msgs := rc.closed(); len(msgs) != 0 {
		t.Fatalf("after 41: %q (close %v)", msgs, code)
	}
	testkit.WaitFor(t, "OnDisconnect", func() bool {
		mu.Lock()
		defer mu.Unlock()
		return len(reasons) == 1 && reasons[0] == "client disconnected"
	})
	testkit.WaitFor(t, "socket removed", func() bool { return s.Len() == 0 })
}

func TestEngineClosePacket(t *testing.T) {
	reason := make(chan string, 1)
	s := startServer(t, Options{OnDisconnect: func(_ *Socket, r string) { reason <- r }})
	rc, _ := connect(t, s)
	rc.send("1")
	rc.closed()
	if r := <-reason; r != "client closed the session" {
		t.Fatalf("reason %q", r)
	}
}

func TestAcknowledgements(t *testing.T) {
	got := make(chan []json.RawMessage, 1)
	var server *Socket
	ready := make(chan struct{})
	s := startServer(t, Options{OnConnect: func(so *Socket) error { server = so; close(ready); return nil }})
	echo(s)
	s.On("sum", func(so *Socket, args []json.RawMessage, ack func(...any)) {
		var a, b int
		json.Unmarshal(args[0], &a)
		json.Unmarshal(args[1], &b)
		ack(a + b)
		ack("ignored: only the first answer counts")
	})
	s.On("noack", func(so *Socket, args []json.RawMessage, ack func(...any)) { ack("nobody asked") })
	rc, _ := connect(t, s)
	<-ready
	// Client to server: 42<id>[...] is answered 43<id>[...].
	rc.send(`4217["sum",2,3]`)
	if a := rc.read(); a != `4317[5]` {
		t.Fatalf("ack %q, want 4317[5]", a)
	}
	rc.send(`42["noack"]`)
	rc.send(`420["sum",40,2]`)
	if a := rc.read(); a != `430[42]` {
		t.Fatalf("ack %q, want 430[42] (an event without an id gets no ack)", a)
	}
	// Server to client: the client answers with the id it was given.
	if err := server.EmitWithAck("question", func(args []json.RawMessage) { got <- args }, "how many?"); err != nil {
		t.Fatal(err)
	}
	q := rc.read()
	if !strings.HasPrefix(q, "42") || !strings.HasSuffix(q, `["question","how many?"]`) {
		t.Fatalf("question %q", q)
	}
	id := strings.TrimSuffix(strings.TrimPrefix(q, "42"), `["question","how many?"]`)
	if id == "" {
		t.Fatalf("question %q carries no ack id", q)
	}
	// An answer with an unknown id is ignored.
	rc.send(`43999["stray"]`)
	rc.send(`43` + id + `["forty-two",{"x":1}]`)
	select {
	case args := <-got:
		if len(args) != 2 || string(args[0]) != `"forty-two"` || string(args[1]) != `{"x":1}` {
			t.Fatalf("ack args %s", args)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("ack callback not called")
	}
	rc.roundTrip("after-acks")
}

func TestUnknownNamespace(t *testing.T) {
	s := startServer(t, Options{})
	echo(s)
	rc, _ := dial(t, s)
	rc.send("40/admin,")
	if got := rc.read(); got != `44/admin,{"message":"Invalid namespace"}` {
		t.Fatalf("unknown namespace answer %q", got)
	}
	rc.send(`40/admin,{"token":1}`)
	if got := rc.read(); got != `44/admin,{"message":"Invalid namespace"}` {
		t.Fatalf("unknown namespace answer %q", got)
	}
	rc.send("40")
	if got := rc.read(); !strings.HasPrefix(got, "40{") {
		t.Fatalf("main namespace answer %q", got)
	}
	rc.roundTrip("main")
}

func TestPingPong(t *testing.T) {
	reason := make(chan string, 2)
	s := startServer(t, Options{PingInterval: 50 * time.Millisecond, PingTimeout: 500 * time.Millisecond,
		OnDisconnect: func(_ *Socket, r string) { reason <- r }})
	echo(s)
	// A client that answers stays: it answers five pings meanwhile.
	good, _ := connect(t, s)
	answered := make(chan error, 1)
	go func() {
		for n := 0; n < 5; {
			msg, err := good.next(10 * time.Second)
			if err != nil {
				answered <- err
				return
			}
			if msg == "2" {
				ctx, cancel := contextWithTimeout(10 * time.Second)
				err = good.c.Write(ctx, websocket.MessageText, []byte("3"))
				cancel()
				if err != nil {
					answered <- err
					return
				}
				n++
			}
		}
		answered <- nil
	}()
	// A client that does not answer is closed after PingTimeout.
	bad, _ := connect(t, s)
	var pings int
	for {
		msg, err := bad.next(10 * time.Second)
		if err != nil {
			break
		}
		if msg != "2" {
			t.Fatalf("unexpected %q", msg)
		}
		pings++
	}
	if pings != 1 {
		t.Fatalf("%d pings before the close, want 1", pings)
	}
	if r := <-reason; r != "ping timeout" {
		t.Fatalf("reason %q", r)
	}
	if err := <-answered; err != nil {
		t.Fatalf("the answering client: %v", err)
	}
	good.roundTrip("alive")
}

func TestConnectTimeout(t *testing.T) {
	s := startServer(t, Options{ConnectTimeout: 100 * time.Millisecond})
	rc, _ := dial(t, s)
	if code, msgs := rc.closed(); code != websocket.StatusPolicyViolation || len(msgs) != 0 {
		t.Fatalf("close %v after %q, want policy violation", code, msgs)
	}
}

func TestBadInputClosesOnlyThatSocket(t *testing.T) {
	big := `42["echo","` + strings.Repeat("x", 5000) + `"]`
	cases := []struct {
		name    string
		connect bool
		typ     websocket.MessageType
		msg     string
		code    websocket.StatusCode
	}{
		{"malformed JSON", true, websocket.MessageText, `42["echo",`, websocket.StatusProtocolError},
		{"trailing garbage", true, websocket.MessageText, `42["echo"]x`, websocket.StatusProtocolError},
		{"not an array", true, websocket.MessageText, `42{"echo":1}`, websocket.StatusProtocolError},
		{"empty array", true, websocket.MessageText, `42[]`, websocket.StatusProtocolError},
		{"name not a string", true, websocket.MessageText, `42[{"a":1}]`, websocket.StatusProtocolError},
		{"reserved name", true, websocket.MessageText, `42["disconnect"]`, websocket.StatusProtocolError},
		{"ack without id", true, websocket.MessageText, `43[1]`, websocket.StatusProtocolError},
		{"ack id too long", true, websocket.MessageText, `421234567890123456["echo"]`, websocket.StatusProtocolError},
		{"disconnect with payload", true, websocket.MessageText, `41{}`, websocket.StatusProtocolError},
		{"connect error from client", true, websocket.MessageText, `44{"message":"x"}`, websocket.StatusProtocolError},
		{"unknown Engine.IO type", true, websocket.MessageText, `9hello`, websocket.StatusProtocolError},
		{"Engine.IO open from client", true, websocket.MessageText, `0{}`, websocket.StatusProtocolError},
		{"unknown Socket.IO type", true, websocket.MessageText, `47["echo"]`, websocket.StatusProtocolError},
		{"empty Socket.IO packet", true, websocket.MessageText, `4`, websocket.StatusProtocolError},
		{"empty message", true, websocket.MessageText, ``, websocket.StatusProtocolError},
		{"binary event", true, websocket.MessageText, `451-["echo",{"_placeholder":true,"num":0}]`, websocket.StatusUnsupportedData},
		{"binary ack", true, websocket.MessageText, `461-0[{"_placeholder":true,"num":0}]`, websocket.StatusUnsupportedData},
		{"binary websocket message", true, websocket.MessageBinary, "\x04abc", websocket.StatusUnsupportedData},
		{"oversized message", true, websocket.MessageText, big, websocket.StatusMessageTooBig},
		{"event before connect", false, websocket.MessageText, `42["echo","x"]`, websocket.StatusProtocolError},
		{"second connect", true, websocket.MessageText, `40`, websocket.StatusProtocolError},
		{"event for an unconnected namespace", true, websocket.MessageText, `42/admin,["echo"]`, websocket.StatusProtocolError},
		{"bad connect payload", false, websocket.MessageText, `40[1]`, websocket.StatusProtocolError},
	}
	s := startServer(t, Options{MaxMessageBytes: 4096})
	echo(s)
	other, _ := connect(t, s)
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			var rc *rawClient
			if tc.connect {
				rc, _ = connect(t, s)
			} else {
				rc, _ = dial(t, s)
			}
			rc.sendType(tc.typ, []byte(tc.msg))
			code, msgs := rc.closed()
			if code != tc.code || len(msgs) != 0 {
				t.Fatalf("close status %v after %q, want %v", code, msgs, tc.code)
			}
			other.t = t
			other.roundTrip(tc.name)
		})
	}
	testkit.WaitFor(t, "only the good socket left", func() bool { return s.Len() == 1 })
}

func TestHandlerPanicClosesOnlyThatSocket(t *testing.T) {
	s := startServer(t, Options{})
	echo(s)
	s.On("boom", func(*Socket, []json.RawMessage, func(...any)) { panic("boom") })
	other, _ := connect(t, s)
	rc, _ := connect(t, s)
	rc.send(`42["boom"]`)
	if code, _ := rc.closed(); code != websocket.StatusInternalError {
		t.Fatalf("close %v, want internal error", code)
	}
	other.roundTrip("after-panic")
}

func TestServerDisconnect(t *testing.T) {
	var so *Socket
	ready := make(chan struct{})
	s := startServer(t, Options{OnConnect: func(x *Socket) error { so = x; close(ready); return nil }})
	rc, _ := connect(t, s)
	<-ready
	so.Emit("bye", "now")
	so.Disconnect()
	code, msgs := rc.closed()
	if code != websocket.StatusNormalClosure || strings.Join(msgs, "|") != `42["bye","now"]|41` {
		t.Fatalf("close %v after %q, want the queued event, 41 and a normal closure", code, msgs)
	}
	<-so.Done()
	if err := so.Emit("late"); err != ErrClosed {
		t.Fatalf("emit after close: %v, want ErrClosed", err)
	}
	if err := so.EmitWithAck("late", func([]json.RawMessage) {}); err != ErrClosed {
		t.Fatalf("emit with ack after close: %v, want ErrClosed", err)
	}
	so.Disconnect() // a no-op
}

func TestOnConnectError(t *testing.T) {
	s := startServer(t, Options{OnConnect: func(*Socket) error { return io.EOF }})
	rc, _ := connect(t, s)
	if code, msgs := rc.closed(); code != websocket.StatusNormalClosure || strings.Join(msgs, "|") != "41" {
		t.Fatalf("close %v after %q", code, msgs)
	}
}

func TestSocketCap(t *testing.T) {
	s := startServer(t, Options{MaxSockets: 2, MaxUnauthenticatedPerAddr: 3})
	echo(s)
	a, _ := connect(t, s)
	connect(t, s)
	r := testkit.Do(t, nil, "GET", s.ts.URL+"/socket.io/?EIO=4&transport=websocket", nil,
		"Connection", "Upgrade", "Upgrade", "websocket", "Sec-WebSocket-Version", "13", "Sec-WebSocket-Key", "dGhlIHNhbXBsZSBub25jZQ==")
	if r.Status != http.StatusServiceUnavailable || !strings.Contains(string(r.Body), "Too many connections") {
		t.Fatalf("third handshake: %d %s, want 503", r.Status, r.Body)
	}
	a.roundTrip("still-served")
	a.send("41")
	a.closed()
	testkit.WaitFor(t, "a slot to free", func() bool { return s.Len() == 1 })
	c, _ := connect(t, s)
	c.roundTrip("third")
}

func TestShutdown(t *testing.T) {
	s := startServer(t, Options{})
	echo(s)
	clients := []*rawClient{}
	for range 3 {
		rc, _ := connect(t, s)
		clients = append(clients, rc)
	}
	notConnected, _ := dial(t, s)
	clients = append(clients, notConnected)
	// Real clients read all the time, so they answer the close handshake.
	type result struct {
		code websocket.StatusCode
		msgs string
	}
	results := make([]chan result, len(clients))
	for i, rc := range clients {
		results[i] = make(chan result, 1)
		go func() {
			var msgs []string
			for {
				msg, err := rc.next(10 * time.Second)
				if err != nil {
					results[i] <- result{websocket.CloseStatus(err), strings.Join(msgs, "|")}
					return
				}
				msgs = append(msgs, msg)
			}
		}()
	}
	ctx, cancel := contextWithTimeout(10 * time.Second)
	defer cancel()
	if err := s.Shutdown(ctx); err != nil {
		t.Fatalf("shutdown: %v", err)
	}
	for i := range clients {
		want := result{websocket.StatusGoingAway, "41"}
		if i == len(clients)-1 {
			want.msgs = "" // never connected to the namespace
		}
		if got := <-results[i]; got != want {
			t.Fatalf("client %d: %+v, want %+v", i, got, want)
		}
	}
	if s.Len() != 0 {
		t.Fatalf("%d sockets after shutdown", s.Len())
	}
	r := testkit.Do(t, nil, "GET", s.ts.URL+"/socket.io/?EIO=4&transport=websocket", nil,
		"Connection", "Upgrade", "Upgrade", "websocket", "Sec-WebSocket-Version", "13", "Sec-WebSocket-Key", "dGhlIHNhbXBsZSBub25jZQ==")
	if r.Status != http.StatusServiceUnavailable {
		t.Fatalf("handshake after shutdown: %d", r.Status)
	}
}

// TestShutdownLeavesNoSocketListed: when Shutdown returns, no socket is
// listed any more, whichever transport it had. A socket used to give back
// its handshake's count (which Shutdown waits for) before it left the
// list, so Len could still count it right after Shutdown returned; the
// window is narrow, hence the rounds.
func TestShutdownLeavesNoSocketListed(t *testing.T) {
	for round := range 20 {
		s := startServer(t, Options{})
		echo(s)
		rc, _ := connect(t, s)
		go func() { // reads, so it answers the close handshake
			for {
				if _, err := rc.next(10 * time.Second); err != nil {
					return
				}
			}
		}()
		pc := pollOpen(t, s)
		go func() { // a long poll, as a polling client always has
			if resp, err := http.Get(s.pollURL("sid=" + pc.sid)); err == nil {
				io.Copy(io.Discard, resp.Body)
				resp.Body.Close()
			}
		}()
		if n := s.Len(); n != 2 {
			t.Fatalf("round %d: %d sockets before shutdown, want 2", round, n)
		}
		ctx, cancel := contextWithTimeout(10 * time.Second)
		err := s.Shutdown(ctx)
		cancel()
		if err != nil {
			t.Fatalf("round %d: shutdown: %v", round, err)
		}
		if n, l := s.Len(), len(s.Sockets()); n != 0 || l != 0 {
			t.Fatalf("round %d: Len %d, Sockets %d after shutdown", round, n, l)
		}
	}
}

// TestShutdownCutsOffUnresponsive: a client that never answers the close
// handshake is cut off when the context ends.
func TestShutdownCutsOffUnresponsive(t *testing.T) {
	s := startServer(t, Options{})
	connect(t, s) // never reads again, never answers the close
	ctx, cancel := contextWithTimeout(200 * time.Millisecond)
	defer cancel()
	start := time.Now()
	s.Shutdown(ctx)
	if s.Len() != 0 {
		t.Fatalf("%d sockets after shutdown", s.Len())
	}
	if d := time.Since(start); d > 4*time.Second {
		t.Fatalf("shutdown took %v", d)
	}
}
