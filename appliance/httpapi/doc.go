// Package httpapi holds the conventions every HTTP interface of Outpost
// shares (docs/api.md "Conventions"): JSON responses, the {"message": ...}
// error body, one timestamp format, request-body limits with field-naming
// decode errors, JSON 404 and 405 answers for a ServeMux, and the client's
// address; the one handler shape (HandlerFunc) whose failures reach the
// one error edge (Fail); and the HTTP listener every HTTP port is served by
// (listener.go). The management API (mgmt) and the client API (marti) both
// use it, so the two never drift apart.
//
// Imports: cot (its time format), logx, diskspace (the upload edge), netx
// (the listener's connection intake).
package httpapi
