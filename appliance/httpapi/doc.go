// Package httpapi holds the conventions every HTTP interface of Outpost
// shares (docs/api.md "Conventions"): JSON responses, the {"message": ...}
// error body, one timestamp format, request-body limits with field-naming
// decode errors, JSON 404 and 405 answers for a ServeMux, and the client's
// address. The management API (mgmt) and the client API (marti) both use it,
// so the two never drift apart.
//
// Imports: logx only.
package httpapi
