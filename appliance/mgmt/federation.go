package mgmt

// Federation for administrators (docs/federation.md "Metrics" and
// "Managing federates"):
//
//	GET    /api/federation                         {"enabled", "federates": [{"name", "source", "state", "eventsIn", …}]}
//	POST   /api/federation/federates               {"name", "address", "ca", "enabled", "pin", "backoffMin", "backoffMax", "protocol"} → 201 the federate
//	PUT    /api/federation/federates/{name}/trust  {"ca"} → 200 the federate
//	PATCH  /api/federation/federates/{name}        {"enabled", "address", "pin", "backoffMin", "backoffMax", "protocol"} → 200 the federate (federation_manage.go)
//	DELETE /api/federation/federates/{name}        → 200 {"message"}

import (
	"net/http"

	"outpost/appliance/httpapi"
	"outpost/appliance/store"
)

// maxFederateBody bounds a federate's JSON (its CA PEM is at most 64 KiB).
const maxFederateBody = 80 << 10

const federatesError = "the federates could not be changed"

// federation answers GET /api/federation: each federate's link state and
// counters, as Options.Federation gives them (nil: federation is off).
func (a *API) federation(w http.ResponseWriter, r *http.Request) error {
	feds := a.opts.Federation()
	out := struct {
		Enabled bool `json:"enabled"`
		*FederationStatus
		Federates any `json:"federates"`
	}{Enabled: feds != nil, Federates: feds}
	if a.opts.FederationStatus != nil && feds != nil {
		st := a.opts.FederationStatus()
		out.FederationStatus = &st
	}
	if feds == nil {
		out.Federates = []struct{}{}
	}
	httpapi.WriteJSON(w, http.StatusOK, out)
	return nil
}

// federateJSON is a managed federate as answered: its CA certificates by
// subject (`outpost federate list` shows their fingerprints), never the
// PEM again.
type federateJSON struct {
	Name    string   `json:"name"`
	Address string   `json:"address"`
	Enabled bool     `json:"enabled"`
	CAs     []string `json:"caSubjects"`
	Created string   `json:"created"`
	Inbound bool     `json:"inboundOnly"`
	Pin     string   `json:"pin"`
	// The reconnect back-off as durations ("" the default).
	BackoffMin string `json:"backoffMin"`
	BackoffMax string `json:"backoffMax"`
	// Protocol is what its outbound link speaks: "v2" or "v1".
	Protocol string `json:"protocol"`
}

func federateView(f store.Federate) federateJSON {
	v := federateJSON{Name: f.Name, Address: f.Address, Enabled: f.Enabled, Created: httpapi.FormatTime(f.Created),
		Inbound: f.Address == "", CAs: []string{}, Pin: f.Pin, BackoffMin: durationText(f.BackoffMin), BackoffMax: durationText(f.BackoffMax),
		Protocol: f.Protocol}
	if cas, err := store.ParseCAs(f.CAPEM); err == nil {
		for _, c := range cas {
			v.CAs = append(v.CAs, c.Subject.String())
		}
	}
	return v
}

// addFederate answers POST /api/federation/federates: a new managed
// federate (400 a bad field, 409 the name is taken), picked up at once by
// the running federation.
func (a *API) addFederate(w http.ResponseWriter, r *http.Request) error {
	var body struct {
		Name    string `json:"name"`
		Address string `json:"address"`
		CA      string `json:"ca"`
		Enabled *bool  `json:"enabled"`
		Pin     string `json:"pin"`
		// Protocol: "v2" (also when absent or "") or "v1".
		Protocol string `json:"protocol"`
		backoffJSON
	}
	if err := httpapi.DecodeJSON(r, maxFederateBody, &body); err != nil {
		return err
	}
	lo, hi, err := body.backoffJSON.durations()
	if err != nil {
		return err
	}
	f := store.Federate{Name: body.Name, Address: body.Address, CAPEM: body.CA, Enabled: body.Enabled == nil || *body.Enabled, Pin: body.Pin,
		Protocol: body.Protocol}
	if lo != nil {
		f.BackoffMin = *lo
	}
	if hi != nil {
		f.BackoffMax = *hi
	}
	if err := a.opts.Federates.Add(r.Context(), f); err != nil {
		return httpapi.Internal(err, federatesError)
	}
	a.federatesChanged()
	return a.answerFederate(w, r, f.Name, http.StatusCreated)
}

// trustFederate answers PUT /api/federation/federates/{name}/trust: the CA
// certificates the federate's certificate must chain to (400 not PEM CA
// certificates, 404 no such federate); its link starts again with them.
func (a *API) trustFederate(w http.ResponseWriter, r *http.Request) error {
	var body struct {
		CA string `json:"ca"`
	}
	if err := httpapi.DecodeJSON(r, maxFederateBody, &body); err != nil {
		return err
	}
	name := r.PathValue("name")
	if err := a.opts.Federates.Trust(r.Context(), name, body.CA); err != nil {
		return httpapi.Internal(err, federatesError)
	}
	a.federatesChanged()
	return a.answerFederate(w, r, name, http.StatusOK)
}

// removeFederate answers DELETE /api/federation/federates/{name} (404 no
// such federate): its link ends, its CA is no longer trusted.
func (a *API) removeFederate(w http.ResponseWriter, r *http.Request) error {
	name := r.PathValue("name")
	if err := a.opts.Federates.Delete(r.Context(), name); err != nil {
		return httpapi.Internal(err, federatesError)
	}
	a.federatesChanged()
	httpapi.WriteMessage(w, http.StatusOK, "federate removed")
	return nil
}

func (a *API) federatesChanged() {
	if a.opts.FederatesChanged != nil {
		a.opts.FederatesChanged()
	}
}

// answerFederate answers the stored federate name.
func (a *API) answerFederate(w http.ResponseWriter, r *http.Request, name string, status int) error {
	list, err := a.opts.Federates.List(r.Context())
	if err != nil {
		return httpapi.Internal(err, federatesError)
	}
	for _, f := range list {
		if f.Name == name {
			httpapi.WriteJSON(w, status, federateView(f))
			return nil
		}
	}
	return notFound("no federate named " + name) // removed meanwhile
}
