package main

import (
	"bytes"
	"encoding/binary"
	"errors"
	"strconv"
)

// The load tool does not decode what it receives: it cuts the stream into
// messages and looks for a few byte patterns, which costs a small fraction
// of a full CoT decode (measured in scan_test.go's benchmarks). The server
// writes every XML message with the same encoder (protocol.md §2: an
// optional declaration, then one <event> ending in </event>) and every
// protobuf message as a stream frame (protocol.md §3: 0xBF, a varint length,
// the TakMessage), so cutting on those is exact for the server's output.

// maxMessage is the longest message the reader accepts: the server relays
// nothing larger than 64 KiB (protocol.md §2), plus the frame header.
const maxMessage = 64<<10 + 16

var (
	endEvent = []byte("</event>")

	// markerPrefix opens the remarks of every SA the load tool sends:
	// "<remarks>olt SENDER SEQ SENT FLAG[ PADDING]</remarks>", where SENDER
	// is the client's index, SEQ its SA counter (0: the SA it sends on
	// connect), SENT the send time in Unix nanoseconds and FLAG "m" when the
	// SA was sent inside the measurement window ("-" otherwise). The server
	// relays detail verbatim, in XML and in protobuf's xmlDetail.
	markerPrefix = []byte("<remarks>olt ")

	typeOffer     = []byte("t-x-takp-v")
	typeAnswer    = []byte("t-x-takp-r")
	answerTrue    = []byte(`status="true"`)
	typePong      = []byte("t-x-c-t-r")
	typeDeparture = []byte("t-x-d-d")
)

const frameMagic = 0xBF

var errFraming = errors.New("stream framing broken")

// cutXML returns the length of the first complete XML message in b, or 0
// when b holds none yet. from is how far b was already searched without
// finding </event> (so a partial message is not searched again).
func cutXML(b []byte, from int) int {
	from = max(0, from-len(endEvent)+1)
	if from >= len(b) {
		return 0
	}
	i := bytes.Index(b[from:], endEvent)
	if i < 0 {
		return 0
	}
	return from + i + len(endEvent)
}

// cutFrame returns the length of the first complete protobuf stream frame
// in b and the offset of its payload, or n == 0 when b holds only part of
// one. A frame that does not start with 0xBF or announces more than
// maxMessage bytes breaks the stream.
func cutFrame(b []byte) (n, payload int, err error) {
	if len(b) == 0 {
		return 0, 0, nil
	}
	if b[0] != frameMagic {
		return 0, 0, errFraming
	}
	l, k := binary.Uvarint(b[1:])
	switch {
	case k == 0:
		if len(b) > 1+binary.MaxVarintLen64 {
			return 0, 0, errFraming
		}
		return 0, 0, nil
	case k < 0, l > maxMessage:
		return 0, 0, errFraming
	}
	total := 1 + k + int(l)
	if len(b) < total {
		return 0, 0, nil
	}
	return total, 1 + k, nil
}

// mark is what a load SA's remarks say.
type mark struct {
	sender   int
	seq      uint32
	sent     int64 // Unix nanoseconds
	measured bool
}

// findMark reads the load tool's remarks in one message (XML text or a
// TakMessage, whose xmlDetail holds them verbatim).
func findMark(msg []byte) (mark, bool) {
	i := bytes.Index(msg, markerPrefix)
	if i < 0 {
		return mark{}, false
	}
	b := msg[i+len(markerPrefix):]
	var m mark
	var v uint64
	var ok bool
	if v, b, ok = readUint(b); !ok || v > 1<<30 {
		return mark{}, false
	}
	m.sender = int(v)
	if v, b, ok = readUint(b); !ok || v > 1<<32-1 {
		return mark{}, false
	}
	m.seq = uint32(v)
	if v, b, ok = readUint(b); !ok || v > 1<<62 {
		return mark{}, false
	}
	m.sent = int64(v)
	if len(b) == 0 {
		return mark{}, false
	}
	m.measured = b[0] == 'm'
	return m, true
}

// readUint parses a decimal number followed by one space.
func readUint(b []byte) (uint64, []byte, bool) {
	var v uint64
	i := 0
	for ; i < len(b) && i < 20; i++ {
		c := b[i]
		if c == ' ' {
			break
		}
		if c < '0' || c > '9' {
			return 0, nil, false
		}
		v = v*10 + uint64(c-'0')
	}
	if i == 0 || i >= len(b) || b[i] != ' ' {
		return 0, nil, false
	}
	return v, b[i+1:], true
}

// appendRemarks appends the load tool's remarks element with pad bytes of
// padding.
func appendRemarks(dst []byte, sender int, seq uint32, sent int64, measured bool, pad int) []byte {
	dst = append(dst, markerPrefix...)
	dst = strconv.AppendInt(dst, int64(sender), 10)
	dst = append(dst, ' ')
	dst = strconv.AppendUint(dst, uint64(seq), 10)
	dst = append(dst, ' ')
	dst = strconv.AppendInt(dst, sent, 10)
	if measured {
		dst = append(dst, " m"...)
	} else {
		dst = append(dst, " -"...)
	}
	if pad > 0 {
		dst = append(dst, ' ')
		for range pad {
			dst = append(dst, 'x')
		}
	}
	return append(dst, "</remarks>"...)
}
