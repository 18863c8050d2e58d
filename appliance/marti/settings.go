package marti

// What clients ask about their own settings and the server's layout
// (api-marti.md "Groups and settings"):
//
//	GET /Marti/api/device/profile/connection        204: no profile to push
//	GET /Marti/api/device/profile/tool/{name}       204 the same, for a tool's profile
//	GET /Marti/api/util/user/roles                  the caller's roles, as the official server names them
//	GET /Marti/api/cops/hierarchy                   the tree of COP mission paths the caller sees

import (
	"net/http"
	"sort"
	"strconv"
	"strings"

	"outpost/appliance/access"
	"outpost/appliance/httpapi"
	"outpost/appliance/store"
)

// deviceProfile answers 204: there is no connection or tool profile to
// push to clients (protocol.md §7). The tool's name, clientUid and
// syncSecago are checked, and otherwise not used.
func (h *Handler) deviceProfile(w http.ResponseWriter, r *http.Request) error {
	q := r.URL.Query()
	err := httpapi.CheckText("clientUid", q.Get("clientUid"), false, 255)
	if err == nil && r.Pattern == profileToolRoute {
		err = httpapi.CheckText("name", r.PathValue("name"), true, 255)
	}
	if v := q.Get("syncSecago"); err == nil && v != "" {
		if n, perr := strconv.ParseInt(v, 10, 64); perr != nil || n < -1 {
			err = httpapi.BadRequest("syncSecago", "must be -1 or a whole number of seconds, not %q", httpapi.ClipValue(v))
		}
	}
	if err != nil {
		return err
	}
	w.WriteHeader(http.StatusNoContent)
	return nil
}

// profileToolRoute is the tool profile's route (its {name} is checked).
const profileToolRoute = "GET /Marti/api/device/profile/tool/{name}"

// Roles of /Marti/api/util/user/roles (the official server's authorities).
const (
	roleAnonymous = "ROLE_ANONYMOUS" // every client
	roleAdmin     = "ROLE_ADMIN"     // an administrator (access.md "Roles")
	roleReadOnly  = "ROLE_READONLY"  // a caller with no active IN group: what it sends reaches nobody
)

// userRoles answers GET /Marti/api/util/user/roles: a JSON array, ROLE_ADMIN
// for an administrator and ROLE_ANONYMOUS for every other client, with
// ROLE_READONLY added when none of the caller's IN groups is switched on.
func (h *Handler) userRoles(w http.ResponseWriter, r *http.Request) error {
	p := access.From(r)
	roles := []string{roleAnonymous}
	if p.Admin() {
		roles = []string{roleAdmin}
	}
	if p.In == 0 {
		roles = append(roles, roleReadOnly)
	}
	httpapi.WriteJSON(w, http.StatusOK, roles)
	return nil
}

// copTool is the mission tool of COPs (the official server's
// missionCopTool default).
const copTool = "vbm"

// maxCopPaths bounds the missions whose paths make the hierarchy.
const maxCopPaths = 4096

// copNode is one level of the COP hierarchy.
type copNode struct {
	Name     string     `json:"name"`
	Children []*copNode `json:"children"`
}

// copsHierarchy answers GET /Marti/api/cops/hierarchy: the envelope
// "CopHierarchyNode" of the tree the paths of the COP missions (tool vbm)
// the caller sees make, one node per path segment, each level by name. A
// password-protected mission's path is left out, as everything of it but
// its name (access.md "Missions"); at most maxCopPaths missions count.
func (h *Handler) copsHierarchy(w http.ResponseWriter, r *http.Request) error {
	paths, more, err := h.opts.Missions.MissionPaths(r.Context(), copTool, maxCopPaths)
	if err == nil && more {
		// Debug: any client can make missions, and ask as often as it likes.
		h.log.Debug("the COP hierarchy lists the first missions only", "missions", maxCopPaths)
	}
	var groups []store.Group
	if err == nil {
		groups, err = h.groupList(r.Context())
	}
	if err != nil {
		return httpapi.Internal(err, "An error occurred reading the COP hierarchy.")
	}
	p := access.From(r)
	root := &copNode{Children: []*copNode{}}
	for _, mp := range paths {
		if mp.PasswordProtected || !p.Sees(access.MaskOf(groups, mp.Groups)) {
			continue
		}
		node := root
		for _, seg := range strings.Split(mp.Path, "/") {
			if seg != "" {
				node = node.child(seg)
			}
		}
	}
	root.sort()
	httpapi.WriteJSON(w, http.StatusOK, h.envelope("CopHierarchyNode", root.Children))
	return nil
}

// child is n's child named name, added when missing.
func (n *copNode) child(name string) *copNode {
	for _, c := range n.Children {
		if c.Name == name {
			return c
		}
	}
	c := &copNode{Name: name, Children: []*copNode{}}
	n.Children = append(n.Children, c)
	return c
}

// sort orders every level by name.
func (n *copNode) sort() {
	sort.Slice(n.Children, func(i, j int) bool { return n.Children[i].Name < n.Children[j].Name })
	for _, c := range n.Children {
		c.sort()
	}
}
