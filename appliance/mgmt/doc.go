// Package mgmt serves the management listener (port 19023): the REST API of
// api.md §4.1, the socket.io channel (api.md §6.1) and the web console's
// files. Authentication is api.md §5 (bearer tokens; /Alive open;
// /Clients by IP allow-list).
//
// So far it serves /Alive and /Clients and answers every other path with a
// JSON 404; the other API routes arrive with their issues.
//
// Imports: broker, store, cot, geo, pki; never another transport.
package mgmt
