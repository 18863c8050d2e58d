// Package access owns who may see and do what (docs/access.md): the
// principal behind every request and connection (an API user, a system
// user known by a token or a certificate, a certificate principal, an
// anonymous client), its role, its group masks, the rule each HTTP route is
// registered with and the check of it, the acting-uid check of the client
// API, and the budgets every password check passes. The management API,
// the client API, the CoT listeners, the socket.io channel and the command
// line use it; nothing else decides access.
//
// Imports (of this module): store, httpapi, rate, and the leaves.
package access
