// Package mgmt serves the management listener (port 19023): the REST API of
// api.md §4.1 and, later, the socket.io channel (api.md §6.1) and the web
// console's files.
//
//   - handler.go: options, routes and their rules (access.md "Route
//     matrix"), maintenance (audit retention, expired login tokens);
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
//   - decode.go: field checks and the mapping of store errors to answers.
//
// Imports: broker, store, objects, geo, pki, httpapi, logx; never another
// transport.
package mgmt
