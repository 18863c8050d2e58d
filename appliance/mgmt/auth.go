package mgmt

// Authentication of the management API (api.md §5.1-5.3, access.md): one
// middleware in front of every route resolves the caller to a principal
// (access.Directory: API users, then system users, then login tokens; looked
// up per request, never cached, so a token revoked by `outpost token revoke`
// or a rotated user token stops working at once), then the route's rule
// (access.Routes) decides. Unknown tokens count against the client address
// in the password guard, with failed logins (access.Guard); an address past
// its failures gets 429 with Retry-After. Calls authenticated as a system user are audited (audit.go).

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"net/netip"
	"strings"
	"time"

	"outpost/appliance/access"
	"outpost/appliance/httpapi"
	"outpost/appliance/logx"
)

// bearerToken reads "Authorization: Bearer <token>" (scheme case-insensitive).
func bearerToken(r *http.Request) (string, bool) {
	h := r.Header.Get("Authorization")
	scheme, token, ok := strings.Cut(strings.TrimSpace(h), " ")
	if !ok || !strings.EqualFold(scheme, "Bearer") {
		return "", false
	}
	token = strings.TrimSpace(token)
	return token, token != ""
}

// authenticate is the middleware: it puts the caller's principal in the
// request's context (anonymous without a token). A public route is served
// whatever the token; on any other route an unknown token is a 401.
func (a *API) authenticate(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		rule, routed := a.ruleFor(r)
		// Public and allow-list routes decide without a token: a bad one
		// does not stop them.
		lenient := rule == access.Public || rule == access.AllowList
		token, hasToken := bearerToken(r)
		if !hasToken || a.opts.Directory == nil {
			if !routed && rule != access.Public {
				// No route answers this: without a token the caller
				// learns nothing about which paths exist.
				access.Refuse(w, r, access.Check(access.Any, access.Anon()))
				return
			}
			next.ServeHTTP(w, r.WithContext(access.With(r.Context(), access.Anon())))
			return
		}
		addr := httpapi.ClientAddr(r)
		if wait, blocked := a.opts.Guard.Blocked(addr); blocked && !lenient {
			a.refuseBlocked(w, r, addr, wait)
			return
		}
		p, err := a.opts.Directory.Token(r.Context(), token, a.opts.Now())
		switch {
		case errors.Is(err, access.ErrUnauthorized):
			if lenient {
				next.ServeHTTP(w, r.WithContext(access.With(r.Context(), access.Anon())))
				return
			}
			a.refuseToken(w, r, addr)
			return
		case errors.Is(err, context.Canceled):
			return // the client went away
		case err != nil:
			// A fault of ours before any route runs: answered by the one
			// edge, logged to this API's logger (no Mux has given one yet).
			httpapi.Fail(w, httpapi.WithLogger(r, a.log), fmt.Errorf("bearer token could not be checked: %w", err), usersError)
			return
		}
		p.SeesAll = p.Admin() // access.md "Groups": an administrator reads every group here
		r = r.WithContext(access.With(r.Context(), p))
		if p.Kind == access.SystemUser && !pollingRead(r) && rule != access.Public {
			a.audited(w, r, p, next) // api.md §5.5
			return
		}
		next.ServeHTTP(w, r)
	})
}

// ruleFor is the rule of the route r reaches, and whether one does. A path
// no route serves takes the rule Any (a token is needed to learn it does not
// exist), unless it is the path of a public route (GET or POST) called with
// another method: that 405 is public too.
func (a *API) ruleFor(r *http.Request) (access.Rule, bool) {
	_, pattern := a.mux.Handler(r)
	if rule, ok := a.routes.Rule(pattern); ok {
		return rule, true
	}
	for _, m := range []string{http.MethodGet, http.MethodPost} {
		if m == r.Method {
			continue
		}
		other := r.Clone(r.Context())
		other.Method = m
		_, pattern = a.mux.Handler(other)
		if rule, ok := a.routes.Rule(pattern); ok && rule == access.Public {
			return access.Public, false
		}
	}
	return access.Any, false
}

// refuseToken answers an unknown or expired token and counts it against addr.
// The token itself is never logged.
func (a *API) refuseToken(w http.ResponseWriter, r *http.Request, addr netip.Addr) {
	if a.opts.Guard.Fail(addr) {
		a.log.Warn("management API: address blocked after repeated failed logins or unknown tokens", "remote", addr.String())
	}
	a.authLog.Log(slog.LevelWarn, "management API request refused", "remote", addr.String(),
		"method", r.Method, "path", logx.Clip(r.URL.Path), "reason", "unknown or expired bearer token")
	w.Header().Set("WWW-Authenticate", `Bearer realm="Outpost", error="invalid_token"`)
	httpapi.Fail(w, r, errUnknownToken, usersError)
}

// errUnknownToken answers a bearer token no principal has (refuseToken).
var errUnknownToken = &httpapi.Error{Status: http.StatusUnauthorized, Msg: "unknown or expired token"}

// refuseBlocked answers 429 to an address past the failure limit.
func (a *API) refuseBlocked(w http.ResponseWriter, r *http.Request, addr netip.Addr, wait time.Duration) {
	a.authLog.Log(slog.LevelWarn, "management API request refused", "remote", addr.String(), "method", r.Method,
		"path", logx.Clip(r.URL.Path), "reason", "too many failed logins or unknown tokens", "retry_after_s", httpapi.RetryAfter(wait))
	httpapi.Fail(w, r, httpapi.TooManyRequests(wait, "too many failed logins or unknown tokens from this address; retry later"), usersError)
}

// statusWriter remembers the status a handler answered with.
type statusWriter struct {
	http.ResponseWriter
	status int
}

func (s *statusWriter) WriteHeader(code int) {
	if s.status == 0 {
		s.status = code
	}
	s.ResponseWriter.WriteHeader(code)
}

func (s *statusWriter) Write(b []byte) (int, error) {
	if s.status == 0 {
		s.status = http.StatusOK
	}
	return s.ResponseWriter.Write(b)
}

// Unwrap lets http.ResponseController reach the connection.
func (s *statusWriter) Unwrap() http.ResponseWriter { return s.ResponseWriter }

func (s *statusWriter) code() int {
	if s.status == 0 {
		return http.StatusOK
	}
	return s.status
}

// pollingRead reports the console's live views, which it reads every second
// or few: they change nothing, and auditing them would add a record per
// second for every open console (docs/api-management.md "Audit").
func pollingRead(r *http.Request) bool {
	if r.Method != http.MethodGet && r.Method != http.MethodHead {
		return false
	}
	switch r.URL.Path {
	case "/api/map", "/api/server", "/api/logs", "/api/whoami":
		return true
	}
	return false
}
