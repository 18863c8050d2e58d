package socketio

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/coder/websocket"

	"outpost/internal/testkit"
)

// pollClient speaks Engine.IO's long-polling transport over plain HTTP.
type pollClient struct {
	t    *testing.T
	s    *testServer
	sid  string
	open map[string]any
}

func (s *testServer) pollURL(query string) string {
	return s.ts.URL + "/socket.io/?EIO=4&transport=polling&" + query
}

// pollOpen makes the polling handshake.
func pollOpen(t *testing.T, s *testServer) *pollClient {
	t.Helper()
	r := testkit.Do(t, nil, "GET", s.pollURL("t=1"), nil, "Origin", "http://ui.example.org")
	body := string(r.Body)
	if r.Status != 200 || !strings.HasPrefix(body, "0{") {
		t.Fatalf("polling handshake: %d %q", r.Status, body)
	}
	if got := r.Header.Get("Access-Control-Allow-Origin"); got != "*" {
		t.Fatalf("Access-Control-Allow-Origin %q", got)
	}
	pc := &pollClient{t: t, s: s}
	if err := json.Unmarshal([]byte(body[1:]), &pc.open); err != nil {
		t.Fatal(err)
	}
	pc.sid, _ = pc.open["sid"].(string)
	return pc
}

// post sends packets in one POST and returns the status.
func (pc *pollClient) post(packets ...string) int {
	pc.t.Helper()
	r := testkit.Do(pc.t, nil, "POST", pc.s.pollURL("sid="+pc.sid), strings.Join(packets, "\x1e"),
		"Content-Type", "text/plain;charset=UTF-8")
	if r.Status == 200 && string(r.Body) != "ok" {
		pc.t.Fatalf("POST answered %q", r.Body)
	}
	return r.Status
}

// get makes one long poll and returns its packets (pings answered by a
// POST, and left out).
func (pc *pollClient) get() []string {
	pc.t.Helper()
	for {
		req, _ := http.NewRequest("GET", pc.s.pollURL("sid="+pc.sid), nil)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			pc.t.Fatal(err)
		}
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != 200 {
			pc.t.Fatalf("GET: %d %s", resp.StatusCode, b)
		}
		var out []string
		for _, p := range bytes.Split(b, []byte{0x1e}) {
			if string(p) == "2" {
				pc.post("3")
				continue
			}
			out = append(out, string(p))
		}
		if len(out) > 0 {
			return out
		}
	}
}

func TestPollingSession(t *testing.T) {
	s := startServer(t, Options{PingInterval: 300 * time.Millisecond, PingTimeout: 2 * time.Second})
	echo(s)
	pc := pollOpen(t, s)
	if up, _ := pc.open["upgrades"].([]any); len(up) != 1 || up[0] != "websocket" {
		t.Fatalf("upgrades %v", pc.open["upgrades"])
	}
	if st := pc.post("40"); st != 200 {
		t.Fatalf("connect POST: %d", st)
	}
	if got := pc.get(); len(got) != 1 || !strings.HasPrefix(got[0], "40{\"sid\"") {
		t.Fatalf("connect answer %q", got)
	}
	// Two events in one POST, answered in one GET (or two), in order; the
	// heartbeat runs over polling meanwhile (get answers the pings).
	pc.post(`42["echo","a"]`, `42["echo","b"]`)
	var got []string
	for len(got) < 2 {
		got = append(got, pc.get()...)
	}
	if strings.Join(got, "|") != `42["echoed","a"]|42["echoed","b"]` {
		t.Fatalf("answers %q", got)
	}
	time.Sleep(time.Second) // three ping intervals, answered
	pc.post(`42["echo","c"]`)
	if got := pc.get(); strings.Join(got, "|") != `42["echoed","c"]` {
		t.Fatalf("after pings: %q", got)
	}
	// The client closes: the session is gone.
	pc.post("1")
	testkit.WaitFor(t, "the session to end", func() bool { return s.Len() == 0 })
	r := testkit.Do(t, nil, "GET", s.pollURL("sid="+pc.sid), nil)
	if r.Status != 400 || !strings.Contains(string(r.Body), "Session ID unknown") {
		t.Fatalf("GET after close: %d %s", r.Status, r.Body)
	}
}

func TestPollingUpgrade(t *testing.T) {
	s := startServer(t, Options{})
	echo(s)
	var sock *Socket
	s.opts.OnConnect = func(so *Socket) error { sock = so; return nil }
	pc := pollOpen(t, s)
	pc.post("40")
	pc.get()
	// A long poll waits; the probe ends it with a noop.
	polled := make(chan []string, 1)
	go func() {
		req, _ := http.NewRequest("GET", s.pollURL("sid="+pc.sid), nil)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			polled <- []string{err.Error()}
			return
		}
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		polled <- strings.Split(string(b), "\x1e")
	}()
	testkit.WaitFor(t, "the poll to wait", func() bool { return sock.poll.getting.Load() })
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	c, _, err := websocket.Dial(ctx, s.wsURL("sid="+pc.sid), nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.CloseNow() })
	rc := &rawClient{t: t, c: c}
	rc.send("2probe")
	if got := rc.read(); got != "3probe" {
		t.Fatalf("probe answer %q", got)
	}
	if got := <-polled; strings.Join(got, "|") != "6" {
		t.Fatalf("the waiting poll got %q, want a noop", got)
	}
	// Emitted before "5": queued for polling, then sent on the websocket.
	sock.Emit("early", "x")
	rc.send("5")
	if got := rc.read(); got != `42["early","x"]` {
		t.Fatalf("first on the websocket: %q", got)
	}
	rc.roundTrip("over-ws")
	// The polling transport is done with.
	if st := pc.post(`42["echo","late"]`); st != 400 {
		t.Fatalf("POST after the upgrade: %d", st)
	}
	rc.roundTrip("still")
	if s.Len() != 1 {
		t.Fatalf("%d sockets", s.Len())
	}
	c.Close(websocket.StatusNormalClosure, "")
	testkit.WaitFor(t, "the socket to end", func() bool { return s.Len() == 0 })
}

func TestPollingBadInput(t *testing.T) {
	s := startServer(t, Options{MaxMessageBytes: 1024})
	echo(s)
	t.Run("oversized POST", func(t *testing.T) {
		pc := pollOpen(t, s)
		if st := pc.post(strings.Repeat("x", 2000)); st != http.StatusRequestEntityTooLarge {
			t.Fatalf("oversized POST: %d", st)
		}
		testkit.WaitFor(t, "the session to end", func() bool { return s.pollingSocket(pc.sid) == nil })
	})
	t.Run("malformed packet", func(t *testing.T) {
		pc := pollOpen(t, s)
		pc.post("40")
		pc.get()
		pc.post(`42["echo"`)
		testkit.WaitFor(t, "the session to end", func() bool { return s.pollingSocket(pc.sid) == nil })
	})
	t.Run("binary packet", func(t *testing.T) {
		pc := pollOpen(t, s)
		pc.post("bAAEC")
		testkit.WaitFor(t, "the session to end", func() bool { return s.pollingSocket(pc.sid) == nil })
	})
	t.Run("bad probe", func(t *testing.T) {
		pc := pollOpen(t, s)
		pc.post("40")
		pc.get()
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		c, _, err := websocket.Dial(ctx, s.wsURL("sid="+pc.sid), nil)
		if err != nil {
			t.Fatal(err)
		}
		defer c.CloseNow()
		c.Write(ctx, websocket.MessageText, []byte("hello"))
		if _, _, err := c.Read(ctx); err == nil {
			t.Fatal("a websocket without the probe was kept")
		}
		// The polling session goes on.
		pc.post(`42["echo","on"]`)
		if got := pc.get(); strings.Join(got, "|") != `42["echoed","on"]` {
			t.Fatalf("after a failed upgrade: %q", got)
		}
	})
	t.Run("origin not allowed", func(t *testing.T) {
		s := startServer(t, Options{OriginPatterns: []string{"ui.example.org"}})
		r := testkit.Do(t, nil, "GET", s.pollURL("t=1"), nil, "Origin", "http://evil.example.net")
		if r.Status != http.StatusForbidden {
			t.Fatalf("foreign origin: %d %s", r.Status, r.Body)
		}
		r = testkit.Do(t, nil, "GET", s.pollURL("t=1"), nil, "Origin", "http://ui.example.org")
		if r.Status != 200 || r.Header.Get("Access-Control-Allow-Origin") != "http://ui.example.org" {
			t.Fatalf("allowed origin: %d %v", r.Status, r.Header)
		}
	})
}

// A polling client that never authenticates is closed at the deadline
// and gives its slot back; a client that stops polling is dropped.
func TestPollingDeadlines(t *testing.T) {
	s := startServer(t, Options{AuthTimeout: 300 * time.Millisecond, MaxSockets: 2, MaxUnauthenticatedPerAddr: 2})
	pc := pollOpen(t, s)
	pc.post("40")
	pc.get()
	got := pc.get() // the disconnect, then the close
	for got[len(got)-1] != "1" {
		got = append(got, pc.get()...)
	}
	if strings.Join(got, "|") != "41|1" {
		t.Fatalf("at the authentication deadline: %q", got)
	}
	testkit.WaitFor(t, "the slot to be given back", func() bool { return s.Len() == 0 })
	pollOpen(t, s)
	pollOpen(t, s)
	r := testkit.Do(t, nil, "GET", s.pollURL("t=2"), nil)
	if r.Status != http.StatusTooManyRequests && r.Status != http.StatusServiceUnavailable {
		t.Fatalf("a third session: %d %s", r.Status, r.Body)
	}
}
