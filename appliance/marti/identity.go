package marti

// Who a client API request is (access.md): the principal the handler put
// in the request's context, the uids it may act for, and who owns and who
// receives what it makes.

import (
	"net/http"

	"outpost/appliance/access"
)

// actFor checks a uid the request acts for, named by field (access.md
// "Uids belong to identities"): on 8443 it must be one of the
// certificate's own (an unbound uid becomes its own); on 8080 it must not be
// bound to a certificate. Its error is always a refusal (403).
func (h *Handler) actFor(r *http.Request, field, uid string) error {
	if h.opts.Broker == nil {
		return nil
	}
	return access.ActFor(h.opts.Broker, access.From(r), field, uid)
}

// owner is the name what the request makes is recorded under (access
// Principal.Owner: "" for an anonymous caller).
func owner(r *http.Request) string { return access.From(r).Owner() }

// str dereferences an optional string field.
func str(p *string) string {
	if p == nil {
		return ""
	}
	return *p
}
