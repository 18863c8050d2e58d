package access

import (
	"context"
	"fmt"
	"net/http"
	"sort"
	"strings"

	"outpost/appliance/httpapi"
)

// Rule is who may call a route (access.md "Route matrix").
type Rule uint8

// The rules. The management listener's: Public, AllowList, Any, Self,
// Admin. The client API's: Client, CertificateOnly. Enrollment's: Password.
const (
	Public          Rule = iota + 1 // no credential
	AllowList                       // an address in AllowedCLIIPs, or an administrator's token (checked by the handler)
	Any                             // any valid token; the answer is filtered by the caller's groups
	Self                            // an administrator, or a user about its own record (checked by the handler)
	Admin                           // administrators only
	Client                          // whoever the client listener admits: anonymous on 8080, a certificate on 8443
	CertificateOnly                 // a client certificate (8443) only
	Password                        // HTTP Basic of a system user (enrollment)
)

var ruleNames = map[Rule]string{Public: "public", AllowList: "allow-list", Any: "any", Self: "self", Admin: "admin",
	Client: "client", CertificateOnly: "certificate", Password: "password"}

func (r Rule) String() string {
	if n, ok := ruleNames[r]; ok {
		return n
	}
	return "unknown"
}

// ParseRule reads a rule's name (the matrix in docs/access.md).
func ParseRule(s string) (Rule, bool) {
	for r, n := range ruleNames {
		if n == s {
			return r, true
		}
	}
	return 0, false
}

// errNoToken is the refusal of a caller without a credential where a token
// is needed.
var errNoToken = fmt.Errorf("%w: authentication required: send the header Authorization: Bearer followed by your token", ErrUnauthorized)

// Check reports whether p may call a route of rule r: nil, or
// ErrUnauthorized (no credential where one is needed) or ErrForbidden. The
// handlers of AllowList and Self routes check the rest themselves.
func Check(r Rule, p Principal) error {
	switch r {
	case Public, Client, AllowList, Password:
		return nil
	case CertificateOnly:
		if p.Serial == nil {
			return fmt.Errorf("%w: this needs a client certificate: connect to the HTTPS port (8443) with one", ErrForbidden)
		}
		return nil
	case Any, Self:
		if !p.Authenticated() {
			return errNoToken
		}
		return nil
	case Admin:
		if !p.Authenticated() {
			return errNoToken
		}
		if !p.Admin() {
			return fmt.Errorf("%w: only an administrator may do this", ErrForbidden)
		}
		return nil
	}
	return fmt.Errorf("%w: the route has no rule", ErrForbidden)
}

// SelfOrAdmin is the check of a Self route about the system user uid.
func SelfOrAdmin(p Principal, uid string) error {
	if p.Admin() || p.IsUser(uid) {
		return nil
	}
	return fmt.Errorf("%w: a user may see and change only its own record", ErrForbidden)
}

type principalKey struct{}

// With returns ctx carrying p.
func With(ctx context.Context, p Principal) context.Context {
	return context.WithValue(ctx, principalKey{}, p)
}

// From is the principal a listener's middleware resolved for r (anonymous
// when there is none).
func From(r *http.Request) Principal {
	if p, ok := r.Context().Value(principalKey{}).(Principal); ok {
		return p
	}
	return Anon()
}

// Routes registers a mux's routes, each with its rule, and enforces the
// rule before the handler runs (the principal is the one With put in the
// request's context). Rules lists them for the matrix test.
type Routes struct {
	mux   *httpapi.Mux
	rules map[string]Rule
	subs  *[]string // the path prefixes served by a mux of their own (Sub)
}

// NewRoutes wraps mux.
func NewRoutes(mux *httpapi.Mux) *Routes {
	return &Routes{mux: mux, rules: map[string]Rule{}, subs: new([]string)}
}

// Sub registers routes on another mux and keeps their rules with rt's, so
// that one matrix holds both: for a listener that serves the paths under
// prefix from a mux of their own, whose patterns would conflict with the
// others' in one ServeMux (the mission guid routes next to the name routes).
func (rt *Routes) Sub(prefix string, mux *httpapi.Mux) *Routes {
	*rt.subs = append(*rt.subs, prefix)
	return &Routes{mux: mux, rules: rt.rules, subs: rt.subs}
}

// Prefixes are the path prefixes whose routes a mux of their own serves.
func (rt *Routes) Prefixes() []string { return append([]string(nil), *rt.subs...) }

// Handle registers h for pattern ("GET /path") under rule r.
func (rt *Routes) Handle(pattern string, r Rule, h httpapi.HandlerFunc) {
	if _, dup := rt.rules[pattern]; dup {
		panic("access: route registered twice: " + pattern)
	}
	rt.rules[pattern] = r
	rt.mux.Handle(pattern, httpapi.HandlerFunc(func(w http.ResponseWriter, req *http.Request) error {
		if err := Check(r, From(req)); err != nil {
			Refuse(w, req, err)
			return nil
		}
		return h(w, req)
	}))
}

// Rule returns the rule pattern was registered with.
func (rt *Routes) Rule(pattern string) (Rule, bool) {
	r, ok := rt.rules[pattern]
	return r, ok
}

// Patterns lists the registered patterns, sorted by path then method.
func (rt *Routes) Patterns() []string {
	out := make([]string, 0, len(rt.rules))
	for p := range rt.rules {
		out = append(out, p)
	}
	sort.Slice(out, func(i, j int) bool {
		mi, pi, _ := strings.Cut(out[i], " ")
		mj, pj, _ := strings.Cut(out[j], " ")
		if pi != pj {
			return pi < pj
		}
		return mi < mj
	})
	return out
}

// Refuse answers a failed check: 401 with a WWW-Authenticate challenge, or
// 403, with what is wrong.
func Refuse(w http.ResponseWriter, r *http.Request, err error) {
	if status, _, ok := httpapi.Refusal(err); ok && status == http.StatusUnauthorized {
		w.Header().Set("WWW-Authenticate", `Bearer realm="Outpost"`)
	}
	httpapi.Fail(w, r, err, "access check failed")
}
