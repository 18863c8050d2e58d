// Package marti serves the tactical-client API that ATAK, WinTAK and iTAK
// call: over HTTP on 8080 (development only, no authentication) and over
// mutual TLS on 8443 (api.md §4.2–4.4, §5.8), and certificate
// enrollment on 8446 (protocol.md §8).
//
// Today it serves what clients call on every connect (protocol.md §7): the version
// endpoints and the connected-client list. Sync, ExCheck and missions
// arrive with their issues.
//
// Imports: broker, store, cot, geo, pki; never another transport.
package marti
