package mgmt

// Federation's state for administrators (docs/federation.md "Metrics"):
//
//	GET /api/federation   {"enabled", "federates": [{"name", "connected", "eventsIn", …}]}

import (
	"net/http"

	"outpost/appliance/httpapi"
)

// federation answers GET /api/federation: each federate's link state and
// counters, as Options.Federation gives them (nil: federation is off).
func (a *API) federation(w http.ResponseWriter, r *http.Request) {
	feds := a.opts.Federation()
	out := struct {
		Enabled   bool `json:"enabled"`
		Federates any  `json:"federates"`
	}{Enabled: feds != nil, Federates: feds}
	if feds == nil {
		out.Federates = []struct{}{}
	}
	httpapi.WriteJSON(w, http.StatusOK, out)
}
