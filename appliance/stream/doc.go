// Package stream serves CoT streaming connections: port 8087 (plain TCP)
// and port 8089 (mutual TLS) are one Listener type, the second wrapped in
// TLS. It owns the accept loop, each connection's reading side (decode,
// parked on the listener's waiter while idle, the reading pool), its write
// loop (drain the session's queue, encode per the connection's wire format,
// one writev per batch, write deadline, the flushers), and the idle and
// handshake timeouts. What a connection does with each message (pacing,
// ping → pong, protocol negotiation, hand-off to the broker), the close
// reason of a read error and the registry of open connections are the CoT
// session driver's (package cotsession), shared with the other transports.
//
// Imports: broker, cot, cotsession, logx and netx (the listener, the
// waiter and the writes that never wait). Never another transport.
package stream
