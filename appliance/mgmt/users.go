package mgmt

// System users (api.md §2.1, §2.3, §4.1): listing, search and deletion.
// Creation is in users_create.go, changes in users_update.go, certificate
// packages in certpkg.go. Passwords are never returned; a token only by the
// call that created it (it is stored hashed), so listings carry "token": "".

import (
	"encoding/json"
	"errors"
	"fmt"
	"net/http"

	"outpost/appliance/httpapi"
	"outpost/appliance/logx"
	"outpost/appliance/store"
)

// usersError is the contract's 500 text for every system-user route (api.md §7).
const usersError = "An error occurred attempting to retrieve user(s)."

// userItem is a system user as the API returns it (api.md §2.3).
type userItem struct {
	ID                     string `json:"id"`
	Username               string `json:"username"`
	Token                  string `json:"token"`
	CertificatePackageName string `json:"certificatePackageName"`
}

func itemOf(u store.User) userItem {
	return userItem{ID: u.UID, Username: u.Name, Token: u.Token, CertificatePackageName: u.CertificatePackageName}
}

type usersList struct {
	SystemUsers []userItem `json:"SystemUsers"`
}

// fail answers err (a client mistake with its status, or an internal fault
// with internalMsg, logged with what). A request whose client hung up
// fails with its context: that is the client's doing, logged at debug
// level only (a client could otherwise fill the log with errors).
func (a *API) fail(w http.ResponseWriter, r *http.Request, err error, internalMsg, what string) {
	var he *httpapi.Error
	switch {
	case errors.As(err, &he):
	case r.Context().Err() != nil:
		a.log.Debug(what+": the client went away", "method", r.Method, "path", logx.Clip(r.URL.Path), "err", err)
	default:
		a.log.Error(what, "method", r.Method, "path", logx.Clip(r.URL.Path), "err", err)
	}
	httpapi.Fail(w, r, err, internalMsg)
}

// getAllUsers answers GET /ManageSystemUser/getAll and GET /api/users.
func (a *API) getAllUsers(w http.ResponseWriter, r *http.Request) {
	users, err := a.opts.Accounts.Users(r.Context())
	if err != nil {
		httpapi.Fail(w, r, err, usersError)
		return
	}
	out := usersList{SystemUsers: make([]userItem, 0, len(users))}
	for _, u := range users {
		out.SystemUsers = append(out.SystemUsers, itemOf(u))
	}
	httpapi.WriteJSON(w, http.StatusOK, out)
}

// getSystemUser answers GET /ManageSystemUser/getSystemUser: the users
// matching username and/or id, given in a JSON body (what FreeTAKServer's
// clients send, even with GET) or the query string.
func (a *API) getSystemUser(w http.ResponseWriter, r *http.Request) {
	var q struct {
		Username *string `json:"username"`
		ID       *string `json:"id"`
	}
	if r.ContentLength != 0 {
		if err := httpapi.DecodeJSON(r, maxJSONBody, &q); err != nil {
			httpapi.Fail(w, r, err, usersError)
			return
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
		httpapi.Fail(w, r, httpapi.BadRequest("username or id", "at least one is required"), usersError)
		return
	}
	users, err := a.opts.Accounts.Users(r.Context())
	if err != nil {
		httpapi.Fail(w, r, err, usersError)
		return
	}
	out := usersList{SystemUsers: []userItem{}}
	for _, u := range users {
		if (name == "" || u.Name == name) && (id == "" || u.UID == id) {
			out.SystemUsers = append(out.SystemUsers, itemOf(u))
		}
	}
	httpapi.WriteJSON(w, http.StatusOK, out)
}

// deleteSystemUser answers DELETE /ManageSystemUser/deleteSystemUser: body
// {"id"} or {"systemUsers": [{"uid"}, ...]}. Every user must exist or none
// is deleted. Each user's certificates are revoked first (connected clients
// holding them are cut off), then the users go in one transaction, then
// their certificate packages.
func (a *API) deleteSystemUser(w http.ResponseWriter, r *http.Request) {
	var body struct {
		ID          *string           `json:"id"`
		SystemUsers []json.RawMessage `json:"systemUsers"`
	}
	if err := httpapi.DecodeJSON(r, maxJSONBody, &body); err != nil {
		httpapi.Fail(w, r, err, usersError)
		return
	}
	type target struct{ field, uid string }
	var targets []target
	switch {
	case body.ID != nil && body.SystemUsers != nil:
		httpapi.Fail(w, r, httpapi.BadRequest("id", "send either id or systemUsers, not both"), usersError)
		return
	case body.SystemUsers != nil:
		if len(body.SystemUsers) == 0 || len(body.SystemUsers) > maxBatch {
			httpapi.Fail(w, r, httpapi.BadRequest("systemUsers", "must hold 1 to %d users", maxBatch), usersError)
			return
		}
		for i, raw := range body.SystemUsers {
			field := fmt.Sprintf("systemUsers[%d]", i)
			var it struct {
				UID *string `json:"uid"`
			}
			if err := httpapi.DecodeValue(raw, &it, field); err != nil {
				httpapi.Fail(w, r, err, usersError)
				return
			}
			if err := checkText(field+".uid", str(it.UID), true, 255); err != nil {
				httpapi.Fail(w, r, err, usersError)
				return
			}
			targets = append(targets, target{field + ".uid", *it.UID})
		}
	default:
		if err := checkText("id", str(body.ID), true, 255); err != nil {
			httpapi.Fail(w, r, err, usersError)
			return
		}
		targets = append(targets, target{"id", *body.ID})
	}
	users := make([]store.User, 0, len(targets))
	seen := map[string]bool{}
	for _, t := range targets {
		if seen[t.uid] {
			continue
		}
		seen[t.uid] = true
		u, err := a.opts.Accounts.UserByUID(r.Context(), t.uid)
		if errors.Is(err, store.ErrNotFound) {
			httpapi.Fail(w, r, httpapi.Errorf(http.StatusNotFound, "%s: no system user with id %q", t.field, httpapi.ClipValue(t.uid)), usersError)
			return
		}
		if err != nil {
			httpapi.Fail(w, r, err, usersError)
			return
		}
		users = append(users, u)
	}
	// Revoke before deleting: a failure leaves the users in place, never a
	// deleted user with a valid certificate.
	revoked := map[string]int{}
	if a.opts.Authority != nil {
		for _, u := range users {
			n, err := a.opts.Authority.RevokeName(u.Name, "cessation_of_operation")
			if err != nil {
				httpapi.Fail(w, r, err, usersError)
				return
			}
			revoked[u.UID] = n
		}
	}
	uids := make([]string, len(users))
	for i, u := range users {
		uids[i] = u.UID
	}
	if err := a.opts.Accounts.DeleteUsers(r.Context(), uids); err != nil {
		httpapi.Fail(w, r, httpapi.InField("id", err), usersError)
		return
	}
	for _, u := range users {
		a.removeCertificatePackage(u)
		a.log.Info("system user deleted", "user", logx.Clip(u.Name), "uid", u.UID, "certificates_revoked", revoked[u.UID])
	}
	httpapi.WriteMessage(w, http.StatusOK, "user deleted")
}
