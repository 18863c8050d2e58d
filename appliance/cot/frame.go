package cot

import (
	"bytes"
	"encoding/binary"
	"errors"
)

// TAK protocol v1 framing (protocol.md §3).
const (
	// MaxProtoFrame is the longest stream frame payload a reader accepts;
	// a longer length is taken as corruption (protocol.md §3).
	MaxProtoFrame = 64 << 10

	frameMagic = 0xBF
)

var meshHeader = []byte{frameMagic, 0x01, frameMagic}

// AppendStreamFrame appends one stream frame (TCP/TLS): 0xBF, the payload
// length as an unsigned varint, the payload.
func AppendStreamFrame(dst, payload []byte) []byte {
	dst = append(dst, frameMagic)
	dst = binary.AppendUvarint(dst, uint64(len(payload)))
	return append(dst, payload...)
}

// AppendMeshFrame appends one mesh datagram (UDP): 0xBF 0x01 0xBF, then the
// payload.
func AppendMeshFrame(dst, payload []byte) []byte {
	dst = append(dst, meshHeader...)
	return append(dst, payload...)
}

// ParseMeshFrame returns the TakMessage of a mesh datagram. The result
// aliases datagram.
func ParseMeshFrame(datagram []byte) ([]byte, error) {
	if !bytes.HasPrefix(datagram, meshHeader) {
		if len(datagram) >= 3 && datagram[0] == frameMagic && datagram[2] == frameMagic {
			return nil, errors.New("cot: mesh datagram has unsupported protocol version")
		}
		return nil, errors.New("cot: not a TAK protocol mesh datagram (no 0xBF 0x01 0xBF header)")
	}
	return datagram[len(meshHeader):], nil
}
