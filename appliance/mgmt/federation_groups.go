package mgmt

// A federate's group mapping for administrators (docs/federation.md
// "Groups"):
//
//	GET /api/federation/federates/{name}/groups → {"federate", "outbound": [{"local", "federate"}], "inbound": [{"federate", "local"}], "announced": [...]}
//	PUT /api/federation/federates/{name}/groups {"outbound": [...], "inbound": [...]} → 200 the same
//
// name is the federate as federation knows it: configured, managed, or a
// federate that connects here known by its certificate's common name, so
// any name is accepted (there is no 404). PUT replaces the mapping; empty
// lists remove it (the federate is __ANON__ both ways again). Local groups
// must exist (400).

import (
	"net/http"

	"outpost/appliance/httpapi"
	"outpost/appliance/store"
)

// maxGroupsBody bounds a mapping's JSON (64 pairs each way of names of at
// most 64 and 255 bytes).
const maxGroupsBody = 64 << 10

const federateGroupsError = "the federate's group mapping could not be changed"

// groupPairJSON is one pair of a mapping, in either direction.
type groupPairJSON struct {
	Local    string `json:"local"`
	Federate string `json:"federate"`
}

type federateGroupsJSON struct {
	Federate  string          `json:"federate"`
	Outbound  []groupPairJSON `json:"outbound"`
	Inbound   []groupPairJSON `json:"inbound"`
	Announced []string        `json:"announced"` // the federate groups it announced last (its link, since start)
}

func pairsJSON(ps []store.GroupPair) []groupPairJSON {
	out := make([]groupPairJSON, 0, len(ps))
	for _, p := range ps {
		out = append(out, groupPairJSON(p))
	}
	return out
}

func pairsOf(js []groupPairJSON) []store.GroupPair {
	out := make([]store.GroupPair, 0, len(js))
	for _, p := range js {
		out = append(out, store.GroupPair(p))
	}
	return out
}

// federateGroups answers GET /api/federation/federates/{name}/groups.
func (a *API) federateGroups(w http.ResponseWriter, r *http.Request) error {
	name := r.PathValue("name")
	if err := store.CheckFederateRef(name); err != nil {
		return err
	}
	return a.answerFederateGroups(w, r, name)
}

// setFederateGroups answers PUT /api/federation/federates/{name}/groups: the
// mapping replaced (400 a bad name or a local group that does not exist,
// 413 a body over 64 KiB), picked up at once by the running federation.
func (a *API) setFederateGroups(w http.ResponseWriter, r *http.Request) error {
	var body struct {
		Outbound []groupPairJSON `json:"outbound"`
		Inbound  []groupPairJSON `json:"inbound"`
	}
	if err := httpapi.DecodeJSON(r, maxGroupsBody, &body); err != nil {
		return err
	}
	name := r.PathValue("name")
	m := store.GroupMapping{Outbound: pairsOf(body.Outbound), Inbound: pairsOf(body.Inbound)}
	if err := a.opts.Federates.SetGroups(r.Context(), name, m); err != nil {
		return httpapi.Internal(err, federateGroupsError)
	}
	a.federatesChanged()
	return a.answerFederateGroups(w, r, name)
}

func (a *API) answerFederateGroups(w http.ResponseWriter, r *http.Request, name string) error {
	m, err := a.opts.Federates.Groups(r.Context(), name)
	if err != nil {
		return httpapi.Internal(err, federateGroupsError)
	}
	out := federateGroupsJSON{Federate: name, Outbound: pairsJSON(m.Outbound), Inbound: pairsJSON(m.Inbound), Announced: []string{}}
	if a.opts.FederateAnnounced != nil {
		if g := a.opts.FederateAnnounced(name); g != nil {
			out.Announced = g
		}
	}
	httpapi.WriteJSON(w, http.StatusOK, out)
	return nil
}
