// Package broker decides who receives what. It owns the connected sessions,
// routing (broadcast, <marti><dest> directed delivery, server-side group
// visibility), the broadcast log every session reads from its own cursor
// with the slow-consumer policy (ring.go), the latest-SA replay and the
// retained events replayed to new clients (retain.go), client identity and
// the binding of a uid to a certificate (identity.go), close reasons, the
// connected-client registry and the counters. Encoded bytes are shared: each
// relayed event is encoded at most once per wire format, whatever the
// number of recipients (XML at publish, for the size check; protobuf
// lazily, by the first writer that needs it).
//
// It does no I/O and no SQL: transports (stream, marti's websocket) move
// bytes, and the appliance connects an Observer that persists events after
// routing.
//
// Imports: cot and logx only.
package broker
