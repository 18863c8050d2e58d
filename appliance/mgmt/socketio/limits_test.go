package socketio

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/coder/websocket"

	"outpost/internal/testkit"
)

// TestSlowReaderDropped: a client that stops reading is dropped once its
// queue is full; broadcasts never wait for it and other clients keep
// receiving.
func TestSlowReaderDropped(t *testing.T) {
	reason := make(chan string, 1)
	s := startServer(t, Options{QueueLen: 4, WriteTimeout: 2 * time.Second,
		OnDisconnect: func(_ *Socket, r string) { reason <- r }})
	echo(s)
	stuck, stuckID := connect(t, s) // never reads again
	_ = stuck
	good, _ := connect(t, s)
	chunk := strings.Repeat("x", 64<<10)
	toStuck := func(so *Socket) bool { return so.ID() == stuckID }
	dropped := false
	for i := 0; i < 10000 && !dropped; i++ {
		s.Broadcast(toStuck, "bulk", chunk)
		dropped = len(s.Sockets()) == 1
		if !dropped && i%50 == 49 {
			time.Sleep(10 * time.Millisecond) // let the writer fill the socket buffers
		}
	}
	if !dropped {
		t.Fatal("the client that does not read was never dropped")
	}
	if r := <-reason; r != "outbound queue full" && r != "write failed" {
		t.Fatalf("reason %q", r)
	}
	n, err := s.Broadcast(nil, "hello", "all")
	if err != nil || n != 1 {
		t.Fatalf("broadcast after the drop reached %d (%v), want 1", n, err)
	}
	if got := good.read(); got != `42["hello","all"]` {
		t.Fatalf("good client got %q", got)
	}
	good.roundTrip("unaffected")
}

func TestBroadcastFilterAndUnconnected(t *testing.T) {
	s := startServer(t, Options{})
	a, aID := connect(t, s)
	b, _ := connect(t, s)
	pending, _ := dial(t, s) // handshake done, namespace not connected
	n, _ := s.Broadcast(func(so *Socket) bool { return so.ID() != aID }, "only", "b")
	if n != 1 {
		t.Fatalf("filtered broadcast reached %d sockets, want 1", n)
	}
	n, _ = s.Broadcast(nil, "all", 1)
	if n != 2 {
		t.Fatalf("broadcast reached %d sockets, want the 2 connected ones", n)
	}
	if got := a.read(); got != `42["all",1]` {
		t.Fatalf("a got %q", got)
	}
	if got := b.read(); got != `42["only","b"]` {
		t.Fatalf("b got %q", got)
	}
	if got := b.read(); got != `42["all",1]` {
		t.Fatalf("b got %q", got)
	}
	if _, err := s.Broadcast(nil, "bad", func() {}); err == nil {
		t.Fatal("an argument that cannot be encoded was accepted")
	}
	pending.send("1")
	pending.closed()
}

func TestSocketState(t *testing.T) {
	got := make(chan any, 1)
	s := startServer(t, Options{OnConnect: func(so *Socket) error { so.Set("role", "admin"); return nil }})
	s.On("whoami", func(so *Socket, _ []json.RawMessage, ack func(...any)) {
		got <- so.Get("role")
		ack(so.Get("missing") == nil, so.Addr().String())
	})
	rc, _ := connect(t, s)
	rc.send(`421["whoami"]`)
	if a := rc.read(); a != `431[true,"127.0.0.1"]` {
		t.Fatalf("ack %q", a)
	}
	if v := <-got; v != "admin" {
		t.Fatalf("state %v", v)
	}
}

// TestNoGoroutineLeak: sessions of every kind (clean, refused, cut off,
// shut down) leave no goroutine behind.
func TestNoGoroutineLeak(t *testing.T) {
	before := runtime.NumGoroutine()
	func() {
		srv := NewServer(Options{Logger: testkit.Discard(), MaxSockets: 8, MaxUnauthenticatedPerAddr: 8, PingInterval: 200 * time.Millisecond, PingTimeout: 300 * time.Millisecond, MaxMessageBytes: 1024})
		echo(&testServer{Server: srv})
		mux := http.NewServeMux()
		mux.Handle("/socket.io/", srv)
		ts := httptest.NewServer(mux)
		defer ts.Close()
		s := &testServer{Server: srv, ts: ts}
		for i := range 5 {
			rc, _ := connect(t, s)
			rc.roundTrip("x")
			switch i {
			case 0:
				rc.send("41")
			case 1:
				rc.send(`42[`)
			case 2:
				rc.send(`42["` + strings.Repeat("y", 2000) + `"]`)
			case 3:
				rc.c.CloseNow()
				continue
			case 4:
				// stays silent: closed by the ping timeout
				testkit.WaitFor(t, "ping timeout", func() bool { return srv.Len() == 0 })
				continue
			}
			rc.closed()
		}
		for range 3 {
			connect(t, s)
		}
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		if err := srv.Shutdown(ctx); err != nil {
			t.Fatal(err)
		}
	}()
	http.DefaultClient.CloseIdleConnections()
	testkit.Client.CloseIdleConnections()
	testkit.WaitFor(t, "goroutines to end", func() bool { return runtime.NumGoroutine() <= before })
}

func TestClientHeartbeatPing(t *testing.T) {
	s := startServer(t, Options{})
	rc, _ := connect(t, s)
	rc.send("2probe")
	if got := rc.read(); got != "3probe" {
		t.Fatalf("ping answer %q", got)
	}
	rc.send("6") // noop
	rc.send("3") // an unasked pong
	rc.send(`42["x"]`)
	rc.c.Close(websocket.StatusNormalClosure, "")
}
