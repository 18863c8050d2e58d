// Package takproto holds the Go code generated from takmessage.proto, the TAK
// protocol version 1 messages (protocol.md §3). It is generated, never edited by
// hand; package cot converts between these messages and its Event model and
// carries a hand-written encoder and decoder that is tested byte-compatible
// with this code.
//
// It imports only google.golang.org/protobuf.
package takproto
