package cot

import (
	"errors"
	"fmt"
)

// ErrTooLarge is returned by StreamDecoder.Next when one message is larger
// than the decoder's limit (protocol.md §2: the official server caps a message at
// 8 MiB). It is fatal: the caller disconnects the client.
var ErrTooLarge = errors.New("cot: message exceeds the size limit")

// ErrNoEvent is returned by DecodeProto when the TakMessage carries no
// cotEvent (a pure takControl message).
var ErrNoEvent = errors.New("cot: protobuf message carries no cotEvent")

// SyntaxError reports one malformed message. It is not fatal for a stream:
// the message was skipped and StreamDecoder.Next can be called again.
type SyntaxError struct {
	// Offset is the byte offset, within the message, where the problem was
	// found (for protobuf messages, within the serialized TakMessage).
	Offset int
	// Msg says what is wrong, in words.
	Msg string
}

func (e *SyntaxError) Error() string {
	return fmt.Sprintf("cot: syntax error at byte %d: %s", e.Offset, e.Msg)
}

// errAt builds a SyntaxError at offset off.
func errAt(off int, format string, args ...any) error {
	if len(args) == 0 {
		return &SyntaxError{Offset: off, Msg: format}
	}
	return &SyntaxError{Offset: off, Msg: fmt.Sprintf(format, args...)}
}

// quoteName renders an element or attribute name for an error message,
// shortened so that hostile input cannot make error text huge.
func quoteName(b []byte) string {
	const max = 40
	if len(b) > max {
		return fmt.Sprintf("%q...", b[:max])
	}
	return fmt.Sprintf("%q", b)
}
