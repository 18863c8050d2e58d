package socketio

import (
	"encoding/json"
	"testing"
)

func TestParsePacket(t *testing.T) {
	cases := []struct {
		in   string
		typ  byte
		nsp  string
		id   int64
		name string
		args int
	}{
		{`0`, sioConnect, "/", -1, "", 0},
		{`0{"token":"x"}`, sioConnect, "/", -1, "", 0},
		{`0/admin,`, sioConnect, "/admin", -1, "", 0},
		{`0/admin`, sioConnect, "/admin", -1, "", 0},
		{`1`, sioDisconnect, "/", -1, "", 0},
		{`2["a"]`, sioEvent, "/", -1, "a", 0},
		{`212["a",1,{"b":[2]}]`, sioEvent, "/", 12, "a", 2},
		{`2/x,7["a",null]`, sioEvent, "/x", 7, "a", 1},
		{`2[5,"numeric name"]`, sioEvent, "/", -1, "5", 1},
		{`30[]`, sioAck, "/", 0, "", 0},
		{`3999["r"]`, sioAck, "/", 999, "", 1},
	}
	for _, tc := range cases {
		p, err := parsePacket([]byte(tc.in))
		if err != nil || p.typ != tc.typ || p.nsp != tc.nsp || p.id != tc.id || p.name != tc.name || len(p.args) != tc.args {
			t.Errorf("%s: %+v %v", tc.in, p, err)
		}
	}
}

func TestEncode(t *testing.T) {
	msg, err := encodeEvent(-1, "users", []any{`{"Users":[]}`, json.RawMessage(`{"a":1}`), 3})
	if err != nil || string(msg) != `42["users","{\"Users\":[]}",{"a":1},3]` {
		t.Fatalf("%s %v", msg, err)
	}
	if msg, _ := encodeEvent(4, "q", nil); string(msg) != `424["q"]` {
		t.Fatalf("%s", msg)
	}
	if msg, _ := encodeAck(9, nil); string(msg) != `439[]` {
		t.Fatalf("%s", msg)
	}
	if msg := encodeControl(sioConnectError, "/a", map[string]string{"message": "m"}); string(msg) != `44/a,{"message":"m"}` {
		t.Fatalf("%s", msg)
	}
	if msg := encodeControl(sioDisconnect, "/", nil); string(msg) != `41` {
		t.Fatalf("%s", msg)
	}
}

// FuzzParsePacket: no input panics, and an accepted event re-encodes to a
// packet that parses to the same name and arguments.
func FuzzParsePacket(f *testing.F) {
	for _, s := range []string{`0`, `0{"a":1}`, `0/admin,`, `1`, `2["a",1]`, `212["a"]`, `2/x,3["a"]`, `30[]`,
		`451-["a",{"_placeholder":true,"num":0}]`, `4{"message":"x"}`, `9`, `2[`, `2["disconnect"]`, ``} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		p, err := parsePacket(b)
		if err != nil || p.typ != sioEvent {
			return
		}
		args := make([]any, len(p.args))
		for i, a := range p.args {
			args[i] = a
		}
		msg, err := encodeEvent(p.id, p.name, args)
		if err != nil {
			t.Fatalf("re-encoding %q: %v", b, err)
		}
		q, err := parsePacket(msg[1:])
		if err != nil && !reserved[p.name] {
			t.Fatalf("re-encoded %q of %q does not parse: %v", msg, b, err)
		}
		if err == nil && (q.name != p.name || len(q.args) != len(p.args) || q.id != p.id) {
			t.Fatalf("%q -> %q changed the event", b, msg)
		}
	})
}

func BenchmarkParseEvent(b *testing.B) {
	msg := []byte(`212["logs","{\"time\":\"2026-01-02T03:04:05.000Z\"}"]`)
	b.ReportAllocs()
	for b.Loop() {
		if _, err := parsePacket(msg); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkEncodeEvent(b *testing.B) {
	payload := `{"CPU":12,"memory":40,"disk":71}`
	b.ReportAllocs()
	for b.Loop() {
		if _, err := encodeEvent(-1, "serverHealth", []any{payload}); err != nil {
			b.Fatal(err)
		}
	}
}
