// Package federation is TAK federation v2 (docs/federation.md): the gRPC
// FederatedChannel service that federates connect to (mutual TLS, port 9001
// by convention) and the client that connects out to configured federates
// with back-off. Each federation link is one more kind of CoT session
// (architecture.md "One session driver"): what the link receives is
// published through cotsession sessions of the link (one per remote
// contact, so that chat addressed to a remote callsign reaches it, and one
// for everything else, which also reads what goes out), all marked with the
// link's broker.SessionInfo.Link so that nothing returns to the link it
// came from. Provenance, hop limits and a memory of recent events keep each
// event to one delivery in a loop of servers. The relay never waits on a
// federate: what a link cannot take at once is dropped and counted.
//
// Imports (of this module): broker, cot, cotsession, logx and its own
// generated federation/fedproto.
package federation
