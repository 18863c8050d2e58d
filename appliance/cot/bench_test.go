package cot

import (
	"bytes"
	"io"
	"os"
	"path/filepath"
	"testing"

	"google.golang.org/protobuf/proto"

	"outpost/appliance/cot/takproto"
)

// benchSA returns typical ATAK SAs: the real capture (pretty-printed by
// its recorder) and the same event as ATAK writes it on the wire (one line).
func benchSA(b *testing.B) map[string][]byte {
	capture, err := os.ReadFile(filepath.Join(capturesDir, "Presence_InitialATAK.cot"))
	if err != nil {
		b.Fatal(err)
	}
	wire, err := os.ReadFile(filepath.Join(seedDir, "sa-atak.xml"))
	if err != nil {
		b.Fatal(err)
	}
	return map[string][]byte{"capture": capture, "wire": wire}
}

func BenchmarkDecodeSA(b *testing.B) {
	for name, sa := range benchSA(b) {
		b.Run(name, func(b *testing.B) {
			b.ReportAllocs()
			b.SetBytes(int64(len(sa)))
			for b.Loop() {
				if _, err := Decode(sa); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

func BenchmarkDecodeAllCaptures(b *testing.B) {
	// Cut the captures into messages first, as the stream decoder would.
	var msgs [][]byte
	total := 0
	for _, c := range loadCaptures(b) {
		for rest := c.data; ; {
			i := bytes.Index(rest, []byte("<event"))
			j := bytes.Index(rest, []byte("</event>"))
			if i < 0 || j < i {
				break
			}
			msgs = append(msgs, rest[i:j+8])
			total += j + 8 - i
			rest = rest[j+8:]
		}
	}
	b.ReportAllocs()
	b.SetBytes(int64(total))
	for b.Loop() {
		for _, m := range msgs {
			_, _ = Decode(m) // two captures are malformed on purpose
		}
	}
	b.ReportMetric(float64(len(msgs)), "events/op")
}

func benchEvent(b *testing.B, name string) *Event {
	e, err := Decode(benchSA(b)[name])
	if err != nil {
		b.Fatal(err)
	}
	return e
}

func BenchmarkEncodeXML(b *testing.B) {
	e := benchEvent(b, "wire")
	buf := e.AppendXML(nil)
	b.ReportAllocs()
	b.SetBytes(int64(len(buf)))
	for b.Loop() {
		buf = e.AppendXML(buf[:0])
	}
}

func BenchmarkMarshalProto(b *testing.B) {
	e := benchEvent(b, "wire")
	b.ReportAllocs()
	for b.Loop() {
		if _, err := e.MarshalProto(); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkDecodeProto(b *testing.B) {
	p, err := benchEvent(b, "wire").MarshalProto()
	if err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	b.SetBytes(int64(len(p)))
	for b.Loop() {
		if _, err := DecodeProto(p); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkGeneratedProto measures the generated (reflection-driven) code
// on the same message, for comparison with the hand-written codec.
func BenchmarkGeneratedProto(b *testing.B) {
	p, err := benchEvent(b, "wire").MarshalProto()
	if err != nil {
		b.Fatal(err)
	}
	var g takproto.TakMessage
	if err := proto.Unmarshal(p, &g); err != nil {
		b.Fatal(err)
	}
	b.Run("marshal", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			if _, err := proto.Marshal(&g); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("unmarshal", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			var m takproto.TakMessage
			if err := proto.Unmarshal(p, &m); err != nil {
				b.Fatal(err)
			}
		}
	})
}

// repeatReader returns data over and over, in reads of at most chunk bytes.
type repeatReader struct {
	data  []byte
	off   int
	chunk int
}

func (r *repeatReader) Read(p []byte) (int, error) {
	n := copy(p[:min(len(p), r.chunk)], r.data[r.off:])
	r.off = (r.off + n) % len(r.data)
	return n, nil
}

func BenchmarkStreamDecoder(b *testing.B) {
	sa := benchSA(b)["wire"]
	p, err := benchEvent(b, "wire").MarshalProto()
	if err != nil {
		b.Fatal(err)
	}
	for _, tc := range []struct {
		name  string
		data  []byte
		proto Protocol
	}{
		{"xml", sa, ProtocolXML},
		{"protobuf", AppendStreamFrame(nil, p), ProtocolV1},
	} {
		b.Run(tc.name, func(b *testing.B) {
			d := NewStreamDecoder(&repeatReader{data: tc.data, chunk: 1460}, 0)
			d.SetProtocol(tc.proto)
			b.ReportAllocs()
			b.SetBytes(int64(len(tc.data)))
			for b.Loop() {
				m, err := d.Next()
				if err != nil || m.Event == nil {
					b.Fatal(err)
				}
			}
		})
	}
}

var _ io.Reader = (*repeatReader)(nil)
