// Package mgmt serves the management listener (port 19023): the REST API of
// api.md §4.1, the socket.io channel (api.md §6.1) and the web console's
// files.
//
// Every route is an httpapi.HandlerFunc registered with its rule
// (access.Routes.Handle): it writes its answer, or returns its failure for
// httpapi.Fail to answer (a refusal, or a fault of ours given the route's
// 500 text with httpapi.Internal).
//
//   - handler.go: options, routes and their rules (access.md "Route
//     matrix"), maintenance (audit retention, expired login tokens);
//   - stores.go: what the API uses of the store, area by area (the
//     interfaces Options takes);
//   - auth.go: the one authentication middleware (api.md §5.1-5.3): the
//     caller's principal, and the password guard's count of unknown tokens;
//   - groups.go, sharing.go: whoami, roles, groups, and the groups and
//     owner of what a request makes (access.md);
//   - audit.go: records of calls made as system users (api.md §5.5);
//   - login.go: POST /api/login;
//   - users*.go, certpkg.go: system users and their certificate packages;
//   - datapackages.go, upload.go: /DataPackageTable;
//   - missions.go, missions_json.go: GET /api/missions and
//     /api/missions/{name}, the missions as the console shows them;
//   - clients.go: GET /Clients (IP allow-list, api.md §5.4);
//   - geoobjects.go, emergencies.go, position.go: /ManageGeoObject and
//     /ManageEmergency (api.md §2.4–2.10): request checks, coordinates and
//     addresses; package objects does the work;
//   - invitations.go: enrollment invitations; certsend.go: a new user's
//     certificate package offered to its device and its download link;
//   - federation*.go: /api/federation and the federates managed at run
//     time, with their group mappings;
//   - mapview.go, serverinfo.go, metrics.go: the console's map, the
//     server's state and logs, GET /metrics;
//   - console.go, tiles.go: the console's files, the offline basemap;
//   - channel*.go: the socket.io channel's events (api.md §6.1);
//   - decode.go: field checks and the refusals the routes share.
//
// Imports: broker, store, cot, objects, access, users, geo, pki, qr,
// httpapi, diskspace, sysinfo, its own socketio, and the leaves; never
// another transport.
package mgmt
