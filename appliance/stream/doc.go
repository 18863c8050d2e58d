// Package stream serves CoT streaming connections: port 8087 (plain TCP)
// and port 8089 (mutual TLS) are one Listener type, the second wrapped in
// TLS. It owns the accept loop, each connection's read loop (decode, ping →
// pong, protocol negotiation, hand-off to the broker) and write loop
// (drain the session's queue, encode per the connection's wire format, one
// writev per batch, write deadline), idle and handshake timeouts, and the
// close reasons of a connection.
//
// Imports: broker, cot and pki (for the TLS handshake listener and client
// identities). Never another transport.
package stream
