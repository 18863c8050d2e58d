package marti

// Groups as TAK clients see them (access.md "Groups"): ATAK's channels.
//
//	GET /Marti/api/groups/all[?useCache=true][&sendLatestSA=true]
//	GET /Marti/api/groups/groupCacheEnabled
//	GET /Marti/api/groups/user
//	PUT /Marti/api/groups/active[?clientUid=]       [{name, direction, active, ...}]
//	PUT /Marti/api/groups/activebits[?clientUid=]   [bitpos, ...]: the groups to have on
//
// A user's groups are listed one item per direction (api.md §2.12). Which
// directions are switched on is kept by the server, per user, so every
// device of the user follows (groupCacheEnabled is true): a change applies
// at once to the user's open connections, which then receive the latest
// position of every client they can newly see.

import (
	"encoding/json"
	"fmt"
	"net/http"
	"strings"

	"outpost/appliance/access"
	"outpost/appliance/httpapi"
	"outpost/appliance/store"
	"outpost/appliance/users"
)

// group is api.md §2.12.
type group struct {
	Name        string `json:"name"`
	Direction   string `json:"direction"`
	Created     string `json:"created"`
	Type        string `json:"type"`
	Bitpos      int    `json:"bitpos"`
	Active      bool   `json:"active"`
	Description string `json:"description,omitempty"`
}

const (
	typeGroup   = "com.bbn.marti.remote.groups.Group"
	groupsError = "An error occurred retrieving groups."
	// maxGroupItems bounds the body of PUT groups/active.
	maxGroupItems = 2 * store.MaxGroups
)

// groupItem is g's item in one direction.
func groupItem(g store.Group, direction string, active bool) group {
	return group{Name: g.Name, Direction: direction, Created: g.Created.UTC().Format("2006-01-02"), Type: "SYSTEM",
		Bitpos: g.Bit, Active: active, Description: g.Description}
}

// groupsOf lists the caller's groups, one item per direction it is a
// member in (OUT only unless both is set, as the official server lists
// them without its cache).
func (h *Handler) groupsOf(r *http.Request, both bool) ([]group, error) {
	p := access.From(r)
	all, err := h.opts.Users.Groups(r.Context())
	if err != nil {
		return nil, err
	}
	byName := map[string]store.Group{}
	for _, g := range all {
		byName[g.Name] = g
	}
	ms := []store.Membership{{Group: store.AnonGroupName, In: true, Out: true, ActiveIn: true, ActiveOut: true}}
	if p.Kind == access.SystemUser {
		u, err := h.opts.Users.Get(r.Context(), p.UID)
		if err != nil {
			return nil, err
		}
		if len(u.Groups) > 0 {
			ms = u.Groups
		}
	}
	out := []group{}
	for _, m := range ms {
		g, ok := byName[m.Group]
		if !ok {
			continue
		}
		if m.Out {
			out = append(out, groupItem(g, "OUT", m.ActiveOut))
		}
		if m.In && both {
			out = append(out, groupItem(g, "IN", m.ActiveIn))
		}
	}
	return out, nil
}

// groups answers GET /Marti/api/groups/all: the api.md §2.13 envelope of the
// caller's groups (both directions with useCache=true); sendLatestSA=true
// also sends the caller's connections the latest position of every client
// they can see.
func (h *Handler) groups(w http.ResponseWriter, r *http.Request) error {
	q := r.URL.Query()
	list, err := h.groupsOf(r, strings.EqualFold(q.Get("useCache"), "true"))
	if err != nil {
		return httpapi.Internal(err, groupsError)
	}
	if strings.EqualFold(q.Get("sendLatestSA"), "true") {
		h.opts.Broker.ReplayVisible(access.From(r).Identity())
	}
	httpapi.WriteJSON(w, http.StatusOK, h.envelope(typeGroup, list))
	return nil
}

// groupCacheEnabled answers GET /Marti/api/groups/groupCacheEnabled: true,
// the switches are kept by the server (what ATAK asks before it sends its
// channel selection).
func (h *Handler) groupCacheEnabled(w http.ResponseWriter, r *http.Request) error {
	httpapi.WriteJSON(w, http.StatusOK, h.envelope("java.lang.Boolean", true))
	return nil
}

// groupsOfUser answers GET /Marti/api/groups/user: the caller and its
// groups in both directions.
func (h *Handler) groupsOfUser(w http.ResponseWriter, r *http.Request) error {
	list, err := h.groupsOf(r, true)
	if err != nil {
		return httpapi.Internal(err, groupsError)
	}
	p := access.From(r)
	httpapi.WriteJSON(w, http.StatusOK, h.envelope("com.bbn.marti.remote.groups.User", struct {
		Username string  `json:"username"`
		Kind     string  `json:"kind"`
		Groups   []group `json:"groups"`
	}{p.Name, p.Kind.String(), list}))
	return nil
}

// setActiveGroups answers PUT /Marti/api/groups/active: the body lists
// groups ({name or bitpos, direction, active}); each names a direction to
// switch on or off. Groups the caller is not in are ignored.
func (h *Handler) setActiveGroups(w http.ResponseWriter, r *http.Request) error {
	var items []json.RawMessage
	if err := httpapi.DecodeJSON(r, 0, &items); err != nil {
		return err
	}
	if items == nil || len(items) > maxGroupItems {
		return httpapi.BadRequest("", "the body must be a list of at most %d groups", maxGroupItems)
	}
	all, err := h.opts.Users.Groups(r.Context())
	if err != nil {
		return httpapi.Internal(err, groupsError)
	}
	byBit := map[int]string{}
	for _, g := range all {
		byBit[g.Bit] = g.Name
	}
	changes := make([]store.Membership, 0, len(items))
	for i, raw := range items {
		field := fmt.Sprintf("[%d]", i)
		var it struct {
			Name      *string `json:"name"`
			Bitpos    *int    `json:"bitpos"`
			Direction *string `json:"direction"`
			Active    *bool   `json:"active"`
		}
		if err := httpapi.DecodeValue(raw, &it, field); err != nil {
			return err
		}
		name := ""
		switch {
		case it.Name != nil:
			name = *it.Name
		case it.Bitpos != nil:
			name = byBit[*it.Bitpos]
		default:
			return httpapi.BadRequest(field+".name", "required (or bitpos)")
		}
		if it.Active == nil {
			return httpapi.BadRequest(field+".active", "required: true or false")
		}
		c := store.Membership{Group: name, ActiveIn: *it.Active, ActiveOut: *it.Active}
		if !c.SetDirection(str(it.Direction)) {
			return httpapi.BadRequest(field+".direction", "must be IN or OUT, not %q", httpapi.ClipValue(str(it.Direction)))
		}
		changes = append(changes, c)
	}
	return h.applyActive(w, r, changes)
}

// setActiveBits answers PUT /Marti/api/groups/activebits: the body lists the
// bit positions of the groups to have on (both directions); the caller's
// other groups go off.
func (h *Handler) setActiveBits(w http.ResponseWriter, r *http.Request) error {
	var bits []int
	if err := httpapi.DecodeJSON(r, 0, &bits); err != nil {
		return err
	}
	if bits == nil || len(bits) > maxGroupItems {
		return httpapi.BadRequest("", "the body must be a list of at most %d bit positions", maxGroupItems)
	}
	on := map[int]bool{}
	for _, b := range bits {
		on[b] = true
	}
	all, err := h.opts.Users.Groups(r.Context())
	if err != nil {
		return httpapi.Internal(err, groupsError)
	}
	changes := make([]store.Membership, 0, len(all))
	for _, g := range all {
		changes = append(changes, store.Membership{Group: g.Name, In: true, Out: true, ActiveIn: on[g.Bit], ActiveOut: on[g.Bit]})
	}
	return h.applyActive(w, r, changes)
}

// applyActive switches the caller's groups (its clientUid, when given, must
// be one of its own) and answers with them.
func (h *Handler) applyActive(w http.ResponseWriter, r *http.Request, changes []store.Membership) error {
	p := access.From(r)
	if err := h.actFor(r, "clientUid", r.URL.Query().Get("clientUid")); err != nil {
		return err
	}
	if p.Kind != access.SystemUser {
		return fmt.Errorf("%w: this certificate belongs to no system user, whose groups could be switched (it is in %s)",
			access.ErrForbidden, store.AnonGroupName)
	}
	var u users.User
	u, err := h.opts.Users.SetActive(r.Context(), p.UID, changes)
	if err != nil {
		return httpapi.Internal(err, groupsError)
	}
	h.log.Info("client switched its groups", "user", u.Name, "groups", len(u.Groups))
	w.WriteHeader(http.StatusOK)
	return nil
}
