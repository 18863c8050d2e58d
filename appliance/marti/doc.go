// Package marti serves the tactical-client API that ATAK, WinTAK, iTAK and
// web clients call: over HTTP on 8080 (development only, no
// authentication) and over mutual TLS on 8443 (api.md §4.2–4.4, §5.8), one
// Handler for both; and certificate enrollment on 8446 (protocol.md §8).
//
// The Handler owns what clients call on connect (connect.go), enterprise
// sync (sync_upload.go, sync_read.go: files streamed through the store's
// blobs), video connections (video.go) and CoT over websocket on 8443
// (websocket.go, websocket_conn.go: broker sessions like those of the CoT
// listeners, driven by the same cotsession driver), missions (mission_routes.go and the mission_*.go files:
// contents, logs, subscriptions, the CoT notifications of mission_notify.go
// and mission_record.go, which adds the uids of mission-addressed CoT to
// their missions off the relay's path) and ExCheck checklists
// (excheck_routes.go, excheck_checklists.go, reading documents with
// appliance/excheck).
//
// Imports: broker, store, cot, cotsession, excheck, httpapi, logx, pki;
// never another transport.
package marti
