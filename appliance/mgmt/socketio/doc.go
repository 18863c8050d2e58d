// Package socketio is a small Socket.IO server (protocol v5 over Engine.IO
// v4): the websocket transport, and HTTP long polling with its upgrade to
// a websocket (polling.go); the main namespace, events with
// acknowledgements in both directions, the ping/pong heartbeat and clean
// closing (docs/socketio.md). Binary attachments are not served.
//
// It is built for hostile clients: every socket has read and write
// deadlines and a bounded outbound queue drained by its own writer, so a
// client that stops reading is dropped and never blocks a broadcast; a
// malformed, unknown or oversized packet closes that socket only; the
// number of sockets is bounded, and so is the number one address may hold
// before the application marks them authenticated; a socket not marked
// authenticated within a deadline is closed; Shutdown closes every
// session explicitly.
//
// Imports: logx only, of ours.
package socketio
