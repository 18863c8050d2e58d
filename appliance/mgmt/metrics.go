package mgmt

import (
	"fmt"
	"net/http"

	"outpost/appliance/access"
	"outpost/appliance/httpapi"
)

// metrics serves GET /metrics (docs/architecture.md "Metrics") to a caller
// in AllowedCLIIPs (a Prometheus server on the mesh, `outpost status` on the
// machine) or with an administrator's bearer token (access.md "Route
// matrix").
func (a *API) metrics(w http.ResponseWriter, r *http.Request) error {
	p := access.From(r)
	switch {
	case a.allowedByIP(r) || p.Admin():
		a.opts.Metrics.ServeHTTP(w, r)
		return nil
	case p.Authenticated():
		return fmt.Errorf("%w: only an administrator (or an address in AllowedCLIIPs) reads the metrics", access.ErrForbidden)
	}
	w.Header().Set("WWW-Authenticate", `Bearer realm="Outpost"`)
	return &httpapi.Error{Status: http.StatusUnauthorized, Msg: "endpoint can only be accessed by approved IPs or with a bearer token"}
}
