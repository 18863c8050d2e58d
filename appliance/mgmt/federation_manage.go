package mgmt

// A managed federate changed in place, and this server's federation
// identity (docs/federation.md "Federates one by one" and "The console's
// Federation page"):
//
//	GET   /api/federation/federates         {"federates": [the managed federates]}
//	PATCH /api/federation/federates/{name}  {"enabled", "address", "pin", "backoffMin", "backoffMax", "protocol"} → 200 the federate
//
// Each field present replaces the stored one ("pin": "" removes the pin,
// "backoffMin"/"backoffMax": "" or "0s" the default, "protocol": "v2"
// or "v1", "" the default v2); the running
// federation picks the change up at once (the federate's link starts
// again as it now is).

import (
	"net/http"
	"time"

	"outpost/appliance/httpapi"
	"outpost/appliance/store"
)

// FederationStatus is this server's side of GET /api/federation: what an
// administrator gives a federate's administrator, and the listener.
type FederationStatus struct {
	Identity FederationIdentity `json:"identity"`
	// Listening is the federation listener's address ("" none: no CA is
	// trusted yet, or federation runs outbound only); ListenError why it
	// could not be bound ("" no failure).
	Listening   string `json:"listening"`
	ListenError string `json:"listenError"`
}

// FederationIdentity is this server's federation identity.
type FederationIdentity struct {
	Name        string `json:"name"`        // federationName, or the server's name
	ServerID    string `json:"serverId"`    // the id in provenance
	Subject     string `json:"subject"`     // its federation certificate's subject
	Fingerprint string `json:"fingerprint"` // that certificate's SHA-256 fingerprint
	Issuer      string `json:"issuer"`      // the certificate's issuer (the CA a federate must trust)
}

// backoffJSON is a federate's reconnect back-off as the API takes it:
// durations such as "2s" or "5m".
type backoffJSON struct {
	BackoffMin *string `json:"backoffMin"`
	BackoffMax *string `json:"backoffMax"`
}

// durations parses the back-off (nil: not given; "" is 0, the default).
func (b backoffJSON) durations() (lo, hi *time.Duration, err error) {
	parse := func(field string, s *string) (*time.Duration, error) {
		if s == nil {
			return nil, nil
		}
		if *s == "" {
			d := time.Duration(0)
			return &d, nil
		}
		d, err := time.ParseDuration(*s)
		if err != nil || len(*s) > 32 {
			return nil, httpapi.BadRequest(field, "must be a duration such as 2s or 5m")
		}
		return &d, nil
	}
	if lo, err = parse("backoffMin", b.BackoffMin); err != nil {
		return nil, nil, err
	}
	hi, err = parse("backoffMax", b.BackoffMax)
	return lo, hi, err
}

// durationText is a back-off as answered ("" the default).
func durationText(d time.Duration) string {
	if d == 0 {
		return ""
	}
	return d.String()
}

// patchFederate answers PATCH /api/federation/federates/{name} (400 a bad
// field or nothing to change, 404 no such federate, 413 too large).
func (a *API) patchFederate(w http.ResponseWriter, r *http.Request) error {
	var body struct {
		Enabled  *bool   `json:"enabled"`
		Address  *string `json:"address"`
		Pin      *string `json:"pin"`
		Protocol *string `json:"protocol"`
		backoffJSON
	}
	if err := httpapi.DecodeJSON(r, maxFederateBody, &body); err != nil {
		return err
	}
	lo, hi, err := body.backoffJSON.durations()
	if err != nil {
		return err
	}
	p := store.FederatePatch{Enabled: body.Enabled, Address: body.Address, Pin: body.Pin, BackoffMin: lo, BackoffMax: hi, Protocol: body.Protocol}
	if p == (store.FederatePatch{}) {
		return httpapi.BadRequest("", "nothing to change: give enabled, address, pin, backoffMin, backoffMax or protocol")
	}
	name := r.PathValue("name")
	if _, err := a.opts.Federates.Update(r.Context(), name, p); err != nil {
		return httpapi.Internal(err, federatesError)
	}
	a.federatesChanged()
	return a.answerFederate(w, r, name, http.StatusOK)
}

// listFederates answers GET /api/federation/federates: the managed
// federates as stored (their CAs by subject, never the PEM).
func (a *API) listFederates(w http.ResponseWriter, r *http.Request) error {
	list, err := a.opts.Federates.List(r.Context())
	if err != nil {
		return httpapi.Internal(err, federatesError)
	}
	out := make([]federateJSON, 0, len(list))
	for _, f := range list {
		out = append(out, federateView(f))
	}
	httpapi.WriteJSON(w, http.StatusOK, struct {
		Federates []federateJSON `json:"federates"`
	}{out})
	return nil
}
