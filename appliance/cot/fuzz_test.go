package cot

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"testing"

	"google.golang.org/protobuf/proto"

	"outpost/appliance/cot/takproto"
)

// seedDir holds hand-made fuzz seeds shared by the fuzzers (repository
// root); Go's own corpus of found inputs is testdata/fuzz in this package.
const seedDir = "../../testdata/fuzz-cot"

// addSeeds adds every file of seedDir whose name matches pattern, and the
// captures up to maxCapture bytes (raw, or converted by conv when it is not
// nil). The stream fuzzers split every input many times: big seeds would
// make them crawl (the big captures are split in TestCapturesStreamSplits).
func addSeeds(f *testing.F, pattern string, maxCapture int, conv func([]byte) [][]byte) {
	files, err := filepath.Glob(filepath.Join(seedDir, pattern))
	if err != nil || len(files) == 0 {
		f.Fatalf("no seeds %s in %s (%v)", pattern, seedDir, err)
	}
	for _, name := range files {
		b, err := os.ReadFile(name)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(b)
	}
	for _, c := range loadCaptures(f) {
		if len(c.data) > maxCapture {
			continue
		}
		if conv == nil {
			f.Add(c.data)
			continue
		}
		for _, b := range conv(c.data) {
			f.Add(b)
		}
	}
}

// checkDecoded asserts what must hold for every event Decode accepts.
func checkDecoded(t *testing.T, e *Event) {
	t.Helper()
	x := e.AppendXML(nil)
	if _, err := parseTree(x); err != nil {
		t.Fatalf("accepted event encodes to XML that encoding/xml rejects: %v\n%q", err, x)
	}
	e2, err := Decode(x)
	if err != nil {
		t.Fatalf("Decode(AppendXML) failed: %v\n%q", err, x)
	}
	if err := compareEvents(e, e2, false); err != nil {
		t.Fatalf("XML trip changed the event: %v", err)
	}
	if !bytes.Equal(e.Detail.XML, e2.Detail.XML) {
		t.Fatalf("XML trip changed Detail.XML:\n%q\n%q", e.Detail.XML, e2.Detail.XML)
	}
	if err := compareViews(&e.Detail, &e2.Detail); err != nil {
		t.Fatal(err)
	}
	p, err := e.MarshalProto()
	if err != nil {
		return // times before 1970 or illegal characters cannot go to protobuf
	}
	var g takproto.TakMessage
	if err := proto.Unmarshal(p, &g); err != nil {
		t.Fatalf("generated code rejects MarshalProto output: %v", err)
	}
	if p2, err := proto.Marshal(&g); err != nil || !bytes.Equal(p, p2) {
		t.Fatalf("generated code re-encodes MarshalProto output differently")
	}
	e3, err := DecodeProto(p)
	if err != nil {
		t.Fatalf("DecodeProto(MarshalProto) failed: %v", err)
	}
	if err := compareEvents(e, e3, true); err != nil {
		t.Fatalf("protobuf trip changed the event: %v\n%q\n%q", err, e.Detail.XML, e3.Detail.XML)
	}
	if p3, err := e3.MarshalProto(); err != nil || !bytes.Equal(p, p3) {
		t.Fatalf("second protobuf encoding differs (%v)", err)
	}
}

func FuzzDecode(f *testing.F) {
	addSeeds(f, "*.xml", 1<<20, nil)
	f.Fuzz(func(t *testing.T, data []byte) {
		e, err := Decode(data)
		if err != nil {
			var se *SyntaxError
			if !errors.As(err, &se) || e != nil {
				t.Fatalf("Decode error %T %v (event %v)", err, err, e)
			}
			return
		}
		checkDecoded(t, e)
	})
}

// streamSeeds turns a capture into a negotiation stream: the capture, a
// protocol request, and the capture's events as protobuf frames.
func streamSeeds(capture []byte) [][]byte {
	out := [][]byte{capture}
	d := NewStreamDecoder(bytes.NewReader(capture), 0)
	var frames []byte
	for {
		m, err := d.Next()
		if err == io.EOF || (err != nil && !isSyntax(err)) {
			break
		}
		if m.Event != nil {
			if p, err := m.Event.MarshalProto(); err == nil {
				frames = AppendStreamFrame(frames, p)
			}
		}
	}
	if len(frames) > 0 {
		out = append(out, append(append(append([]byte(nil), capture...), takRequest...), frames...))
	}
	return out
}

const takRequest = `<event version="2.0" uid="ANDROID-1" type="t-x-takp-q" how="m-g" time="2026-11-22T10:00:00Z" start="2026-11-22T10:00:00Z" stale="2026-11-22T10:01:00Z"><point lat="0" lon="0" hae="0" ce="999999" le="999999"/><detail><TakControl><TakRequest version="1"/></TakControl></detail></event>`

func isSyntax(err error) bool {
	var se *SyntaxError
	return errors.As(err, &se)
}

// negotiatedOutcome decodes like a connection would, switching to protobuf
// after an accepted request, and records everything in order.
func negotiatedOutcome(r io.Reader, max int) outcome {
	d := NewStreamDecoder(r, max)
	if _, ok := r.(*notReadyReader); ok {
		d.SetNonblocking()
	}
	n := NewNegotiator("server")
	var o outcome
	for i := 0; ; i++ {
		m, err := d.Next()
		o.sizes += m.Size
		switch {
		case wouldBlock(err):
			// A nonblocking reader had nothing yet: call again.
		case err == nil && m.Event != nil:
			o.items = append(o.items, fmt.Sprintf("%s %s", d.Protocol(), m.Event.AppendXML(nil)))
			if _, sw, ok := n.Handle(m.Event, t0); ok && sw {
				d.SetProtocol(ProtocolV1)
			}
		case err == nil && m.Auth != nil:
			o.items = append(o.items, fmt.Sprintf("auth %+v", *m.Auth))
		case err == nil:
			o.final = errors.New("message with neither event nor auth")
			return o
		case isSyntax(err):
			o.items = append(o.items, "error "+err.Error())
		default:
			o.final = err
			return o
		}
		if i > 1<<20 {
			o.final = errors.New("decoder does not stop")
			return o
		}
	}
}

func FuzzStreamDecoder(f *testing.F) {
	addSeeds(f, "*.xml", 4096, streamSeeds)
	addSeeds(f, "*.stream", 0, nil)
	f.Fuzz(func(t *testing.T, data []byte) {
		for _, limit := range []int{0, 700} {
			whole := negotiatedOutcome(bytes.NewReader(data), limit)
			if whole.final == nil || (!errors.Is(whole.final, io.EOF) && !errors.Is(whole.final, io.ErrUnexpectedEOF) && !errors.Is(whole.final, ErrTooLarge)) {
				t.Fatalf("final error %v", whole.final)
			}
			if whole.sizes > len(data) {
				t.Fatalf("sizes add up to %d, input has %d bytes", whole.sizes, len(data))
			}
			step := splitStep(len(data))
			for cut := 1; cut < len(data); cut += step {
				got := negotiatedOutcome(&partsReader{parts: [][]byte{data[:cut:cut], data[cut:]}}, limit)
				if !sameOutcome(whole, got) {
					t.Fatalf("split at %d (limit %d) differs:\n%v\nwhole:\n%v", cut, limit, got, whole)
				}
			}
			if got := negotiatedOutcome(&chunkReader{data: data, sizes: []int{1}}, limit); !sameOutcome(whole, got) {
				t.Fatalf("1-byte reads (limit %d) differ:\n%v\nwhole:\n%v", limit, got, whole)
			}
			if got := negotiatedOutcome(&notReadyReader{data: data, size: 7}, limit); !sameOutcome(whole, got) {
				t.Fatalf("nonblocking reads (limit %d) differ:\n%v\nwhole:\n%v", limit, got, whole)
			}
		}
	})
}

// protoSeeds turns a capture into a stream of protobuf frames with a stray
// zero byte after each (protocol.md §3: one server does that).
func protoSeeds(capture []byte) [][]byte {
	var frames []byte
	d := NewStreamDecoder(bytes.NewReader(capture), 0)
	for {
		m, err := d.Next()
		if err == io.EOF || (err != nil && !isSyntax(err)) {
			break
		}
		if m.Event != nil {
			if p, err := m.Event.MarshalProto(); err == nil {
				frames = append(AppendStreamFrame(frames, p), 0)
			}
		}
	}
	return [][]byte{frames}
}

func FuzzProtoFrames(f *testing.F) {
	addSeeds(f, "*.frames", 4096, protoSeeds)
	f.Fuzz(func(t *testing.T, data []byte) {
		whole := decodeStream(bytes.NewReader(data), 0, ProtocolV1)
		if whole.final != io.EOF && whole.final != io.ErrUnexpectedEOF {
			t.Fatalf("final error %v", whole.final)
		}
		step := splitStep(len(data))
		for cut := 1; cut < len(data); cut += step {
			got := decodeStream(&partsReader{parts: [][]byte{data[:cut:cut], data[cut:]}}, 0, ProtocolV1)
			if !sameOutcome(whole, got) {
				t.Fatalf("split at %d differs:\n%v\nwhole:\n%v", cut, got, whole)
			}
		}
		// The data as one TakMessage: our decoder agrees with the
		// generated code.
		var m pbMessage
		errMine := unmarshalTakMessage(data, &m)
		var g takproto.TakMessage
		errGen := proto.Unmarshal(data, &g)
		if (errMine == nil) != (errGen == nil) {
			t.Fatalf("ours: %v, generated: %v", errMine, errGen)
		}
		if errMine == nil {
			clearUnknown(g.ProtoReflect())
			b1, _ := proto.MarshalOptions{Deterministic: true}.Marshal(toGenerated(&m))
			b2, _ := proto.MarshalOptions{Deterministic: true}.Marshal(&g)
			if !bytes.Equal(b1, b2) {
				t.Fatalf("decoded differently:\n ours %v\n gen  %v", toGenerated(&m), &g)
			}
		}
		for _, msg := range [][]byte{data, meshPayload(data)} {
			e, err := DecodeProto(msg)
			if err != nil {
				if !errors.Is(err, ErrNoEvent) && !isSyntax(err) {
					t.Fatalf("DecodeProto error %T %v", err, err)
				}
				continue
			}
			checkDecoded(t, e)
		}
	})
}

func meshPayload(b []byte) []byte {
	p, err := ParseMeshFrame(b)
	if err != nil {
		return nil
	}
	return p
}

// splitStep spaces the cut points of an input: every boundary of small
// inputs, fewer for big ones so that one execution stays cheap.
func splitStep(n int) int {
	switch {
	case n <= 1024:
		return 1
	case n <= 16<<10:
		return n / 128
	}
	return n / 8
}

// notReadyReader is a nonblocking reader that has size bytes ready at a
// time: each read that returned data is followed by one with nothing ready
// (errNotReady), as a socket read as data trickles in.
type notReadyReader struct {
	data    []byte
	size    int
	drained bool
}

func (r *notReadyReader) Read(p []byte) (int, error) {
	if len(r.data) == 0 {
		return 0, io.EOF
	}
	if r.drained {
		r.drained = false
		return 0, errNotReady{}
	}
	n := copy(p, r.data[:min(r.size, len(r.data))])
	r.data = r.data[n:]
	r.drained = true
	return n, nil
}
