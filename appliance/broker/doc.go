// Package broker decides who receives what. It owns the connected sessions,
// routing (broadcast, <marti><dest> directed delivery, server-side group
// visibility), the bounded per-session queues with the slow-consumer policy,
// the latest-SA cache replayed to new clients, and the connected-client
// registry. Encoded bytes are shared: each relayed event is encoded at most
// once per wire format, lazily, whatever the number of recipients.
//
// It does no I/O and no SQL: transports (package stream) move bytes, and the
// appliance connects an Observer that persists events after routing.
//
// Imports: package cot only.
package broker
