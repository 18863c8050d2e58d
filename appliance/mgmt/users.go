package mgmt

// System users (api.md §2.1, §2.3, §4.1): listing, search and deletion.
// Creation is in users_create.go, changes in users_update.go, certificate
// packages in certpkg.go. Passwords are never returned; a token only by the
// call that created it (it is stored hashed), so listings carry "token": "".

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strings"

	"outpost/appliance/access"
	"outpost/appliance/httpapi"
	"outpost/appliance/store"
	"outpost/appliance/users"
)

// usersError is the contract's 500 text for every system-user route (api.md §7).
const usersError = "An error occurred attempting to retrieve user(s)."

// userItem is a system user as the API returns it: api.md §2.3's id,
// username, token and certificatePackageName; the keys FreeTAKServer's
// scripts and web UI read (Name, Group, Certs, Uid, DeviceType); and its
// role and groups (access.md).
type userItem struct {
	ID                     string           `json:"id"`
	Username               string           `json:"username"`
	Token                  string           `json:"token"`
	CertificatePackageName string           `json:"certificatePackageName"`
	Role                   string           `json:"role"`
	Groups                 []membershipJSON `json:"groups"`
	Name                   string           `json:"Name"`
	Group                  string           `json:"Group"`
	Certs                  string           `json:"Certs"`
	UID                    string           `json:"Uid"`
	DeviceType             string           `json:"DeviceType"`
}

// userView shows a user (with the token it was just given, if any).
func (a *API) userView(u users.User) userItem {
	certs := "false"
	if u.CertificatePackageHash != "" {
		certs = "true"
	}
	return userItem{ID: u.UID, Username: u.Name, Token: u.Token, CertificatePackageName: u.CertificatePackageName,
		Role: u.Role, Groups: membershipsView(u.Groups), Name: u.Name, Group: strings.Join(u.GroupNames(), ","),
		Certs: certs, UID: u.UID, DeviceType: u.DeviceType}
}

type usersList struct {
	SystemUsers []userItem `json:"SystemUsers"`
}

// getAllUsers answers GET /ManageSystemUser/getAll and GET /api/users.
func (a *API) getAllUsers(w http.ResponseWriter, r *http.Request) error {
	list, err := a.opts.Users.List(r.Context())
	if err != nil {
		return httpapi.Internal(err, usersError)
	}
	out := usersList{SystemUsers: make([]userItem, 0, len(list))}
	for _, u := range list {
		out.SystemUsers = append(out.SystemUsers, a.userView(u))
	}
	httpapi.WriteJSON(w, http.StatusOK, out)
	return nil
}

// getSystemUser answers GET /ManageSystemUser/getSystemUser: the users
// matching username and/or id, given in a JSON body (what FreeTAKServer's
// clients send, even with GET) or the query string.
func (a *API) getSystemUser(w http.ResponseWriter, r *http.Request) error {
	var q struct {
		Username *string `json:"username"`
		ID       *string `json:"id"`
	}
	if r.ContentLength != 0 {
		if err := httpapi.DecodeJSON(r, maxJSONBody, &q); err != nil {
			return err
		}
	}
	name, id := str(q.Username), str(q.ID)
	if name == "" {
		name = r.URL.Query().Get("username")
	}
	if id == "" {
		id = r.URL.Query().Get("id")
	}
	if name == "" && id == "" {
		return httpapi.BadRequest("username or id", "at least one is required")
	}
	list, err := a.opts.Users.List(r.Context())
	if err != nil {
		return httpapi.Internal(err, usersError)
	}
	// access.md "Roles": a user finds itself only.
	p := access.From(r)
	out := usersList{SystemUsers: []userItem{}}
	for _, u := range list {
		if (name == "" || u.Name == name) && (id == "" || u.UID == id) && (p.Admin() || p.IsUser(u.UID)) {
			out.SystemUsers = append(out.SystemUsers, a.userView(u))
		}
	}
	httpapi.WriteJSON(w, http.StatusOK, out)
	return nil
}

// deleteBody is the body of deleteSystemUser (and of the channel's
// removeSystemUser): {"id"} or {"systemUsers": [{"uid"}, ...]}.
type deleteBody struct {
	ID          *string           `json:"id"`
	SystemUsers []json.RawMessage `json:"systemUsers"`
}

// deleteTarget is one user to delete and the field that named it.
type deleteTarget struct{ field, uid string }

// deleteSystemUser answers DELETE /ManageSystemUser/deleteSystemUser.
func (a *API) deleteSystemUser(w http.ResponseWriter, r *http.Request) error {
	var body deleteBody
	if err := httpapi.DecodeJSON(r, maxJSONBody, &body); err != nil {
		return err
	}
	targets, err := checkDelete(body)
	if err == nil {
		err = a.deleteUsers(r.Context(), targets)
	}
	if err != nil {
		return httpapi.Internal(err, usersError)
	}
	httpapi.WriteMessage(w, http.StatusOK, "user deleted")
	return nil
}

// checkDelete reads the users a deletion names.
func checkDelete(body deleteBody) ([]deleteTarget, error) {
	switch {
	case body.ID != nil && body.SystemUsers != nil:
		return nil, httpapi.BadRequest("id", "send either id or systemUsers, not both")
	case body.SystemUsers == nil:
		if err := checkText("id", str(body.ID), true, 255); err != nil {
			return nil, err
		}
		return []deleteTarget{{"id", *body.ID}}, nil
	}
	if len(body.SystemUsers) == 0 || len(body.SystemUsers) > maxBatch {
		return nil, httpapi.BadRequest("systemUsers", "must hold 1 to %d users", maxBatch)
	}
	targets := make([]deleteTarget, 0, len(body.SystemUsers))
	for i, raw := range body.SystemUsers {
		field := fmt.Sprintf("systemUsers[%d]", i)
		var it struct {
			UID *string `json:"uid"`
		}
		if err := httpapi.DecodeValue(raw, &it, field); err != nil {
			return nil, err
		}
		if err := checkText(field+".uid", str(it.UID), true, 255); err != nil {
			return nil, err
		}
		targets = append(targets, deleteTarget{field + ".uid", *it.UID})
	}
	return targets, nil
}

// deleteUsers deletes the targets: every user must exist or none is
// deleted. Each user's certificates are revoked first (connected clients
// holding them are cut off), then the users go in one transaction, then
// their certificate packages, and any package still waiting to be offered
// to a device (certsend.go).
func (a *API) deleteUsers(ctx context.Context, targets []deleteTarget) error {
	uids := make([]string, len(targets))
	for i, t := range targets {
		uids[i] = t.uid
	}
	// The users service revokes the certificates first: a failure leaves
	// the users in place, never a deleted user with a valid certificate.
	if _, err := a.opts.Users.Delete(ctx, uids); err != nil {
		if errors.Is(err, store.ErrNotFound) {
			for _, t := range targets {
				if strings.Contains(err.Error(), t.uid) {
					return httpapi.Errorf(http.StatusNotFound, "%s: no system user with id %q", t.field, httpapi.ClipValue(t.uid))
				}
			}
		}
		return httpapi.InField("id", err)
	}
	for _, uid := range uids {
		a.certSends.withdraw(uid)
	}
	return nil
}
