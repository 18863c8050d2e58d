package socketio

import (
	"context"
	"encoding/json"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/coder/websocket"

	"outpost/internal/testkit"
)

// testServer is a Server behind a real HTTP listener on 127.0.0.1.
type testServer struct {
	*Server
	ts *httptest.Server
}

func startServer(t *testing.T, opts Options) *testServer {
	t.Helper()
	if opts.Logger == nil {
		opts.Logger = testkit.Logger(t)
	}
	srv := NewServer(opts)
	mux := http.NewServeMux()
	mux.Handle("/socket.io/", srv)
	ts := httptest.NewServer(mux)
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		srv.Shutdown(ctx)
		ts.Close()
	})
	return &testServer{Server: srv, ts: ts}
}

// wsURL is the Engine.IO websocket endpoint with extra query parameters.
func (s *testServer) wsURL(query string) string {
	u := "ws" + strings.TrimPrefix(s.ts.URL, "http") + "/socket.io/?EIO=4&transport=websocket"
	if query != "" {
		u += "&" + query
	}
	return u
}

// rawClient speaks raw Engine.IO frames over a real websocket.
type rawClient struct {
	t *testing.T
	c *websocket.Conn
}

// open opens a websocket to the server from the loopback address src
// ("": the system's choice), without reading anything.
func (s *testServer) open(src string) (*websocket.Conn, *http.Response, error) {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	var opts *websocket.DialOptions
	if src != "" {
		opts = &websocket.DialOptions{HTTPClient: &http.Client{Transport: &http.Transport{
			DisableKeepAlives: true,
			DialContext: func(_ context.Context, _, addr string) (net.Conn, error) {
				return testkit.DialFrom(src, addr)
			},
		}}}
	}
	return websocket.Dial(ctx, s.wsURL(""), opts)
}

// dial opens a websocket to the server and reads the open packet.
func dial(t *testing.T, s *testServer) (*rawClient, map[string]any) { return dialFrom(t, s, "") }

// dialFrom is dial from the loopback address src.
func dialFrom(t *testing.T, s *testServer, src string) (*rawClient, map[string]any) {
	t.Helper()
	c, resp, err := s.open(src)
	if err != nil {
		status := 0
		if resp != nil {
			status = resp.StatusCode
		}
		t.Fatalf("dial: %v (status %d)", err, status)
	}
	c.SetReadLimit(-1)
	rc := &rawClient{t: t, c: c}
	t.Cleanup(func() { c.CloseNow() })
	open := rc.read()
	if !strings.HasPrefix(open, "0{") {
		t.Fatalf("first message %q is not an open packet", open)
	}
	var m map[string]any
	if err := json.Unmarshal([]byte(open[1:]), &m); err != nil {
		t.Fatalf("open packet %q: %v", open, err)
	}
	return rc, m
}

// connect dials and connects to the main namespace; it returns the
// socket id of the connect answer.
func connect(t *testing.T, s *testServer) (*rawClient, string) { return connectFrom(t, s, "") }

// connectFrom is connect from the loopback address src.
func connectFrom(t *testing.T, s *testServer, src string) (*rawClient, string) {
	t.Helper()
	rc, _ := dialFrom(t, s, src)
	rc.send("40")
	ans := rc.read()
	var m struct {
		SID string `json:"sid"`
	}
	if !strings.HasPrefix(ans, "40{") || json.Unmarshal([]byte(ans[2:]), &m) != nil || m.SID == "" {
		t.Fatalf("connect answer %q, want 40{\"sid\":...}", ans)
	}
	return rc, m.SID
}

func (rc *rawClient) send(msg string) {
	rc.t.Helper()
	rc.sendType(websocket.MessageText, []byte(msg))
}

func (rc *rawClient) sendType(typ websocket.MessageType, msg []byte) {
	rc.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := rc.c.Write(ctx, typ, msg); err != nil {
		rc.t.Fatalf("write %.40q: %v", msg, err)
	}
}

// read returns the next message that is not a ping (pings are answered).
func (rc *rawClient) read() string {
	rc.t.Helper()
	for {
		msg, err := rc.next(10 * time.Second)
		if err != nil {
			rc.t.Fatalf("read: %v", err)
		}
		if msg == "2" {
			rc.send("3")
			continue
		}
		return msg
	}
}

func (rc *rawClient) next(d time.Duration) (string, error) {
	ctx, cancel := context.WithTimeout(context.Background(), d)
	defer cancel()
	_, b, err := rc.c.Read(ctx)
	return string(b), err
}

// closed reads until the connection ends and returns the close status
// (-1 when it ended without a close frame) and the messages before it.
func (rc *rawClient) closed() (websocket.StatusCode, []string) {
	rc.t.Helper()
	var msgs []string
	for {
		msg, err := rc.next(10 * time.Second)
		if err != nil {
			if errorsIsDeadline(err) {
				rc.t.Fatalf("connection still open after %v; got %q", 10*time.Second, msgs)
			}
			return websocket.CloseStatus(err), msgs
		}
		msgs = append(msgs, msg)
	}
}

func errorsIsDeadline(err error) bool {
	return strings.Contains(err.Error(), context.DeadlineExceeded.Error())
}

// echo registers "echo", which emits "echoed" with the same arguments.
func echo(s *testServer) {
	s.On("echo", func(so *Socket, args []json.RawMessage, ack func(...any)) {
		out := make([]any, len(args))
		for i, a := range args {
			out[i] = a
		}
		so.Emit("echoed", out...)
	})
}

// roundTrip checks that a connected client still gets answers.
func (rc *rawClient) roundTrip(tag string) {
	rc.t.Helper()
	rc.send(`42["echo","` + tag + `"]`)
	if got, want := rc.read(), `42["echoed","`+tag+`"]`; got != want {
		rc.t.Fatalf("echo answer %q, want %q", got, want)
	}
}

func contextWithTimeout(d time.Duration) (context.Context, context.CancelFunc) {
	return context.WithTimeout(context.Background(), d)
}
