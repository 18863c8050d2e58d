package federation

import (
	"bytes"
	"encoding/binary"
	"errors"
	"io"
	"testing"

	"google.golang.org/protobuf/proto"

	"outpost/appliance/federation/fedproto"
)

func sampleV1() *fedproto.FederatedEvent {
	return &fedproto.FederatedEvent{
		Event:              &fedproto.GeoEvent{Uid: "U-1", Type: "a-f-G", SendTime: 1, StartTime: 1, StaleTime: 2, Lat: 1.5, Other: "<detail/>"},
		FederateProvenance: []*fedproto.FederateProvenance{{FederationServerId: "outpost-x"}},
		FederateGroups:     []string{"__ANON__"}}
}

// A frame is the message's length, 4 bytes big-endian, then the message:
// written and read back, several on one stream, the empty frame included.
func TestV1FrameRoundTrip(t *testing.T) {
	fe := sampleV1()
	var stream []byte
	var err error
	for _, m := range []*fedproto.FederatedEvent{fe, nil, fe} {
		if stream, err = appendV1Frame(stream, m, 1<<20); err != nil {
			t.Fatal(err)
		}
	}
	body, _ := proto.Marshal(fe)
	if got := binary.BigEndian.Uint32(stream); got != uint32(len(body)) || !bytes.Equal(stream[4:4+len(body)], body) {
		t.Fatalf("frame header %d for a body of %d", got, len(body))
	}
	r := bytes.NewReader(stream)
	for i, wantEmpty := range []bool{false, true, false} {
		msg, err := readV1Frame(r, nil, 1<<20)
		if err != nil {
			t.Fatalf("frame %d: %v", i, err)
		}
		if wantEmpty != (len(msg) == 0) {
			t.Fatalf("frame %d: %d bytes", i, len(msg))
		}
		if !wantEmpty {
			got, err := decodeV1(msg)
			if err != nil || !proto.Equal(got, fe) {
				t.Fatalf("frame %d: %v %v", i, got, err)
			}
		}
	}
	if _, err := readV1Frame(r, nil, 1<<20); !errors.Is(err, io.EOF) {
		t.Fatalf("after the last frame: %v", err)
	}
}

// Bad input: a length over the limit or negative is a frame error (the
// connection ends); a stream ending inside the header or the body is
// truncated; a body that is not a FederatedEvent fails to decode (only
// that frame is lost); an event too large to send is refused.
func TestV1FrameErrors(t *testing.T) {
	frame := func(n uint32, body []byte) []byte { return append(binary.BigEndian.AppendUint32(nil, n), body...) }
	var fe *v1FrameError
	if _, err := readV1Frame(bytes.NewReader(frame(101, make([]byte, 101))), nil, 100); !errors.As(err, &fe) || fe.length != 101 {
		t.Fatalf("oversized: %v", err)
	}
	if _, err := readV1Frame(bytes.NewReader(frame(0xFFFFFFFF, nil)), nil, 100); !errors.As(err, &fe) || fe.length != -1 {
		t.Fatalf("negative: %v", err)
	}
	if _, err := readV1Frame(bytes.NewReader([]byte("GET / HTTP/1.1\r\n")), nil, 4<<20); !errors.As(err, &fe) {
		t.Fatalf("an HTTP request: %v", err)
	}
	for name, b := range map[string][]byte{"header": {0, 0}, "body": frame(10, []byte("abc"))} {
		if _, err := readV1Frame(bytes.NewReader(b), nil, 100); !errors.Is(err, errV1Truncated) {
			t.Fatalf("truncated %s: %v", name, err)
		}
	}
	if _, err := decodeV1([]byte{0xFF, 0xFF, 0xFF}); err == nil {
		t.Fatal("garbage decoded")
	}
	if _, err := appendV1Frame(nil, sampleV1(), 10); !errors.As(err, &fe) {
		t.Fatalf("sending an event over the limit: %v", err)
	}
}

// FuzzV1Frames reads any byte stream as frames: never a panic, never a
// frame over the limit, and what decodes encodes and reads back the same.
func FuzzV1Frames(f *testing.F) {
	good, _ := appendV1Frame(nil, sampleV1(), 1<<20)
	f.Add(good)
	f.Add(append(append([]byte{}, good...), 0, 0, 0, 0))
	f.Add([]byte{0, 0, 0, 3, 0xFF, 0xFF, 0xFF})
	f.Add([]byte{0x7F, 0xFF, 0xFF, 0xFF})
	f.Add([]byte{0, 0})
	const limit = 4096
	f.Fuzz(func(t *testing.T, data []byte) {
		r := bytes.NewReader(data)
		var buf []byte
		for {
			msg, err := readV1Frame(r, buf, limit)
			if err != nil {
				return
			}
			if len(msg) > limit {
				t.Fatalf("a frame of %d bytes over the limit", len(msg))
			}
			buf = msg[:0]
			fe, err := decodeV1(msg)
			if err != nil {
				continue
			}
			again, err := appendV1Frame(nil, fe, 1<<20)
			if err != nil {
				t.Fatal(err)
			}
			msg2, err := readV1Frame(bytes.NewReader(again), nil, 1<<20)
			if err != nil {
				t.Fatal(err)
			}
			fe2, err := decodeV1(msg2)
			if err != nil || !proto.Equal(fe, fe2) {
				t.Fatalf("round trip: %v %v", fe2, err)
			}
		}
	})
}
