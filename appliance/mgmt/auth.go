package mgmt

// Authentication of the management API (api.md §5.1-5.3): one middleware in
// front of every route but the public ones (handlePublic). The bearer token is
// looked up per request (API users, then system users, then login tokens;
// store.Authenticate), never cached, so a token revoked by `outpost token
// revoke` or a rotated user token stops working at once. Unknown tokens and
// failed logins count against the client address in one FailureLimiter; an
// address past the limit gets 429 with Retry-After. Calls authenticated as a
// system user are audited (audit.go).

import (
	"context"
	"errors"
	"log/slog"
	"net/http"
	"strings"
	"time"

	"outpost/appliance/httpapi"
	"outpost/appliance/logx"
	"outpost/appliance/store"
)

type principalKey struct{}

// principalOf is the authenticated caller of a request that passed the
// middleware.
func principalOf(r *http.Request) (store.Principal, bool) {
	p, ok := r.Context().Value(principalKey{}).(store.Principal)
	return p, ok
}

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

// authenticate is the middleware.
func (a *API) authenticate(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if a.isPublic(r.URL.Path) {
			next.ServeHTTP(w, r)
			return
		}
		addr := httpapi.ClientAddr(r).String()
		if wait, blocked := a.limiter.Blocked(addr); blocked {
			a.refuseBlocked(w, r, addr, wait)
			return
		}
		token, ok := bearerToken(r)
		if !ok {
			w.Header().Set("WWW-Authenticate", `Bearer realm="Outpost"`)
			httpapi.WriteMessage(w, http.StatusUnauthorized, "authentication required: send the header Authorization: Bearer followed by your token")
			return
		}
		if a.opts.Accounts == nil {
			httpapi.WriteMessage(w, http.StatusInternalServerError, "An error occurred attempting to retrieve user(s).")
			return
		}
		p, err := a.opts.Accounts.Authenticate(r.Context(), token, a.opts.Now())
		switch {
		case errors.Is(err, store.ErrNotFound):
			a.refuseToken(w, r, addr)
			return
		case errors.Is(err, context.Canceled):
			return // the client went away
		case err != nil:
			a.log.Error("bearer token could not be checked", "remote", addr, "path", logx.Clip(r.URL.Path), "err", err)
			httpapi.WriteMessage(w, http.StatusInternalServerError, "An error occurred attempting to retrieve user(s).")
			return
		}
		r = r.WithContext(context.WithValue(r.Context(), principalKey{}, p))
		if p.Kind == store.SystemUser && !pollingRead(r) {
			a.audited(w, r, p, next) // api.md §5.5
			return
		}
		next.ServeHTTP(w, r)
	})
}

// refuseToken answers an unknown or expired token and counts it against addr.
// The token itself is never logged.
func (a *API) refuseToken(w http.ResponseWriter, r *http.Request, addr string) {
	if a.limiter.Fail(addr) {
		a.log.Warn("management API: address blocked after repeated failed logins or unknown tokens",
			"remote", addr, "failures", authMaxFailures, "window", authWindow, "blocked_for", authBlock)
	}
	a.authLog.Log(slog.LevelWarn, "management API request refused", "remote", addr,
		"method", r.Method, "path", logx.Clip(r.URL.Path), "reason", "unknown or expired bearer token")
	w.Header().Set("WWW-Authenticate", `Bearer realm="Outpost", error="invalid_token"`)
	httpapi.WriteMessage(w, http.StatusUnauthorized, "unknown or expired token")
}

// refuseBlocked answers 429 to an address past the failure limit.
func (a *API) refuseBlocked(w http.ResponseWriter, r *http.Request, addr string, wait time.Duration) {
	a.authLog.Log(slog.LevelWarn, "management API request refused", "remote", addr, "method", r.Method,
		"path", logx.Clip(r.URL.Path), "reason", "too many failed logins or unknown tokens", "retry_after_s", httpapi.RetryAfter(wait))
	httpapi.WriteTooManyRequests(w, wait, "too many failed logins or unknown tokens from this address; retry later")
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
	case "/api/map", "/api/server", "/api/logs":
		return true
	}
	return false
}
