package federation

import (
	"encoding/binary"
	"errors"
	"fmt"
	"io"

	"google.golang.org/protobuf/proto"

	"outpost/appliance/federation/fedproto"
)

// Federation v1's framing (docs/federation.md "Federation v1"): on the TLS
// stream, each message is a FederatedEvent (fig.proto) preceded by its
// length, a 4-byte big-endian integer, in both directions and with nothing
// else on the stream (no greeting, no acknowledgement, no heartbeat).
// Facts from the official server's NioNettyFederationServerHandler (its
// writer puts the length with ByteBuffer.putInt, big-endian by default,
// then the message's bytes; its reader takes getInt, then that many bytes,
// and parses them as a FederatedEvent) and the Federation Hub's
// NioNettyFederationHubServerHandler, which frames the same way.
//
// The official reader sets no limit on the length; Outpost does
// (Config.MaxMessage): a larger frame, or a negative length, ends the
// connection, since nothing after it can be trusted to be a frame. A frame
// of length 0 is an empty FederatedEvent: Outpost sends it as a keep-alive
// and ignores it when received (so does the official server: an event
// with neither event nor contact does nothing there).

// v1HeaderLen is the size of a frame's length prefix.
const v1HeaderLen = 4

// v1FrameError is a frame whose announced length is negative or larger
// than the limit: the connection ends.
type v1FrameError struct {
	length int64 // as announced (a signed 32-bit integer)
	limit  int
}

func (e *v1FrameError) Error() string {
	if e.length < 0 {
		return fmt.Sprintf("federation v1 frame with a negative length (%d)", e.length)
	}
	return fmt.Sprintf("federation v1 frame of %d bytes is larger than the limit of %d", e.length, e.limit)
}

// errV1Truncated is a stream that ended inside a frame.
var errV1Truncated = errors.New("federation v1 stream ended inside a frame")

// readV1Frame reads one frame's message from r into buf (grown as needed;
// the returned slice aliases it). A frame whose length is negative or over
// limit is a *v1FrameError; a stream that ends inside a frame is
// errV1Truncated; one that ends between frames is io.EOF.
func readV1Frame(r io.Reader, buf []byte, limit int) ([]byte, error) {
	var hdr [v1HeaderLen]byte
	if n, err := io.ReadFull(r, hdr[:]); err != nil {
		if errors.Is(err, io.ErrUnexpectedEOF) || (errors.Is(err, io.EOF) && n > 0) {
			return nil, errV1Truncated
		}
		return nil, err
	}
	length := int64(int32(binary.BigEndian.Uint32(hdr[:])))
	if length < 0 || length > int64(limit) {
		return nil, &v1FrameError{length: length, limit: limit}
	}
	if cap(buf) < int(length) {
		buf = make([]byte, length)
	}
	buf = buf[:length]
	if _, err := io.ReadFull(r, buf); err != nil {
		if errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) {
			return nil, errV1Truncated
		}
		return nil, err
	}
	return buf, nil
}

// appendV1Frame appends fe framed (its length, then its bytes) to dst;
// nil fe is the empty frame (a keep-alive).
func appendV1Frame(dst []byte, fe *fedproto.FederatedEvent, limit int) ([]byte, error) {
	start := len(dst)
	dst = append(dst, 0, 0, 0, 0)
	if fe != nil {
		var err error
		if dst, err = (proto.MarshalOptions{}).MarshalAppend(dst, fe); err != nil {
			return dst[:start], err
		}
	}
	n := len(dst) - start - v1HeaderLen
	if n > limit {
		return dst[:start], &v1FrameError{length: int64(n), limit: limit}
	}
	binary.BigEndian.PutUint32(dst[start:], uint32(n))
	return dst, nil
}

// decodeV1 parses one frame's message (which it does not keep).
func decodeV1(msg []byte) (*fedproto.FederatedEvent, error) {
	fe := &fedproto.FederatedEvent{}
	if err := proto.Unmarshal(msg, fe); err != nil {
		return nil, err
	}
	return fe, nil
}
