// Package cotsession is the CoT session driver: what every transport that
// carries CoT between a client and the broker does the same way, so that
// the streaming ports (8087/8089, package stream), CoT over websocket
// (package marti) and the transports still to come (the multicast mesh
// bridge, federation links) do it once. It owns:
//
//   - handling one decoded message (Session.Handle): pacing the client
//     through its rate buckets, answering pings on that session only,
//     protobuf negotiation where the transport reads a stream that can
//     switch (Session.Negotiate), consuming control types, publishing to
//     the broker, and counting refused and malformed events, logging each
//     kind once per connection through a rate-limited logger;
//   - the close reason a read error means (Session.ReadErrorReason);
//   - the frames a writer may send (Session.Sendable);
//   - the registry of a listener's open connections (Driver): places for
//     connections being set up, CloseWhere for revocations, Shutdown with
//     a drain budget and then the cut of what is left;
//   - the counters of all of it (Driver.Stats).
//
// What stays with each transport is what differs: reading and framing, the
// writer, keepalives and idle timeouts, and how a connection is cut.
// architecture.md "One session driver" says how a transport plugs in.
//
// Imports (of this module): broker, cot, logx, rate. Never a transport.
package cotsession
