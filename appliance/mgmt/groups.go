package mgmt

// Roles and groups (access.md "Roles", "Groups"), the management side:
//
//	GET    /api/whoami               the caller: kind, name, uid, role, groups
//	GET    /api/groups               groups (an administrator: all, with their members; a user: its own)
//	POST   /api/groups               {"name", "description"?}: a new group (201)
//	DELETE /api/groups/{name}        a group goes, with its memberships and its bit on stored records
//	PUT    /api/users/{uid}/role     {"role": "admin"|"user"}
//	PUT    /api/users/{uid}/groups   {"groups": [{"name", "direction": "IN"|"OUT"|"BOTH"}]}
//
// Every change applies at once to the user's open connections.

import (
	"encoding/json"
	"fmt"
	"net/http"
	"strings"

	"outpost/appliance/access"
	"outpost/appliance/httpapi"
	"outpost/appliance/store"
)

const groupsError = "An error occurred attempting to retrieve group(s)."

// groupJSON is a group as the management API shows it.
type groupJSON struct {
	Name        string   `json:"name"`
	Bitpos      int      `json:"bitpos"`
	Description string   `json:"description"`
	Created     string   `json:"created"`
	Members     []string `json:"members,omitempty"` // administrators only
}

// membershipJSON is a user's place in a group.
type membershipJSON struct {
	Name      string `json:"name"`
	Direction string `json:"direction"` // IN, OUT or BOTH
	ActiveIn  bool   `json:"activeIn"`
	ActiveOut bool   `json:"activeOut"`
}

func membershipView(m store.Membership) membershipJSON {
	return membershipJSON{Name: m.Group, Direction: m.Direction(), ActiveIn: m.In && m.ActiveIn, ActiveOut: m.Out && m.ActiveOut}
}

func membershipsView(ms []store.Membership) []membershipJSON {
	out := make([]membershipJSON, len(ms))
	for i, m := range ms {
		out[i] = membershipView(m)
	}
	return out
}

// whoami answers GET /api/whoami: what the console needs to show the caller
// only what its role allows.
func (a *API) whoami(w http.ResponseWriter, r *http.Request) {
	p := access.From(r)
	out := struct {
		Kind   string           `json:"kind"`
		Name   string           `json:"name"`
		UID    string           `json:"uid,omitempty"`
		Role   string           `json:"role"`
		Admin  bool             `json:"admin"`
		Groups []membershipJSON `json:"groups"`
	}{Kind: p.Kind.String(), Name: p.Name, UID: p.UID, Role: p.Role, Admin: p.Admin(), Groups: []membershipJSON{}}
	if p.Kind == access.APIUser {
		out.Role = store.UserRoleAdmin
	}
	if p.Kind == access.SystemUser {
		u, err := a.opts.Users.Get(r.Context(), p.UID)
		if err != nil {
			httpapi.Fail(w, r, err, usersError)
			return
		}
		out.Groups = membershipsView(u.Groups)
	}
	httpapi.WriteJSON(w, http.StatusOK, out)
}

// listGroups answers GET /api/groups.
func (a *API) listGroups(w http.ResponseWriter, r *http.Request) {
	p := access.From(r)
	groups, err := a.opts.Users.Groups(r.Context())
	if err != nil {
		httpapi.Fail(w, r, err, groupsError)
		return
	}
	members := map[string][]string{}
	mine := map[string]bool{}
	if p.Admin() {
		list, err := a.opts.Users.List(r.Context())
		if err != nil {
			httpapi.Fail(w, r, err, groupsError)
			return
		}
		for _, u := range list {
			for _, m := range u.Groups {
				members[m.Group] = append(members[m.Group], u.Name)
			}
		}
	} else if p.Kind == access.SystemUser {
		u, err := a.opts.Users.Get(r.Context(), p.UID)
		if err != nil {
			httpapi.Fail(w, r, err, groupsError)
			return
		}
		for _, m := range u.Groups {
			mine[m.Group] = true
		}
		if len(u.Groups) == 0 {
			mine[store.AnonGroupName] = true
		}
	}
	out := []groupJSON{}
	for _, g := range groups {
		if !p.Admin() && !mine[g.Name] {
			continue
		}
		out = append(out, groupJSON{Name: g.Name, Bitpos: g.Bit, Description: g.Description,
			Created: httpapi.FormatTime(g.Created), Members: members[g.Name]})
	}
	httpapi.WriteJSON(w, http.StatusOK, struct {
		Groups []groupJSON `json:"groups"`
	}{out})
}

// postGroup answers POST /api/groups.
func (a *API) postGroup(w http.ResponseWriter, r *http.Request) {
	var body struct {
		Name        *string `json:"name"`
		Description *string `json:"description"`
	}
	if err := httpapi.DecodeJSON(r, maxJSONBody, &body); err != nil {
		httpapi.Fail(w, r, err, groupsError)
		return
	}
	if body.Name == nil {
		httpapi.Fail(w, r, httpapi.BadRequest("name", "required"), groupsError)
		return
	}
	g, err := a.opts.Users.CreateGroup(r.Context(), *body.Name, str(body.Description))
	if err != nil {
		httpapi.Fail(w, r, httpapi.InField("name", err), groupsError)
		return
	}
	httpapi.WriteJSON(w, http.StatusCreated, groupJSON{Name: g.Name, Bitpos: g.Bit, Description: g.Description,
		Created: httpapi.FormatTime(g.Created)})
}

// deleteGroup answers DELETE /api/groups/{name}.
func (a *API) deleteGroup(w http.ResponseWriter, r *http.Request) {
	if err := a.opts.Users.DeleteGroup(r.Context(), r.PathValue("name")); err != nil {
		httpapi.Fail(w, r, httpapi.InField("name", err), groupsError)
		return
	}
	httpapi.WriteMessage(w, http.StatusOK, "group deleted")
}

// putRole answers PUT /api/users/{uid}/role.
func (a *API) putRole(w http.ResponseWriter, r *http.Request) {
	var body struct {
		Role *string `json:"role"`
	}
	if err := httpapi.DecodeJSON(r, maxJSONBody, &body); err != nil {
		httpapi.Fail(w, r, err, usersError)
		return
	}
	if body.Role == nil {
		httpapi.Fail(w, r, httpapi.BadRequest("role", "required: admin or user"), usersError)
		return
	}
	u, err := a.opts.Users.SetRole(r.Context(), r.PathValue("uid"), strings.ToLower(*body.Role))
	if err != nil {
		httpapi.Fail(w, r, httpapi.InField("role", err), usersError)
		return
	}
	httpapi.WriteJSON(w, http.StatusOK, a.userView(u))
}

// putGroups answers PUT /api/users/{uid}/groups: the user's memberships
// become those given.
func (a *API) putGroups(w http.ResponseWriter, r *http.Request) {
	var body struct {
		Groups []json.RawMessage `json:"groups"`
	}
	if err := httpapi.DecodeJSON(r, maxJSONBody, &body); err != nil {
		httpapi.Fail(w, r, err, usersError)
		return
	}
	if body.Groups == nil {
		httpapi.Fail(w, r, httpapi.BadRequest("groups", "required: a list of {name, direction}"), usersError)
		return
	}
	if len(body.Groups) > store.MaxGroups {
		httpapi.Fail(w, r, httpapi.BadRequest("groups", "at most %d", store.MaxGroups), usersError)
		return
	}
	ms := make([]store.Membership, 0, len(body.Groups))
	for i, raw := range body.Groups {
		field := fmt.Sprintf("groups[%d]", i)
		var it struct {
			Name      *string `json:"name"`
			Direction *string `json:"direction"`
		}
		if err := httpapi.DecodeValue(raw, &it, field); err != nil {
			httpapi.Fail(w, r, err, usersError)
			return
		}
		if it.Name == nil {
			httpapi.Fail(w, r, httpapi.BadRequest(field+".name", "required"), usersError)
			return
		}
		m := store.Membership{Group: *it.Name}
		if !m.SetDirection(str(it.Direction)) {
			httpapi.Fail(w, r, httpapi.BadRequest(field+".direction", "must be IN, OUT or BOTH, not %q", httpapi.ClipValue(str(it.Direction))), usersError)
			return
		}
		ms = append(ms, m)
	}
	u, err := a.opts.Users.SetGroups(r.Context(), r.PathValue("uid"), ms)
	if err != nil {
		httpapi.Fail(w, r, httpapi.InField("groups", err), usersError)
		return
	}
	httpapi.WriteJSON(w, http.StatusOK, a.userView(u))
}
