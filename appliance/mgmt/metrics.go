package mgmt

import (
	"context"
	"errors"
	"net/http"

	"outpost/appliance/httpapi"
	"outpost/appliance/logx"
	"outpost/appliance/store"
)

// metrics serves GET /metrics (docs/architecture.md "Metrics") to a caller
// in AllowedCLIIPs (a Prometheus server on the mesh, `outpost status` on the
// machine) or with a valid bearer token (an API user's, best: a system
// user's scrape would be audited like any of its calls).
func (a *API) metrics(w http.ResponseWriter, r *http.Request) {
	if a.allowedByIP(r) {
		a.opts.Metrics.ServeHTTP(w, r)
		return
	}
	addr := httpapi.ClientAddr(r).String()
	if wait, blocked := a.limiter.Blocked(addr); blocked {
		a.refuseBlocked(w, r, addr, wait)
		return
	}
	token, ok := bearerToken(r)
	if !ok || a.opts.Accounts == nil {
		w.Header().Set("WWW-Authenticate", `Bearer realm="Outpost"`)
		httpapi.WriteMessage(w, http.StatusUnauthorized, "endpoint can only be accessed by approved IPs or with a bearer token")
		return
	}
	p, err := a.opts.Accounts.Authenticate(r.Context(), token, a.opts.Now())
	switch {
	case errors.Is(err, store.ErrNotFound):
		a.refuseToken(w, r, addr)
	case errors.Is(err, context.Canceled):
	case err != nil:
		a.log.Error("bearer token could not be checked", "remote", addr, "path", logx.Clip(r.URL.Path), "err", err)
		httpapi.WriteMessage(w, http.StatusInternalServerError, "An error occurred attempting to retrieve user(s).")
	case p.Kind == store.SystemUser:
		a.audited(w, r, p, a.opts.Metrics)
	default:
		a.opts.Metrics.ServeHTTP(w, r)
	}
}
