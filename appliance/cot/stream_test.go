package cot

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"net"
	"strings"
	"testing"
	"time"
)

var t0 = time.Date(2026, 11, 22, 10, 0, 0, 0, time.UTC)

// sa returns an XML SA event for uid.
func sa(uid string) string {
	return fmt.Sprintf(`<?xml version="1.0" encoding="UTF-8"?>`+"\n"+`<event version="2.0" uid="%s" type="a-f-G-U-C" how="m-g" time="2026-11-22T10:00:00.123Z" start="2026-11-22T10:00:00.123Z" stale="2026-11-22T10:06:00.123Z"><point lat="59.33" lon="18.06" hae="25.0" ce="9.9" le="9999999"/><detail><contact callsign="%s" endpoint="*:-1:stcp"/><__group name="Cyan" role="Team Member"/></detail></event>`, uid, uid)
}

// protoFrame returns a stream frame holding the protobuf form of xml.
func protoFrame(t testing.TB, xml string) []byte {
	t.Helper()
	e, err := Decode([]byte(xml))
	if err != nil {
		t.Fatal(err)
	}
	p, err := e.MarshalProto()
	if err != nil {
		t.Fatal(err)
	}
	return AppendStreamFrame(nil, p)
}

func uids(o outcome) string {
	var out []string
	for _, it := range o.items {
		if i := strings.Index(it, ` uid="`); i >= 0 && strings.HasPrefix(it, "event ") {
			rest := it[i+6:]
			out = append(out, rest[:strings.IndexByte(rest, '"')])
		} else if strings.HasPrefix(it, "error ") {
			out = append(out, "ERR")
		} else {
			out = append(out, it)
		}
	}
	return strings.Join(out, ",")
}

func TestStreamXML(t *testing.T) {
	tests := []struct {
		name  string
		input string
		max   int
		want  string // uids (ERR for a SyntaxError, auth {...} for auth)
		final error
	}{
		{"empty", "", 0, "", io.EOF},
		{"only white space", " \n\r\n ", 0, "", io.EOF},
		{"one", sa("A"), 0, "A", io.EOF},
		{"back to back", sa("A") + sa("B") + sa("C"), 0, "A,B,C", io.EOF},
		{"white space and comments between", sa("A") + "\n\n<!-- x -->\r\n" + sa("B") + "\n", 0, "A,B", io.EOF},
		{"no declaration, single quotes", `<event uid='A' type='a' time='2026-11-22T10:00:00Z' stale='2026-11-22T10:00:00Z'></event>`, 0, "A", io.EOF},
		{"auth first", `<auth><cot username="user" password="pw" uid="ANDROID-1"/></auth>` + sa("A"), 0, "auth {Username:user Password:pw UID:ANDROID-1},A", io.EOF},
		{"bad auth", `<auth><foo/></auth>` + sa("A"), 0, "ERR,A", io.EOF},
		{"junk before and between", "\x00\xffjunk<evenx><<eventually>" + sa("A") + "garbage</event>" + sa("B"), 0, "A,B", io.EOF},
		{"end tag with space", `<event uid="A" type="a" time="2026-11-22T10:00:00Z" stale="2026-11-22T10:00:00Z"></event  >`, 0, "A", io.EOF},
		{"lookalike end tag", `<event uid="A" type="a" time="2026-11-22T10:00:00Z" stale="2026-11-22T10:00:00Z"><detail><x>&lt;/events&gt;</x></detail></event>`, 0, "A", io.EOF},
		{"syntax error then good", `<event uid="A"></event>` + sa("B"), 0, "ERR,B", io.EOF},
		{"ends inside event", sa("A") + `<event uid="B" type="a">`, 0, "A", io.ErrUnexpectedEOF},
		{"ends inside end tag", sa("A") + strings.TrimSuffix(sa("B"), ">"), 0, "A", io.ErrUnexpectedEOF},
		{"ends with tag prefix", sa("A") + "<eve", 0, "A", io.EOF},
		{"ends with junk", sa("A") + "<detail>stray</detail>", 0, "A", io.EOF},
		{"message at the limit", sa("A"), len(sa("A")), "A", io.EOF},
		{"message over the limit", sa("A"), len(sa("A")) - 1, "", ErrTooLarge},
		{"second message over the limit", sa("A") + sa("LONGER"), len(sa("A")), "A", ErrTooLarge},
		{"junk over the limit", strings.Repeat("x", 5000) + sa("A"), 4000, "", ErrTooLarge},
		{"unterminated event over the limit", "<event " + strings.Repeat("x", 5000), 4000, "", ErrTooLarge},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			whole := decodeStream(strings.NewReader(tc.input), tc.max, ProtocolXML)
			if got := uids(whole); got != tc.want || !errors.Is(whole.final, tc.final) {
				t.Fatalf("got %q, %v; want %q, %v", got, whole.final, tc.want, tc.final)
			}
			if tc.final == io.EOF && whole.sizes != len(strings.TrimRight(tc.input, " \n\r")) && !strings.Contains(tc.name, "junk") && !strings.Contains(tc.name, "prefix") {
				t.Errorf("sizes add up to %d, input has %d bytes", whole.sizes, len(tc.input))
			}
			bytewise := decodeStream(&chunkReader{data: []byte(tc.input), sizes: []int{1}}, tc.max, ProtocolXML)
			if !sameOutcome(whole, bytewise) {
				t.Errorf("1-byte reads differ:\n%v\nwhole:\n%v", bytewise, whole)
			}
		})
	}
}

// TestStreamAllCapturesOneStream sends every capture back to back, read
// whole, byte by byte and in uneven reads.
func TestStreamAllCapturesOneStream(t *testing.T) {
	var all []byte
	for _, c := range loadCaptures(t) {
		all = append(all, c.data...)
		all = append(all, '\n')
	}
	whole := decodeStream(bytes.NewReader(all), 0, ProtocolXML)
	if whole.final != io.EOF || len(whole.items) < 72 {
		t.Fatalf("%d items, final %v", len(whole.items), whole.final)
	}
	for _, sizes := range [][]int{{1}, {3, 1, 4, 1, 5, 9, 2, 6}, {4096}, {4097}, {100000}} {
		if got := decodeStream(&chunkReader{data: all, sizes: sizes}, 0, ProtocolXML); !sameOutcome(whole, got) {
			t.Errorf("reads of %v differ", sizes)
		}
	}
}

// negotiatingDecode reads like a streaming connection would (protocol.md §4):
// after a t-x-takp-q that the negotiator accepts, it switches to protobuf.
func negotiatingDecode(r io.Reader) outcome {
	d := NewStreamDecoder(r, 0)
	n := NewNegotiator("server")
	var o outcome
	for {
		m, err := d.Next()
		o.sizes += m.Size
		var se *SyntaxError
		switch {
		case err == nil:
			o.items = append(o.items, fmt.Sprintf("%s %s %s", d.Protocol(), m.Event.Type, m.Event.UID))
			if _, switchTo, ok := n.Handle(m.Event, t0); ok && switchTo {
				d.SetProtocol(ProtocolV1)
			}
		case errors.As(err, &se):
			o.items = append(o.items, "ERR")
		default:
			o.final = err
			return o
		}
	}
}

func TestStreamProtocolSwitch(t *testing.T) {
	req := `<event version="2.0" uid="ANDROID-1" type="t-x-takp-q" how="m-g" time="2026-11-22T10:00:00Z" start="2026-11-22T10:00:00Z" stale="2026-11-22T10:01:00Z"><point lat="0" lon="0" hae="0" ce="999999" le="999999"/><detail><TakControl><TakRequest version="1"/></TakControl></detail></event>`
	var in []byte
	in = append(in, sa("X1")...)
	in = append(in, req...)
	in = append(in, protoFrame(t, sa("P1"))...) // same read as the request
	in = append(in, 0x00)                       // one server's stray byte after every frame
	in = append(in, protoFrame(t, sa("P2"))...)
	control, _ := hexFrame("bf 02 0a 00") // TakMessage{takControl{}}: skipped
	in = append(in, control...)
	in = append(in, protoFrame(t, sa("P3"))...)
	want := "xml a-f-G-U-C X1,xml t-x-takp-q ANDROID-1,protobuf-v1 a-f-G-U-C P1,protobuf-v1 a-f-G-U-C P2,protobuf-v1 a-f-G-U-C P3"
	whole := negotiatingDecode(bytes.NewReader(in))
	if got := strings.Join(whole.items, ","); got != want || whole.final != io.EOF {
		t.Fatalf("got %s, %v\nwant %s", got, whole.final, want)
	}
	if whole.sizes != len(in) {
		t.Errorf("sizes add up to %d, input has %d", whole.sizes, len(in))
	}
	for cut := 1; cut < len(in); cut++ {
		got := negotiatingDecode(&partsReader{parts: [][]byte{in[:cut:cut], in[cut:]}})
		if !sameOutcome(whole, got) {
			t.Fatalf("split at %d:\n%v", cut, got)
		}
	}
}

func hexFrame(s string) ([]byte, error) {
	var out []byte
	for _, f := range strings.Fields(s) {
		var b byte
		if _, err := fmt.Sscanf(f, "%02x", &b); err != nil {
			return nil, err
		}
		out = append(out, b)
	}
	return out, nil
}

func TestStreamProtoFrames(t *testing.T) {
	a, b := protoFrame(t, sa("A")), protoFrame(t, sa("B"))
	oversize := []byte{0xBF, 0x80, 0x80, 0x08} // length 131072 > MaxProtoFrame
	overflow := append([]byte{0xBF}, bytes.Repeat([]byte{0xFF}, 11)...)
	garbage, _ := hexFrame("bf 03 ff ff ff") // TakMessage bytes that do not parse
	cat := func(parts ...[]byte) []byte { return bytes.Join(parts, nil) }
	tests := []struct {
		name  string
		input []byte
		max   int
		want  string
		final error
	}{
		{"clean", cat(a, b), 0, "A,B", io.EOF},
		{"junk before and between", cat([]byte("junk\x00"), a, []byte{0, 0, 1}, b, []byte{0}), 0, "A,B", io.EOF},
		{"oversize length resyncs", cat(oversize, a), 0, "A", io.EOF},
		{"varint overflow resyncs", cat(overflow, b), 0, "B", io.EOF},
		{"corrupt message is a syntax error", cat(garbage, a), 0, "ERR,A", io.EOF},
		{"empty frame skipped", cat([]byte{0xBF, 0x00}, a), 0, "A", io.EOF},
		{"ends inside a frame", cat(a, b[:len(b)-1]), 0, "A", io.ErrUnexpectedEOF},
		{"ends inside the length", cat(a, []byte{0xBF, 0x80}), 0, "A", io.ErrUnexpectedEOF},
		{"ends after magic", cat(a, []byte{0xBF}), 0, "A", io.ErrUnexpectedEOF},
		{"frame over the limit", cat(a), len(a) - 1, "", ErrTooLarge},
		{"junk over the limit", cat(bytes.Repeat([]byte{1}, 5000), a), 4000, "", ErrTooLarge},
		// A client racing its switch sends XML between frames: parsed, not dropped.
		{"XML event between frames", cat(a, []byte(sa("X")), b), 0, "A,X,B", io.EOF},
		{"XML event without declaration", cat(a, []byte(strings.SplitN(sa("Y"), "\n", 2)[1]), b), 0, "A,Y,B", io.EOF},
		{"angle-bracket junk", cat([]byte("<<junk <?xm"), a), 0, "A", io.EOF},
		{"declaration alone", cat([]byte(`<?xml version="1.0"?>`), a), 0, "A", io.EOF},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			whole := decodeStream(bytes.NewReader(tc.input), tc.max, ProtocolV1)
			if got := uids(whole); got != tc.want || !errors.Is(whole.final, tc.final) {
				t.Fatalf("got %q, %v; want %q, %v", got, whole.final, tc.want, tc.final)
			}
			bytewise := decodeStream(&chunkReader{data: tc.input, sizes: []int{1}}, tc.max, ProtocolV1)
			if !sameOutcome(whole, bytewise) {
				t.Errorf("1-byte reads differ:\n%v\nwhole:\n%v", bytewise, whole)
			}
		})
	}
}

// TestIdleDecoderHoldsNoBuffer: between messages the decoder gives its
// buffer back and waits for input with the small probe.
func TestIdleDecoderHoldsNoBuffer(t *testing.T) {
	r, w := io.Pipe()
	d := NewStreamDecoder(r, 0)
	go func() {
		w.Write([]byte(sa("A")))
		w.Write([]byte(sa("B")))
		w.Close()
	}()
	for _, want := range []string{"A", "B"} {
		m, err := d.Next()
		if err != nil || m.Event.UID != want {
			t.Fatalf("%v %v", m, err)
		}
	}
	// Waiting for the next input (here: the end), the buffer was given back.
	if _, err := d.Next(); err != io.EOF {
		t.Fatal(err)
	}
	if d.buf != nil {
		t.Fatalf("an idle decoder holds %d bytes", len(d.buf))
	}
}

// TestStreamJunkCounted: bytes skipped in protobuf mode while looking for
// the next frame are reported with the message that follows them.
func TestStreamJunkCounted(t *testing.T) {
	a, b := protoFrame(t, sa("A")), protoFrame(t, sa("B"))
	in := bytes.Join([][]byte{[]byte("junk"), a, {0, 0, 0}, b}, nil)
	d := NewStreamDecoder(bytes.NewReader(in), 0)
	d.SetProtocol(ProtocolV1)
	var junk []int
	for {
		m, err := d.Next()
		if err != nil {
			break
		}
		junk = append(junk, m.Junk)
	}
	if fmt.Sprint(junk) != "[4 3]" {
		t.Fatalf("junk per message %v, want [4 3]", junk)
	}
}

func TestStreamBufferShrinks(t *testing.T) {
	big := strings.Replace(sa("BIG"), "<detail>", "<detail><remarks>"+strings.Repeat("x", 1<<20)+"</remarks>", 1)
	d := NewStreamDecoder(strings.NewReader(big+sa("A")), 2<<20)
	if d.buf != nil {
		t.Fatalf("a new decoder holds a buffer of %d bytes before any input", len(d.buf))
	}
	m, err := d.Next()
	if err != nil || m.Event.UID != "BIG" || m.Size != len(big) {
		t.Fatalf("big message: %v %+v", err, m)
	}
	if len(d.buf) > bigBuffer {
		t.Errorf("buffer still %d bytes after the big message", len(d.buf))
	}
	if m, err := d.Next(); err != nil || m.Event.UID != "A" {
		t.Fatalf("next message: %v", err)
	}
	if _, err := d.Next(); err != io.EOF {
		t.Fatalf("end: %v", err)
	}
	if d.buf != nil {
		t.Error("buffer kept after the end of the stream")
	}
}

type failingReader struct {
	data []byte
	err  error
}

func (r *failingReader) Read(p []byte) (int, error) {
	n := copy(p, r.data)
	r.data = r.data[n:]
	if len(r.data) == 0 {
		return n, r.err
	}
	return n, nil
}

type zeroReader struct{}

func (zeroReader) Read([]byte) (int, error) { return 0, nil }

func TestStreamReaderErrors(t *testing.T) {
	boom := errors.New("connection reset")
	d := NewStreamDecoder(&failingReader{data: []byte(sa("A") + sa("B")), err: boom}, 0)
	for _, uid := range []string{"A", "B"} {
		if m, err := d.Next(); err != nil || m.Event.UID != uid {
			t.Fatalf("want %s, got %v", uid, err)
		}
	}
	for range 2 {
		if _, err := d.Next(); !errors.Is(err, boom) {
			t.Fatalf("error %v, want the reader's (sticky)", err)
		}
	}
	if _, err := NewStreamDecoder(zeroReader{}, 0).Next(); !errors.Is(err, io.ErrNoProgress) {
		t.Fatalf("reader without progress: %v", err)
	}
	d = NewStreamDecoder(strings.NewReader(sa("A")), 10)
	for range 2 {
		if _, err := d.Next(); !errors.Is(err, ErrTooLarge) {
			t.Fatalf("error %v, want sticky ErrTooLarge", err)
		}
	}
}

// TestStreamOverTCP reads captures through a real loopback socket, written
// in small pieces.
func TestStreamOverTCP(t *testing.T) {
	var all []byte
	for _, c := range loadCaptures(t)[:20] {
		all = append(all, c.data...)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	go func() {
		c, err := ln.Accept()
		if err != nil {
			return
		}
		defer c.Close()
		for b := all; len(b) > 0; {
			n := min(len(b), 13)
			if _, err := c.Write(b[:n]); err != nil {
				return
			}
			b = b[n:]
		}
	}()
	conn, err := net.Dial("tcp", ln.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	if err := conn.SetReadDeadline(time.Now().Add(30 * time.Second)); err != nil {
		t.Fatal(err)
	}
	got := decodeStream(conn, 0, ProtocolXML)
	want := decodeStream(bytes.NewReader(all), 0, ProtocolXML)
	if !sameOutcome(want, got) {
		t.Errorf("over TCP:\n%v\nin memory:\n%v", got, want)
	}
}

// errNotReady is a nonblocking reader's "nothing to read now" (netx.ErrWouldBlock).
type errNotReady struct{}

func (errNotReady) Error() string    { return "not ready" }
func (errNotReady) WouldBlock() bool { return true }

// pieceReader returns its chunks one per Read, each followed by a
// would-block, as a nonblocking socket does when input arrives in pieces.
type pieceReader struct {
	chunks  []string
	pending bool // a chunk was returned: the next Read has nothing
}

func (r *pieceReader) Read(p []byte) (int, error) {
	if r.pending || len(r.chunks) == 0 {
		r.pending = false
		if len(r.chunks) == 0 {
			return 0, io.EOF
		}
		return 0, errNotReady{}
	}
	n := copy(p, r.chunks[0])
	if r.chunks[0] = r.chunks[0][n:]; r.chunks[0] == "" {
		r.chunks = r.chunks[1:]
	}
	r.pending = true
	return n, nil
}

// TestStreamNonblocking: with a nonblocking reader, Next returns the
// would-block error whenever input runs out, keeps a message that has only
// partly arrived, holds no buffer while nothing is buffered, and stays
// usable; the decoder never makes a probe.
func TestStreamNonblocking(t *testing.T) {
	a, b := sa("A"), sa("B")
	r := &pieceReader{chunks: []string{a[:40], a[40:] + b[:10], b[10:]}}
	d := NewStreamDecoder(r, 0)
	d.SetNonblocking()
	var got []string
	notReady := 0
	for {
		m, err := d.Next()
		if err == io.EOF {
			break
		}
		var nr errNotReady
		switch {
		case errors.As(err, &nr):
			notReady++
			if len(got) == 0 && d.buf == nil {
				t.Fatal("the first 40 bytes of a message were dropped while waiting")
			}
		case err != nil:
			t.Fatal(err)
		default:
			got = append(got, m.Event.UID)
		}
	}
	if strings.Join(got, ",") != "A,B" || notReady != 2 {
		t.Fatalf("got %v with %d would-blocks, want A,B and 2", got, notReady)
	}
	if d.buf != nil || d.probe != nil {
		t.Fatal("a nonblocking decoder holds a buffer or a probe at the end")
	}

	// Between messages it gives the buffer back.
	r = &pieceReader{chunks: []string{a}}
	d = NewStreamDecoder(r, 0)
	d.SetNonblocking()
	if m, err := d.Next(); err != nil || m.Event.UID != "A" {
		t.Fatalf("%v %v", m, err)
	}
	r.chunks = []string{b} // arrives later
	if _, err := d.Next(); !errors.Is(err, errNotReady{}) {
		t.Fatalf("%v, want would-block", err)
	}
	if d.buf != nil {
		t.Fatal("a waiting nonblocking decoder holds a buffer")
	}
	if m, err := d.Next(); err != nil || m.Event.UID != "B" {
		t.Fatalf("%v %v", m, err)
	}

	// Without SetNonblocking the same error is the reader's error: fatal.
	d = NewStreamDecoder(&pieceReader{chunks: []string{a[:40], a[40:]}}, 0)
	if _, err := d.Next(); !errors.Is(err, errNotReady{}) {
		t.Fatal(err)
	}
	if _, err := d.Next(); !errors.Is(err, errNotReady{}) {
		t.Fatalf("a blocking decoder recovered from a reader error: %v", err)
	}
}
