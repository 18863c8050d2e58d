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
// appliance/excheck). The EnrollmentHandler owns enrollment (enroll.go,
// enroll_auth.go, enroll_csr.go, enroll_invite.go, enroll_oauth.go).
//
// Every route is an httpapi.HandlerFunc registered with its rule
// (access.Routes.Handle): it writes its answer or returns its failure,
// which httpapi.Fail answers (architecture.md "Conventions"); the
// enrollment port adds its Basic challenge and the OAuth error shape first
// (enrollEdge). What marti uses of the store is declared in stores.go, one
// interface per area, each listing exactly the methods called.
//
// Imports: access, broker, cot, cotsession, diskspace, excheck, fault,
// httpapi, logx, pki, qr, rate, store, users; never another transport.
package marti
