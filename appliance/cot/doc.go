// Package cot owns the Cursor-on-Target event model and its codecs: the XML
// stream decoder and encoder ("protocol version 0"), TAK protocol version 1
// (protobuf) with its stream and mesh framing, XML⇄protobuf conversion, and
// the protocol negotiation state of a streaming connection.
//
// It opens no sockets and imports no other package of this module. Besides
// the standard library it imports only google.golang.org/protobuf/encoding/protowire:
// the protobuf codec is hand-written against takproto/takmessage.proto, and
// its tests check it byte for byte against the generated takproto package
// (which only tests import).
//
// Files, by concern:
//   - event.go: the model (Event, Point, Detail and its typed views).
//   - xmlscan.go, xmlchars.go: the hand-written XML tokenizer.
//   - decode.go, detail.go, timefmt.go: Decode (one XML event) and the
//     canonical rebuild of odd detail content; encode.go: AppendXML.
//   - proto.go, protowire.go: MarshalProto and DecodeProto (protocol.md §3).
//   - frame.go: stream and mesh framing; stream.go: StreamDecoder.
//   - control.go: control types, pong, departure, WithoutMarti, NewUID;
//     negotiate.go: Negotiator (protocol.md §4).
//
// Decoded events own their memory and are treated as read-only once shared.
// Detail.XML is always well-formed: verbatim when the source was, rebuilt
// canonically when it held something odd (a comment inside a start tag, a
// bare '&'). Malformed input yields a *SyntaxError, never a panic.
//
// The wire rules implemented here are described in docs/protocol.md; comments
// cite them as "protocol.md §N".
package cot
