package mgmt

import (
	"context"
	"encoding/json"
	"log/slog"
	"net"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/coder/websocket"

	"outpost/appliance/broker"
	"outpost/appliance/cot"
	"outpost/appliance/logx"
	"outpost/internal/testkit"
)

const testKey = "ws-key-for-tests-0123456789"

// channelFixture is a channel behind a real HTTP listener, with a real
// broker, a live listener, a closed port and a log tap.
type channelFixture struct {
	ch       *Channel
	ts       *httptest.Server
	broker   *broker.Broker
	log      *slog.Logger // logs through the tap
	tap      *logx.Tap
	liveAddr string
	deadAddr string
}

func newChannelFixture(t *testing.T, mutate func(*ChannelOptions)) *channelFixture {
	t.Helper()
	f := &channelFixture{broker: broker.New(broker.Options{Logger: testkit.Discard()})}
	t.Cleanup(f.broker.Close)
	live, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { live.Close() })
	go func() {
		for {
			c, err := live.Accept()
			if err != nil {
				return
			}
			c.Close()
		}
	}()
	dead, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	f.liveAddr, f.deadAddr = live.Addr().String(), dead.Addr().String()
	dead.Close() // nothing listens there any more
	f.tap = logx.NewTap(testkit.Logger(t).Handler(), 100)
	f.log = slog.New(f.tap)
	opts := ChannelOptions{
		WebsocketKey: testKey,
		Clients:      f.broker.Clients,
		Services: func() []Service {
			return []Service{
				{Name: "TCP_CoT_service", Port: 8087, Addr: f.liveAddr},
				{Name: "SSL_CoT_service", Port: 8089, Addr: f.deadAddr},
				{Name: "Federation_server_service", Port: 9000},
			}
		},
		PublicHost: "tak.example.org",
		Version:    "9.8.7",
		StartTime:  time.Date(2026, 1, 2, 3, 4, 5, 600e6, time.UTC),
		DataDir:    t.TempDir(),
		Logs:       f.tap,
		Logger:     f.log.With("component", "socketio"),
	}
	if mutate != nil {
		mutate(&opts)
	}
	f.ch = NewChannel(opts)
	f.ts = httptest.NewServer(f.ch)
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		f.ch.Shutdown(ctx)
		f.ts.Close()
	})
	return f
}

// addClient joins a TAK client to the broker and identifies it with an SA.
func (f *channelFixture) addClient(uid, callsign string) {
	s := f.broker.Join(broker.SessionInfo{Addr: "10.1.2.3:4000", Listener: "cot-tcp"})
	now := time.Now().UTC()
	f.broker.Publish(&cot.Event{Version: "2.0", UID: uid, Type: "a-f-G-U-C", How: "m-g", Time: now, Start: now, Stale: now.Add(time.Minute),
		Detail: cot.Detail{
			XML:     []byte(`<contact callsign="` + callsign + `"/><__group name="Cyan" role="Team Lead"/>`),
			Contact: &cot.Contact{Callsign: callsign}, Group: &cot.Group{Name: "Cyan", Role: "Team Lead"},
		}}, s)
}

// chClient speaks raw Engine.IO to the channel.
type chClient struct {
	t *testing.T
	c *websocket.Conn
}

// dialChannel connects to the namespace and returns the client and its
// connectUpdate payload.
func (f *channelFixture) dial(t *testing.T) (*chClient, map[string]string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	u := "ws" + strings.TrimPrefix(f.ts.URL, "http") + "/socket.io/?EIO=4&transport=websocket"
	c, _, err := websocket.Dial(ctx, u, nil)
	if err != nil {
		t.Fatalf("dial: %v", err)
	}
	c.SetReadLimit(-1)
	t.Cleanup(func() { c.CloseNow() })
	cc := &chClient{t: t, c: c}
	if open := cc.read(); !strings.HasPrefix(open, "0{") {
		t.Fatalf("open packet %q", open)
	}
	cc.send("40")
	if ans := cc.read(); !strings.HasPrefix(ans, "40{") {
		t.Fatalf("connect answer %q", ans)
	}
	var hello map[string]string
	cc.event("connectUpdate", &hello)
	return cc, hello
}

func (cc *chClient) send(msg string) {
	cc.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := cc.c.Write(ctx, websocket.MessageText, []byte(msg)); err != nil {
		cc.t.Fatalf("write: %v", err)
	}
}

// emit sends an event whose argument is JSON text in a string, as
// FreeTAKServer's clients send it (no argument when payload is nil).
func (cc *chClient) emit(event string, payload any) {
	cc.t.Helper()
	args := []any{event}
	if payload != nil {
		j, _ := json.Marshal(payload)
		args = append(args, string(j))
	}
	b, _ := json.Marshal(args)
	cc.send("42" + string(b))
}

// read returns the next message, answering pings.
func (cc *chClient) read() string {
	cc.t.Helper()
	for {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		_, b, err := cc.c.Read(ctx)
		cancel()
		if err != nil {
			cc.t.Fatalf("read: %v", err)
		}
		if string(b) == "2" {
			cc.send("3")
			continue
		}
		return string(b)
	}
}

// event reads the next message, which must be the named event with one
// string argument holding JSON text, and decodes that into v. An answer
// with a FreeTAKServer twin must be followed by the twin, with the same
// payload.
func (cc *chClient) event(name string, v any) {
	cc.t.Helper()
	got, payload := cc.stringEvent(cc.read())
	if got != name {
		cc.t.Fatalf("got event %q (%s), want %q", got, payload, name)
	}
	if err := json.Unmarshal([]byte(payload), v); err != nil {
		cc.t.Fatalf("%s payload %q: %v", name, payload, err)
	}
	if twin := ftsNames[name]; twin != "" {
		if n, p := cc.stringEvent(cc.read()); n != twin || p != payload {
			cc.t.Fatalf("after %s %s: %s %s, want its twin %s with the same payload", name, payload, n, p, twin)
		}
	}
}

// stringEvent splits an event message with one string argument.
func (cc *chClient) stringEvent(msg string) (name, payload string) {
	cc.t.Helper()
	var arr []json.RawMessage
	if !strings.HasPrefix(msg, "42") || json.Unmarshal([]byte(msg[2:]), &arr) != nil || len(arr) != 2 ||
		json.Unmarshal(arr[0], &name) != nil || json.Unmarshal(arr[1], &payload) != nil {
		cc.t.Fatalf("message %q is not an event with one string argument", msg)
	}
	return name, payload
}

// closed reads until the connection ends; it returns what came first.
func (cc *chClient) closed() []string {
	cc.t.Helper()
	var msgs []string
	for {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		_, b, err := cc.c.Read(ctx)
		cancel()
		if err != nil {
			if ctx.Err() == context.DeadlineExceeded {
				cc.t.Fatalf("connection still open; got %q", msgs)
			}
			return msgs
		}
		msgs = append(msgs, string(b))
	}
}

func (cc *chClient) authenticate(key string) string {
	cc.t.Helper()
	cc.emit("authenticate", map[string]string{"Authenticate": key})
	var ans map[string]string
	cc.event("authentication", &ans)
	return ans["successful"]
}

type usersPayload struct {
	Users []map[string]string `json:"Users"`
}

type logsPayload struct {
	LogData []map[string]string `json:"log_data"`
}

func TestChannelEvents(t *testing.T) {
	// The channel's own lines stay out of the tap here, so the only
	// records are the test's.
	f := newChannelFixture(t, func(o *ChannelOptions) { o.HealthInterval = -1; o.Logger = testkit.Logger(t) })
	f.addClient("ANDROID-1", "ALPHA")
	f.log.Info("first line", "n", 1)
	cc, hello := f.dial(t)
	if hello["starttime"] != "2026-01-02T03:04:05.600Z" || hello["version"] != "9.8.7" {
		t.Fatalf("connectUpdate %v", hello)
	}
	// Before authentication every request goes unanswered: the next thing
	// the client receives is the authentication answer.
	for _, ev := range []string{"users", "logs", "serviceInfo", "serverHealth", "systemStatus"} {
		cc.emit(ev, nil)
	}
	if ok := cc.authenticate(testKey); ok != "True" {
		t.Fatalf("right key: successful=%q", ok)
	}

	cc.emit("users", nil)
	var users usersPayload
	cc.event("users", &users)
	if len(users.Users) != 1 {
		t.Fatalf("users %+v", users)
	}
	u := users.Users[0]
	if u["uid"] != "ANDROID-1" || u["callsign"] != "ALPHA" || u["team"] != "Cyan" || u["role"] != "Team Lead" || u["address"] != "10.1.2.3" {
		t.Fatalf("user %v", u)
	}
	if seen, err := time.Parse(time.RFC3339, u["lastSeen"]); err != nil || time.Since(seen) > time.Minute {
		t.Fatalf("lastSeen %q", u["lastSeen"])
	}

	// logs: newest first; "time" limits them to later records.
	mark := time.Now()
	testkit.WaitFor(t, "the clock to move", func() bool { return time.Now().After(mark) })
	f.log.Warn("second line", "addr", "10.0.0.1")
	// The new record is pushed first (with the first line when that was
	// still waiting for its push as the client authenticated)...
	var logs logsPayload
	cc.nextEvent("logs", &logs) // a push: no twin
	if len(logs.LogData) == 0 || len(logs.LogData) > 2 || logs.LogData[0]["message"] != "second line addr=10.0.0.1" {
		t.Fatalf("pushed logs %+v", logs)
	}
	// ...and a request answers with every kept record.
	cc.emit("logs", nil)
	cc.event("logs", &logs)
	if len(logs.LogData) < 2 {
		t.Fatalf("logs %+v", logs)
	}
	newest := logs.LogData[0]
	if newest["message"] != "second line addr=10.0.0.1" || newest["type"] != "WARN" || newest["file"] != "channel_test.go" {
		t.Fatalf("newest log %v", newest)
	}
	if _, err := time.Parse(time.RFC3339, newest["time"]); err != nil {
		t.Fatalf("log time %q", newest["time"])
	}
	found := false
	for _, l := range logs.LogData {
		found = found || l["message"] == "first line n=1"
	}
	if !found {
		t.Fatalf("first line missing from %+v", logs.LogData)
	}
	for _, since := range []string{mark.UTC().Format(time.RFC3339Nano), mark.Format("2006-01-02 15:04:05,000000")} {
		cc.emit("logs", map[string]string{"time": since})
		cc.event("logs", &logs)
		if len(logs.LogData) == 0 || logs.LogData[len(logs.LogData)-1]["message"] != "second line addr=10.0.0.1" {
			t.Fatalf("logs since %s: %+v", since, logs.LogData)
		}
		for _, l := range logs.LogData {
			if l["message"] == "first line n=1" {
				t.Fatalf("logs since %s include an older record", since)
			}
		}
	}

	cc.emit("serviceInfo", nil)
	var info struct {
		Services map[string]struct {
			Status string `json:"status"`
			Port   int    `json:"port"`
		} `json:"services"`
		IP string `json:"ip"`
	}
	cc.event("serviceInfo", &info)
	// The fixture's three services, and FreeTAKServer's others as off.
	if info.IP != "tak.example.org" || len(info.Services) != 6 || info.Services["Rest_API_service"].Status != "off" ||
		info.Services["TCP_CoT_service"].Status != "on" || info.Services["TCP_CoT_service"].Port != 8087 ||
		info.Services["SSL_CoT_service"].Status != "on" || info.Services["SSL_CoT_service"].Port != 8089 ||
		info.Services["Federation_server_service"].Status != "off" || info.Services["Federation_server_service"].Port != 9000 {
		t.Fatalf("serviceInfo %+v", info)
	}

	cc.emit("serverHealth", nil)
	var health map[string]*float64
	cc.event("serverHealth", &health)
	for _, k := range []string{"CPU", "memory", "disk"} {
		v := health[k]
		if v == nil || *v < 0 || *v > 100 || *v != float64(int(*v)) {
			t.Fatalf("serverHealth %s = %v, want a whole percentage", k, v)
		}
	}

	// systemStatus connects: the bound-but-dead listener is off.
	cc.emit("systemStatus", nil)
	var status map[string]string
	cc.event("systemStatus", &status)
	if len(status) != 3+2*len(ftsServices) || status["TCP_CoT_service"] != "on" || status["SSL_CoT_service"] != "off" ||
		status["Federation_server_service"] != "off" {
		t.Fatalf("systemStatus %v", status)
	}
	// FreeTAKServer's keys: measured, and as configured (a listener with
	// an address is expected on).
	for k, v := range map[string]string{"TCPCoTStatus": "on", "TCPCoTStatusExpected": "on", "SSLCoTStatus": "off",
		"SSLCoTStatusExpected": "on", "FederationServerStatus": "off", "FederationServerExpected": "off",
		"RestAPIStatus": "off", "RestAPIStatusExpected": "off"} {
		if status[k] != v {
			t.Errorf("systemStatus %s = %q, want %q", k, status[k], v)
		}
	}
}

func TestChannelWrongKey(t *testing.T) {
	cases := []struct{ name, msg string }{
		{"wrong key", `42["authenticate","{\"Authenticate\":\"not-the-key\"}"]`},
		{"empty key", `42["authenticate","{\"Authenticate\":\"\"}"]`},
		{"not JSON", `42["authenticate","Authenticate=` + testKey + `"]`},
		{"no argument", `42["authenticate"]`},
		{"right key, wrong field", `42["authenticate","{\"key\":\"` + testKey + `\"}"]`},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			f := newChannelFixture(t, nil)
			f.addClient("ANDROID-1", "ALPHA")
			cc, _ := f.dial(t)
			cc.send(tc.msg)
			cc.emit("users", nil) // sent before the answer: gets no data
			var ans map[string]string
			cc.event("authentication", &ans)
			if ans["successful"] != "False" {
				t.Fatalf("answer %v", ans)
			}
			if rest := cc.closed(); strings.Join(rest, "|") != "41" {
				t.Fatalf("after a wrong key: %q, want only the disconnect", rest)
			}
		})
	}
	// The object form (not a string) is accepted too.
	f := newChannelFixture(t, nil)
	cc, _ := f.dial(t)
	cc.send(`42["authenticate",{"Authenticate":"` + testKey + `"}]`)
	var ans map[string]string
	cc.event("authentication", &ans)
	if ans["successful"] != "True" {
		t.Fatalf("object form: %v", ans)
	}
	// No configured key refuses everyone, even an empty key.
	f = newChannelFixture(t, func(o *ChannelOptions) { o.WebsocketKey = "" })
	cc, _ = f.dial(t)
	if ok := cc.authenticate(""); ok != "False" {
		t.Fatalf("empty configured key accepted a client")
	}
}

func TestChannelAuthFailureLimit(t *testing.T) {
	f := newChannelFixture(t, func(o *ChannelOptions) { o.MaxAuthFailures = 2 })
	for range 2 {
		cc, _ := f.dial(t)
		if ok := cc.authenticate("guess"); ok != "False" {
			t.Fatal("wrong key accepted")
		}
	}
	// The address is now refused even with the right key.
	cc, _ := f.dial(t)
	if ok := cc.authenticate(testKey); ok != "False" {
		t.Fatal("right key accepted from an address over the failure limit")
	}
}
