package mgmt

import (
	"context"
	"encoding/json"
	"log/slog"
	"net/http/httptest"
	"runtime"
	"strings"
	"testing"
	"time"

	"outpost/appliance/logx"
	"outpost/internal/testkit"
)

// nextEvent reads events until one named name arrives (pushes of other
// kinds may come in between) and decodes its payload.
func (cc *chClient) nextEvent(name string, v any) {
	cc.t.Helper()
	deadline := time.Now().Add(testkit.WaitTimeout)
	for {
		if time.Now().After(deadline) {
			cc.t.Fatalf("no %s event within %v", name, testkit.WaitTimeout)
		}
		msg := cc.read()
		var arr []json.RawMessage
		var got, payload string
		if !strings.HasPrefix(msg, "42") || json.Unmarshal([]byte(msg[2:]), &arr) != nil || len(arr) != 2 ||
			json.Unmarshal(arr[0], &got) != nil || json.Unmarshal(arr[1], &payload) != nil {
			cc.t.Fatalf("message %q is not an event with one string argument", msg)
		}
		if got != name {
			continue
		}
		if err := json.Unmarshal([]byte(payload), v); err != nil {
			cc.t.Fatalf("%s payload %q: %v", name, payload, err)
		}
		return
	}
}

func TestChannelPushes(t *testing.T) {
	f := newChannelFixture(t, func(o *ChannelOptions) { o.HealthInterval = 50 * time.Millisecond })
	authed, _ := f.dial(t)
	if authed.authenticate(testKey) != "True" {
		t.Fatal("not authenticated")
	}
	// The socket counts as authenticated once its answer is queued; an
	// answered request proves that moment has passed.
	authed.emit("serviceInfo", nil)
	var info map[string]any
	authed.nextEvent("serviceInfo", &info)
	waiting, _ := f.dial(t) // connected, not authenticated

	// users: pushed when the broker's clients change.
	f.addClient("ANDROID-PUSH", "BRAVO")
	for range 1000 {
		f.ch.NotifyClientsChanged() // never blocks; merged
	}
	deadline := time.Now().Add(testkit.WaitTimeout)
	for pushed := false; !pushed; {
		if time.Now().After(deadline) {
			t.Fatal("no users push naming the new client")
		}
		var users usersPayload
		authed.nextEvent("users", &users)
		pushed = len(users.Users) == 1 && users.Users[0]["uid"] == "ANDROID-PUSH" && users.Users[0]["callsign"] == "BRAVO"
	}
	// logs: pushed as records are written.
	f.log.Error("disk almost full", "free", "1%")
	pushedLog := func() map[string]string {
		for time.Now().Before(deadline) {
			var logs logsPayload
			authed.nextEvent("logs", &logs)
			for _, l := range logs.LogData {
				if l["message"] == "disk almost full free=1%" {
					return l
				}
			}
		}
		t.Fatal("the log line was not pushed")
		return nil
	}
	if l := pushedLog(); l["type"] != "ERROR" {
		t.Fatalf("pushed log %v", l)
	}
	// serverHealth: pushed periodically.
	var health map[string]*float64
	authed.nextEvent("serverHealth", &health)
	if health["CPU"] == nil || health["memory"] == nil || health["disk"] == nil {
		t.Fatalf("pushed serverHealth %v", health)
	}
	// The unauthenticated socket got none of it: the first thing it
	// receives after asking is its authentication answer.
	if ok := waiting.authenticate(testKey); ok != "True" {
		t.Fatal("second socket not authenticated")
	}
}

// TestChannelFTSNames: every answer also goes out under the name
// FreeTAKServer's web UI listens for, with the same payload (chClient.event
// checks the twin); of the pushes, users and serverHealth do too, logs do
// not (the UI adds a table per logUpdate).
func TestChannelFTSNames(t *testing.T) {
	f := newChannelFixture(t, func(o *ChannelOptions) {
		o.HealthInterval = 50 * time.Millisecond
		o.Logger = testkit.Logger(t) // no log pushes but the test's
	})
	cc, _ := f.dial(t)
	cc.authenticate(testKey)
	for _, ev := range []string{"users", "logs", "serviceInfo", "serverHealth", "systemStatus"} {
		cc.emit(ev, nil)
		var v any
		cc.nextEvent(ev, &v)
		var twin any
		cc.nextEvent(ftsNames[ev], &twin)
	}
	// Pushes: serverHealth every 50 ms, a log line once. Within the next
	// pushes, serverHealthUpdate arrives and logUpdate never does.
	f.log.Warn("pushed line")
	seen := map[string]int{}
	for seen["serverHealthUpdate"] < 3 || seen["logs"] == 0 {
		name, _ := cc.stringEvent(cc.read())
		seen[name]++
	}
	if seen["logUpdate"] != 0 || seen["eventsUpdate"] != 0 {
		t.Fatalf("pushed under the web UI's names: %v", seen)
	}
}

func TestChannelShutdown(t *testing.T) {
	before := runtime.NumGoroutine()
	func() {
		tap := logx.NewTap(testkit.Discard().Handler(), 10)
		ch := NewChannel(ChannelOptions{WebsocketKey: testKey, Logs: tap, HealthInterval: 20 * time.Millisecond,
			DataDir: t.TempDir(), Logger: slog.New(tap)})
		ts := httptest.NewServer(ch)
		defer ts.Close()
		f := &channelFixture{ch: ch, ts: ts}
		a, _ := f.dial(t)
		a.authenticate(testKey)
		b, _ := f.dial(t)
		done := make(chan []string, 2)
		go func() { done <- a.closedNoFail() }()
		go func() { done <- b.closedNoFail() }()
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		if err := ch.Shutdown(ctx); err != nil {
			t.Fatal(err)
		}
		for range 2 {
			msgs := <-done
			if len(msgs) == 0 || msgs[len(msgs)-1] != "41" {
				t.Fatalf("before the close: %q, want a final 41", msgs)
			}
		}
		ch.NotifyClientsChanged() // after shutdown: a no-op
		if err := ch.Shutdown(ctx); err != nil {
			t.Fatalf("second shutdown: %v", err)
		}
	}()
	testkit.WaitFor(t, "goroutines to end", func() bool { return runtime.NumGoroutine() <= before })
}

// closedNoFail reads until the connection ends (for use off the test
// goroutine); pings are not answered.
func (cc *chClient) closedNoFail() []string {
	var msgs []string
	for {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		_, b, err := cc.c.Read(ctx)
		cancel()
		if err != nil {
			return msgs
		}
		msgs = append(msgs, string(b))
	}
}
