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
func (a *API) whoami(w http.ResponseWriter, r *http.Request) error {
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
			return httpapi.Internal(err, usersError)
		}
		out.Groups = membershipsView(u.Groups)
	}
	httpapi.WriteJSON(w, http.StatusOK, out)
	return nil
}

// listGroups answers GET /api/groups.
func (a *API) listGroups(w http.ResponseWriter, r *http.Request) error {
	p := access.From(r)
	groups, err := a.opts.Users.Groups(r.Context())
	if err != nil {
		return httpapi.Internal(err, groupsError)
	}
	members := map[string][]string{}
	mine := map[string]bool{}
	if p.Admin() {
		list, err := a.opts.Users.List(r.Context())
		if err != nil {
			return httpapi.Internal(err, groupsError)
		}
		for _, u := range list {
			for _, m := range u.Groups {
				members[m.Group] = append(members[m.Group], u.Name)
			}
		}
	} else if p.Kind == access.SystemUser {
		u, err := a.opts.Users.Get(r.Context(), p.UID)
		if err != nil {
			return httpapi.Internal(err, groupsError)
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
	return nil
}

// postGroup answers POST /api/groups.
func (a *API) postGroup(w http.ResponseWriter, r *http.Request) error {
	var body struct {
		Name        *string `json:"name"`
		Description *string `json:"description"`
	}
	if err := httpapi.DecodeJSON(r, maxJSONBody, &body); err != nil {
		return err
	}
	if body.Name == nil {
		return httpapi.BadRequest("name", "required")
	}
	g, err := a.opts.Users.CreateGroup(r.Context(), *body.Name, str(body.Description))
	if err != nil {
		return httpapi.Internal(httpapi.InField("name", err), groupsError)
	}
	httpapi.WriteJSON(w, http.StatusCreated, groupJSON{Name: g.Name, Bitpos: g.Bit, Description: g.Description,
		Created: httpapi.FormatTime(g.Created)})
	return nil
}

// deleteGroup answers DELETE /api/groups/{name}.
func (a *API) deleteGroup(w http.ResponseWriter, r *http.Request) error {
	if err := a.opts.Users.DeleteGroup(r.Context(), r.PathValue("name")); err != nil {
		return httpapi.Internal(httpapi.InField("name", err), groupsError)
	}
	httpapi.WriteMessage(w, http.StatusOK, "group deleted")
	return nil
}

// putRole answers PUT /api/users/{uid}/role.
func (a *API) putRole(w http.ResponseWriter, r *http.Request) error {
	var body struct {
		Role *string `json:"role"`
	}
	if err := httpapi.DecodeJSON(r, maxJSONBody, &body); err != nil {
		return err
	}
	if body.Role == nil {
		return httpapi.BadRequest("role", "required: admin or user")
	}
	u, err := a.opts.Users.SetRole(r.Context(), r.PathValue("uid"), strings.ToLower(*body.Role))
	if err != nil {
		return httpapi.Internal(httpapi.InField("role", err), usersError)
	}
	httpapi.WriteJSON(w, http.StatusOK, a.userView(u))
	return nil
}

// putGroups answers PUT /api/users/{uid}/groups: the user's memberships
// become those given.
func (a *API) putGroups(w http.ResponseWriter, r *http.Request) error {
	var body struct {
		Groups []json.RawMessage `json:"groups"`
	}
	if err := httpapi.DecodeJSON(r, maxJSONBody, &body); err != nil {
		return err
	}
	if body.Groups == nil {
		return httpapi.BadRequest("groups", "required: a list of {name, direction}")
	}
	if len(body.Groups) > store.MaxGroups {
		return httpapi.BadRequest("groups", "at most %d", store.MaxGroups)
	}
	ms := make([]store.Membership, 0, len(body.Groups))
	for i, raw := range body.Groups {
		field := fmt.Sprintf("groups[%d]", i)
		var it struct {
			Name      *string `json:"name"`
			Direction *string `json:"direction"`
		}
		if err := httpapi.DecodeValue(raw, &it, field); err != nil {
			return err
		}
		if it.Name == nil {
			return httpapi.BadRequest(field+".name", "required")
		}
		m := store.Membership{Group: *it.Name}
		if !m.SetDirection(str(it.Direction)) {
			return httpapi.BadRequest(field+".direction", "must be IN, OUT or BOTH, not %q", httpapi.ClipValue(str(it.Direction)))
		}
		ms = append(ms, m)
	}
	u, err := a.opts.Users.SetGroups(r.Context(), r.PathValue("uid"), ms)
	if err != nil {
		return httpapi.Internal(httpapi.InField("groups", err), usersError)
	}
	httpapi.WriteJSON(w, http.StatusOK, a.userView(u))
	return nil
}
