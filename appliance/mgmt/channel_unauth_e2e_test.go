package mgmt_test

import (
	"context"
	"encoding/json"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/coder/websocket"

	"outpost/appliance/config"
	"outpost/appliance/mgmt"
	"outpost/internal/testkit"
)

// ioClient speaks raw Engine.IO / Socket.IO to the appliance's channel.
type ioClient struct {
	t *testing.T
	c *websocket.Conn
}

// openChannel opens a websocket to the channel from the loopback address
// src, reading nothing.
func (e *env) openChannel(src string) (*websocket.Conn, *http.Response, error) {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	u := "ws" + strings.TrimPrefix(e.base, "http") + "/socket.io/?EIO=4&transport=websocket"
	return websocket.Dial(ctx, u, &websocket.DialOptions{HTTPClient: &http.Client{Transport: &http.Transport{
		DisableKeepAlives: true,
		DialContext: func(_ context.Context, _, addr string) (net.Conn, error) {
			return testkit.DialFrom(src, addr)
		},
	}}})
}

// channel is a socket from src connected to the namespace; it has not
// authenticated.
func (e *env) channel(t *testing.T, src string) *ioClient {
	t.Helper()
	ic, resp, err := e.tryChannel(t, src)
	if err != nil {
		status := 0
		if resp != nil {
			status = resp.StatusCode
		}
		t.Fatalf("channel handshake from %s: %d %v", src, status, err)
	}
	return ic
}

// tryChannel is channel returning a refused handshake's answer.
func (e *env) tryChannel(t *testing.T, src string) (*ioClient, *http.Response, error) {
	t.Helper()
	c, resp, err := e.openChannel(src)
	if err != nil {
		return nil, resp, err
	}
	t.Cleanup(func() { c.CloseNow() })
	ic := &ioClient{t: t, c: c}
	if open := ic.read(); !strings.HasPrefix(open, "0{") {
		t.Fatalf("open packet %q", open)
	}
	ic.send("40")
	if ans := ic.read(); !strings.HasPrefix(ans, "40{") {
		t.Fatalf("connect answer %q", ans)
	}
	ic.event("connectUpdate")
	return ic, resp, nil
}

func (ic *ioClient) send(msg string) {
	ic.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := ic.c.Write(ctx, websocket.MessageText, []byte(msg)); err != nil {
		ic.t.Fatalf("write: %v", err)
	}
}

// read returns the next message, answering pings.
func (ic *ioClient) read() string {
	ic.t.Helper()
	for {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		_, b, err := ic.c.Read(ctx)
		cancel()
		if err != nil {
			ic.t.Fatalf("read: %v", err)
		}
		if string(b) == "2" {
			ic.send("3")
			continue
		}
		return string(b)
	}
}

// event returns the payload of the next event called name, skipping
// pushes of other events.
func (ic *ioClient) event(name string) string {
	ic.t.Helper()
	for {
		msg := ic.read()
		var arr []json.RawMessage
		var got, payload string
		if !strings.HasPrefix(msg, "42") || json.Unmarshal([]byte(msg[2:]), &arr) != nil || len(arr) != 2 ||
			json.Unmarshal(arr[0], &got) != nil || json.Unmarshal(arr[1], &payload) != nil {
			ic.t.Fatalf("message %q is not an event with one string argument", msg)
		}
		if got == name {
			return payload
		}
	}
}

func (ic *ioClient) authenticate(key string) {
	ic.t.Helper()
	b, _ := json.Marshal([]string{"authenticate", `{"Authenticate":"` + key + `"}`})
	ic.send("42" + string(b))
	if ans := ic.event("authentication"); ans != `{"successful":"True"}` {
		ic.t.Fatalf("authentication %s", ans)
	}
}

// users asks for the client list: only an authenticated socket is answered.
func (ic *ioClient) users() {
	ic.t.Helper()
	ic.send(`42["users"]`)
	if p := ic.event("users"); !strings.HasPrefix(p, `{"Users":`) {
		ic.t.Fatalf("users %s", p)
	}
}

// idleSocket is a socket that never authenticates; its reader records
// when and how the server closed it.
type idleSocket struct {
	opened time.Time // before the handshake began, so before the server's deadline started
	done   chan struct{}
	closed time.Time
	code   websocket.StatusCode
	msgs   []string
}

func watchIdle(c *websocket.Conn, opened time.Time) *idleSocket {
	s := &idleSocket{opened: opened, done: make(chan struct{})}
	go func() {
		defer close(s.done)
		for {
			_, b, err := c.Read(context.Background())
			if err != nil {
				s.closed, s.code = time.Now(), websocket.CloseStatus(err)
				return
			}
			s.msgs = append(s.msgs, string(b))
		}
	}()
	return s
}

// TestChannelUnauthenticatedSockets: 40 sockets from one address that
// never authenticate hold only channelUnauthenticatedPerSource places (the
// rest get 429) and are closed at channelAuthTimeout; meanwhile an
// administrator from another address, and authenticated sockets from one
// address beyond that cap, handshake, authenticate and are served, and
// stay past the deadline. Bad handshakes get 400, never 500.
func TestChannelUnauthenticatedSockets(t *testing.T) {
	if config.MaxChannelUnauthenticatedPerSource*2 > mgmt.DefaultChannelSockets {
		t.Fatalf("channelUnauthenticatedPerSource may reach %d of the channel's %d sockets",
			config.MaxChannelUnauthenticatedPerSource, mgmt.DefaultChannelSockets)
	}
	const deadline = 3 * time.Second
	e := newEnv(t, func(c *config.Config) { c.ChannelAuthTimeout = deadline })
	perSource := e.app.Cfg.ChannelUnauthenticatedPerSource
	key := e.app.Cfg.WebsocketKey

	var idle []*idleSocket
	refused := 0
	for i := range 40 {
		// The server's deadline starts after it accepted the handshake, so
		// at least deadline after this instant (taken later, after the
		// client has seen the answer, the gap could be shorter).
		opened := time.Now()
		c, resp, err := e.openChannel("127.0.5.1")
		if err != nil {
			if resp == nil || resp.StatusCode != http.StatusTooManyRequests || resp.Header.Get("Retry-After") != "3" {
				t.Fatalf("handshake %d: %v %v", i, resp, err)
			}
			var je struct {
				Code    int    `json:"code"`
				Message string `json:"message"`
			}
			if json.NewDecoder(resp.Body).Decode(&je) != nil || je.Code != 3 || !strings.Contains(je.Message, "unauthenticated") {
				t.Fatalf("refusal body %+v", je)
			}
			refused++
			continue
		}
		t.Cleanup(func() { c.CloseNow() })
		if len(idle)%2 == 0 {
			// Half connect to the namespace, the others only handshake.
			c.Write(context.Background(), websocket.MessageText, []byte("40"))
		}
		idle = append(idle, watchIdle(c, opened))
	}
	if len(idle) != perSource || refused != 40-perSource {
		t.Fatalf("%d sockets accepted, %d refused; want %d accepted", len(idle), refused, perSource)
	}

	// Another address: the administrator gets in and is served.
	admin := e.channel(t, "127.0.0.1")
	admin.authenticate(key)
	admin.users()
	// One address with more authenticated sockets than the cap: they do
	// not count against it.
	var team []*ioClient
	for range perSource + 1 {
		ic := e.channel(t, "127.0.6.1")
		ic.authenticate(key)
		team = append(team, ic)
	}

	for i, s := range idle {
		select {
		case <-s.done:
		case <-time.After(deadline + 10*time.Second):
			t.Fatalf("idle socket %d still open", i)
		}
		if d := s.closed.Sub(s.opened); d < deadline || d > deadline+5*time.Second {
			t.Errorf("idle socket %d closed %v after its handshake began, deadline %v", i, d, deadline)
		}
		wantMsgs := 1 // the open packet
		if i%2 == 0 {
			wantMsgs = 4 // open, connect answer, connectUpdate, disconnect
		}
		if s.code != websocket.StatusPolicyViolation || len(s.msgs) != wantMsgs || (i%2 == 0 && s.msgs[3] != "41") {
			t.Errorf("idle socket %d: close %v after %q", i, s.code, s.msgs)
		}
	}
	// The refusals are logged, rate-limited: 36 refusals, at most 10 lines
	// (the channel's warnings share one budget; the unit tests of socketio
	// see the deadline's own line).
	if n := strings.Count(e.logs.String(), "too many unauthenticated sockets from this address"); n < 1 || n > 10 {
		t.Errorf("%d log lines for %d refused handshakes, want 1 to 10", n, refused)
	}

	// Past the deadline the authenticated sockets are still served, and
	// the address of the idle ones is free again.
	admin.users()
	for _, ic := range team {
		ic.users()
	}
	// (The server may let go of the last idle socket just after its client
	// saw the close.)
	var same *ioClient
	testkit.WaitFor(t, "a place for 127.0.5.1", func() bool {
		ic, resp, err := e.tryChannel(t, "127.0.5.1")
		if err != nil && (resp == nil || resp.StatusCode != http.StatusTooManyRequests) {
			t.Fatalf("handshake from 127.0.5.1 after the deadline: %v %v", resp, err)
		}
		same = ic
		return err == nil
	})
	same.authenticate(key)
	same.users()

	// Bad handshakes: a clear 400, never a 500.
	for _, q := range []string{"", "transport=websocket", "EIO=3&transport=websocket", "EIO=4&transport=polling&sid=x", "EIO=4&transport=websocket&sid=x"} {
		r := testkit.Do(t, nil, "GET", e.base+"/socket.io/?"+q, nil)
		if r.Status != http.StatusBadRequest {
			t.Errorf("handshake ?%s: %d %s", q, r.Status, r.Body)
		}
	}
	r := testkit.Do(t, nil, "GET", e.base+"/socket.io/?EIO=4&transport=websocket", nil) // no upgrade headers
	if r.Status >= 500 {
		t.Errorf("handshake without upgrade: %d %s", r.Status, r.Body)
	}
}
