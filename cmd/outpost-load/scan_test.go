package main

import (
	"bytes"
	"testing"
	"time"

	"outpost/appliance/cot"
)

// stream returns a server-like stream of messages: n SAs of client 7 in
// XML or protobuf frames, and what their remarks say.
func stream(t testing.TB, proto bool, n int) ([]byte, []mark) {
	t.Helper()
	tpl := saTemplate{pad: 40}
	var out []byte
	var marks []mark
	now := time.Unix(1_700_000_000, 123456789)
	for i := range n {
		var err error
		m := mark{sender: 7, seq: uint32(i), sent: now.UnixNano(), measured: i%2 == 1}
		if out, err = tpl.build(out, proto, 7, m.seq, now, m.measured); err != nil {
			t.Fatal(err)
		}
		marks = append(marks, m)
	}
	return out, marks
}

// cutAll cuts b into messages, feeding it in pieces of size step as reads
// would, and returns what each message's remarks say.
func cutAll(t *testing.T, b []byte, proto bool, step int) []mark {
	t.Helper()
	var got []mark
	var pending []byte
	searched := 0
	for off := 0; off < len(b); off += step {
		pending = append(pending, b[off:min(off+step, len(b))]...)
		for {
			var msg []byte
			if proto {
				n, payload, err := cutFrame(pending)
				if err != nil {
					t.Fatalf("step %d: %v", step, err)
				}
				if n == 0 {
					break
				}
				msg, pending = pending[payload:n], pending[n:]
			} else {
				n := cutXML(pending, searched)
				if n == 0 {
					searched = len(pending)
					break
				}
				msg, pending, searched = pending[:n], pending[n:], 0
			}
			m, ok := findMark(msg)
			if !ok {
				t.Fatalf("step %d: no mark in %q", step, msg)
			}
			got = append(got, m)
		}
	}
	if len(pending) != 0 {
		t.Fatalf("step %d: %d bytes left over", step, len(pending))
	}
	return got
}

func TestCutAndMarkAtEverySplit(t *testing.T) {
	for _, proto := range []bool{false, true} {
		b, want := stream(t, proto, 3)
		for step := 1; step <= len(b); step++ {
			got := cutAll(t, b, proto, step)
			if len(got) != len(want) {
				t.Fatalf("proto %v step %d: %d messages, want %d", proto, step, len(got), len(want))
			}
			for i := range got {
				if got[i] != want[i] {
					t.Fatalf("proto %v step %d: message %d says %+v, want %+v", proto, step, i, got[i], want[i])
				}
			}
		}
	}
}

// The server re-encodes what it relays: the remarks must survive a decode
// and re-encode in both formats.
func TestMarkSurvivesTheServersCodecs(t *testing.T) {
	b, want := stream(t, false, 1)
	ev, err := cot.Decode(b)
	if err != nil {
		t.Fatal(err)
	}
	pb, err := ev.MarshalProto()
	if err != nil {
		t.Fatal(err)
	}
	for name, msg := range map[string][]byte{"xml": ev.AppendXML(nil), "proto": pb} {
		if m, ok := findMark(msg); !ok || m != want[0] {
			t.Errorf("%s: mark %+v %v, want %+v", name, m, ok, want[0])
		}
	}
}

func TestBrokenFrames(t *testing.T) {
	for name, b := range map[string][]byte{
		"no magic":       {0x3c, 0x01, 0x02},
		"too long":       append([]byte{0xBF}, 0xff, 0xff, 0x7f),
		"endless varint": {0xBF, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80},
	} {
		if _, _, err := cutFrame(b); err == nil {
			t.Errorf("%s: no error", name)
		}
	}
	if n, _, err := cutFrame([]byte{0xBF, 0x80}); n != 0 || err != nil {
		t.Errorf("partial varint: %d %v", n, err)
	}
}

func TestFindMarkRefusesGarbage(t *testing.T) {
	for _, s := range []string{
		"<remarks>hello</remarks>",
		"<remarks>olt </remarks>",
		"<remarks>olt 1 2</remarks>",
		"<remarks>olt 1 2 3</remarks>",
		"<remarks>olt a 2 3 m</remarks>",
		"<remarks>olt 1 99999999999 3 m</remarks>",
		"<remarks>olt 1 2 3 ",
	} {
		if m, ok := findMark([]byte(s)); ok {
			t.Errorf("%q read as %+v", s, m)
		}
	}
	m, ok := findMark(appendRemarks(nil, 12, 34, 56, true, 3))
	if !ok || m != (mark{sender: 12, seq: 34, sent: 56, measured: true}) {
		t.Errorf("round trip: %+v %v", m, ok)
	}
}

func TestHistogramBuckets(t *testing.T) {
	prev := -1
	for ns := int64(0); ns < 1<<40; ns = ns*9/8 + 1 {
		i := bucketOf(ns)
		if i < prev || i >= histBuckets {
			t.Fatalf("bucket of %d is %d after %d", ns, i, prev)
		}
		prev = i
		if v := bucketValue(i); ns > 0 && (float64(v) < float64(ns)*0.98 || float64(v) > float64(ns)*1.02) {
			t.Fatalf("bucket of %d reads back as %d", ns, v)
		}
	}
	h := newHists(2)
	for i := range 1000 {
		h.shard(i).add(int64(i+1) * int64(time.Millisecond))
	}
	l := h.summary()
	if l.Count != 1000 || l.Max != 1000 || l.P50 < 490 || l.P50 > 510 || l.P99 < 975 || l.P99 > 1000 {
		t.Errorf("summary: %+v", l)
	}
}

// The reader's cost per message (cut + remarks) against a full decode with
// the server's stream decoder.
func BenchmarkScan(b *testing.B) {
	for _, proto := range []bool{false, true} {
		name := map[bool]string{false: "xml", true: "protobuf"}[proto]
		msgs, _ := stream(b, proto, 64)
		b.Run("cut+mark/"+name, func(b *testing.B) {
			b.SetBytes(int64(len(msgs)))
			for b.Loop() {
				rest := msgs
				for len(rest) > 0 {
					var msg []byte
					if proto {
						n, off, _ := cutFrame(rest)
						msg, rest = rest[off:n], rest[n:]
					} else {
						n := cutXML(rest, 0)
						msg, rest = rest[:n], rest[n:]
					}
					findMark(msg)
				}
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*64), "ns/msg")
		})
		b.Run("decode/"+name, func(b *testing.B) {
			for b.Loop() {
				d := cot.NewStreamDecoder(bytes.NewReader(msgs), 0)
				if proto {
					d.SetProtocol(cot.ProtocolV1)
				}
				for {
					if _, err := d.Next(); err != nil {
						break
					}
				}
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*64), "ns/msg")
		})
	}
}
