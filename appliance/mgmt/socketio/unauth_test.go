package socketio

import (
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/coder/websocket"

	"outpost/internal/testkit"
)

// login registers "login", which marks the socket authenticated and
// acknowledges.
func login(s *testServer) {
	s.On("login", func(so *Socket, _ []json.RawMessage, ack func(...any)) {
		so.SetAuthenticated()
		ack(so.Authenticated())
	})
}

func (rc *rawClient) login() {
	rc.t.Helper()
	rc.send(`420["login"]`)
	if got := rc.read(); got != `430[true]` {
		rc.t.Fatalf("login answer %q", got)
	}
}

// TestAuthTimeout: a socket not marked authenticated within AuthTimeout
// is closed (connected: 41 first, then 1008; not connected: 1008 alone),
// not before the deadline; one that authenticated stays open past it.
func TestAuthTimeout(t *testing.T) {
	const deadline = time.Second
	reason := make(chan string, 4)
	var logs testkit.Buffer
	s := startServer(t, Options{AuthTimeout: deadline, OnDisconnect: func(_ *Socket, r string) { reason <- r },
		Logger: slog.New(slog.NewTextHandler(&logs, nil))})
	echo(s)
	login(s)
	start := time.Now()
	idle, _ := connect(t, s)
	handshaked, _ := dial(t, s)
	authed, _ := connect(t, s)
	authed.login()

	code, msgs := idle.closed()
	if code != websocket.StatusPolicyViolation || strings.Join(msgs, "|") != "41" {
		t.Fatalf("idle connected socket: close %v after %q, want 41 then policy violation", code, msgs)
	}
	if d := time.Since(start); d < deadline {
		t.Fatalf("closed after %v, before the %v deadline", d, deadline)
	}
	if r := <-reason; r != "authentication timeout" {
		t.Fatalf("reason %q", r)
	}
	if code, msgs := handshaked.closed(); code != websocket.StatusPolicyViolation || len(msgs) != 0 {
		t.Fatalf("socket that never connected: close %v after %q", code, msgs)
	}
	if n := strings.Count(logs.String(), "socket.io client did not authenticate in time"); n != 2 {
		t.Fatalf("%d log lines for 2 sockets closed at the deadline:\n%s", n, logs.String())
	}
	time.Sleep(deadline) // well past the deadline of the authenticated socket
	authed.roundTrip("still-here")
	// The two closed sockets leave the list once the server has finished
	// with them; the count only falls, and the round trip showed the
	// authenticated one is still served.
	testkit.WaitFor(t, "only the authenticated socket listed", func() bool { return s.Len() == 1 })
}

// TestAuthTimeoutCutsOffDeafClient: a client that reads nothing, so never
// answers the close handshake, is still gone within the deadline and the
// close grace, and its address's place is free again.
func TestAuthTimeoutCutsOffDeafClient(t *testing.T) {
	const deadline = 200 * time.Millisecond
	s := startServer(t, Options{AuthTimeout: deadline, MaxUnauthenticatedPerAddr: 1})
	c, _, err := s.open("127.0.5.1") // never reads, not even the open packet
	if err != nil {
		t.Fatal(err)
	}
	defer c.CloseNow()
	start := time.Now()
	// The dial returns on the server's 101, which comes before the server
	// lists the socket: wait for it to be listed before waiting for it to go.
	testkit.WaitFor(t, "the deaf socket listed", func() bool { return s.Len() == 1 })
	testkit.WaitFor(t, "the deaf socket cut off", func() bool { return s.Len() == 0 })
	if d := time.Since(start); d > deadline+closeGrace+2*time.Second {
		t.Fatalf("cut off after %v", d)
	}
	connectFrom(t, s, "127.0.5.1") // the address's place is free
}

// handshakeFrom is a handshake from src that the server must refuse; it
// returns the status, the Retry-After header and the Engine.IO error.
func handshakeFrom(t *testing.T, s *testServer, src string) (int, string, map[string]any) {
	t.Helper()
	c, resp, err := s.open(src)
	if err == nil {
		c.CloseNow()
		t.Fatalf("handshake from %s accepted, want a refusal", src)
	}
	if resp == nil {
		t.Fatalf("handshake from %s: %v, no answer", src, err)
	}
	body, _ := io.ReadAll(resp.Body)
	var m map[string]any
	if err := json.Unmarshal(body, &m); err != nil {
		t.Fatalf("refusal body %q is not Engine.IO's JSON error", body)
	}
	return resp.StatusCode, resp.Header.Get("Retry-After"), m
}

// TestUnauthenticatedPerAddr: one address holds at most
// MaxUnauthenticatedPerAddr sockets that have not authenticated; beyond,
// 429 with Retry-After and Engine.IO's error, taking no slot from other
// addresses; authenticated sockets do not count; a socket that leaves or
// authenticates frees its place.
func TestUnauthenticatedPerAddr(t *testing.T) {
	s := startServer(t, Options{MaxSockets: 6, MaxUnauthenticatedPerAddr: 2, AuthTimeout: time.Minute})
	echo(s)
	login(s)
	a1, _ := connectFrom(t, s, "127.0.5.1")
	dialFrom(t, s, "127.0.5.1") // a handshake alone counts too
	for range 20 {
		status, retry, e := handshakeFrom(t, s, "127.0.5.1")
		if status != http.StatusTooManyRequests || retry != "60" || e["code"] != 3.0 ||
			e["message"] != "Too many unauthenticated connections from this address" {
			t.Fatalf("over the per-address cap: %d Retry-After %q %v", status, retry, e)
		}
	}
	// The refusals took nothing: every other slot is still there for
	// other addresses (2 + 2 + 2 = MaxSockets).
	connectFrom(t, s, "127.0.6.1")
	b, _ := connectFrom(t, s, "127.0.6.1")
	b.login()
	connectFrom(t, s, "127.0.0.1")
	connectFrom(t, s, "127.0.0.1")
	if status, _, e := handshakeFrom(t, s, "127.0.7.1"); status != http.StatusServiceUnavailable || e["message"] != "Too many connections" {
		t.Fatalf("over MaxSockets: %d %v", status, e)
	}
	// An authenticated socket leaves its address's count: 127.0.6.1 may
	// open another unauthenticated one (the total is full, so it gets 503,
	// not 429), and 127.0.5.1 after authenticating one of its two.
	if status, _, _ := handshakeFrom(t, s, "127.0.6.1"); status != http.StatusServiceUnavailable {
		t.Fatalf("127.0.6.1 with one unauthenticated socket: %d, want 503 (total full)", status)
	}
	a1.login()
	if status, _, _ := handshakeFrom(t, s, "127.0.5.1"); status != http.StatusServiceUnavailable {
		t.Fatalf("127.0.5.1 after authenticating: %d, want 503 (total full)", status)
	}
	b.send("41")
	b.closed()
	testkit.WaitFor(t, "a slot to free", func() bool { return s.Len() == 5 })
	c, _ := connectFrom(t, s, "127.0.5.1")
	c.roundTrip("in")
	// Full again; the address cap is checked first.
	if status, _, _ := handshakeFrom(t, s, "127.0.5.1"); status != http.StatusTooManyRequests {
		t.Fatalf("127.0.5.1 at its cap again: %d, want 429", status)
	}
	if status, _, _ := handshakeFrom(t, s, "127.0.8.1"); status != http.StatusServiceUnavailable {
		t.Fatalf("another address with the total full: %d, want 503", status)
	}
}

func TestUnauthenticatedPerAddrDefault(t *testing.T) {
	for _, tc := range []struct{ sockets, want int }{{32, 4}, {64, 8}, {7, 1}, {0, DefaultMaxSockets / 8}} {
		srv := NewServer(Options{MaxSockets: tc.sockets, Logger: testkit.Discard()})
		if got := srv.opts.MaxUnauthenticatedPerAddr; got != tc.want {
			t.Errorf("MaxSockets %d: %d per address, want %d", tc.sockets, got, tc.want)
		}
	}
}
