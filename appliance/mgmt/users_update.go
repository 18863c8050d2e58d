package mgmt

// PUT /ManageSystemUser/putSystemUser (api.md §4.1):
//
//	flat:  {"id", "username"?, "password"?, "token"?}   change one user
//	batch: {"systemUsers": [{"uid", "Token"}, ...]}      rotate tokens
//
// Both are all or nothing: an unknown id, a taken name or token, or any bad
// field changes nobody. A new password ends the user's login tokens. A user
// holding valid certificates cannot be renamed (the certificates carry the
// name, and revoking them by name on deletion would miss them): delete and
// re-create the user instead.

import (
	"encoding/json"
	"errors"
	"fmt"
	"net/http"

	"outpost/appliance/access"
	"outpost/appliance/fault"
	"outpost/appliance/httpapi"
	"outpost/appliance/store"
)

func (a *API) putSystemUser(w http.ResponseWriter, r *http.Request) {
	var body struct {
		ID          *string           `json:"id"`
		Username    *string           `json:"username"`
		Password    *string           `json:"password"`
		Token       *string           `json:"token"`
		SystemUsers []json.RawMessage `json:"systemUsers"`
	}
	if err := httpapi.DecodeJSON(r, maxJSONBody, &body); err != nil {
		httpapi.Fail(w, r, err, usersError)
		return
	}
	p := access.From(r)
	if body.SystemUsers != nil {
		if !p.Admin() {
			httpapi.Fail(w, r, fmt.Errorf("%w: systemUsers: only an administrator rotates other users' tokens", access.ErrForbidden), usersError)
			return
		}
		a.rotateTokens(w, r, body.SystemUsers)
		return
	}
	id := str(body.ID)
	if err := checkText("id", id, true, 255); err != nil {
		httpapi.Fail(w, r, err, usersError)
		return
	}
	// access.md "Roles": a user changes its own password and token; its
	// name and everything of other users are an administrator's.
	if err := access.SelfOrAdmin(p, id); err != nil {
		httpapi.Fail(w, r, err, usersError)
		return
	}
	if body.Username != nil && !p.Admin() {
		httpapi.Fail(w, r, fmt.Errorf("%w: username: only an administrator renames users", access.ErrForbidden), usersError)
		return
	}
	var up store.UserUpdate
	if body.Username != nil {
		if err := checkText("username", *body.Username, true, 256); err != nil {
			httpapi.Fail(w, r, err, usersError)
			return
		}
		if err := checkUserName("username", *body.Username, false); err != nil {
			httpapi.Fail(w, r, err, usersError)
			return
		}
		up.Name = body.Username
	}
	if body.Password != nil {
		if err := checkText("password", *body.Password, true, 256); err != nil {
			httpapi.Fail(w, r, err, usersError)
			return
		}
		up.Password = body.Password
	}
	if body.Token != nil {
		if err := checkToken("token", *body.Token); err != nil {
			httpapi.Fail(w, r, err, usersError)
			return
		}
		up.Token = body.Token
	}
	if up.Name == nil && up.Password == nil && up.Token == nil {
		httpapi.Fail(w, r, httpapi.BadRequest("username, password or token", "at least one is required"), usersError)
		return
	}
	_, err := a.opts.Users.Update(r.Context(), id, up)
	if errors.Is(err, store.ErrNotFound) {
		httpapi.Fail(w, r, httpapi.Errorf(http.StatusNotFound, "id: no system user with id %q", httpapi.ClipValue(id)), usersError)
		return
	}
	if err != nil {
		field := "username"
		if isTokenConflict(err) {
			field = "token"
		}
		httpapi.Fail(w, r, httpapi.InField(field, err), usersError)
		return
	}
	httpapi.WriteMessage(w, http.StatusOK, "user updated")
}

func isTokenConflict(err error) bool {
	return errors.Is(err, store.ErrConflict) && fault.Detail(err) == "token already in use"
}

// rotateTokens is the batch shape: every item's uid gets its Token.
func (a *API) rotateTokens(w http.ResponseWriter, r *http.Request, items []json.RawMessage) {
	if len(items) == 0 || len(items) > maxBatch {
		httpapi.Fail(w, r, httpapi.BadRequest("systemUsers", "must hold 1 to %d users", maxBatch), usersError)
		return
	}
	changes := make([]store.TokenChange, 0, len(items))
	fields := map[string]string{} // uid -> field, for messages
	for i, raw := range items {
		field := fmt.Sprintf("systemUsers[%d]", i)
		var it struct {
			UID   *string `json:"uid"`
			Token *string `json:"Token"`
		}
		if err := httpapi.DecodeValue(raw, &it, field); err != nil {
			httpapi.Fail(w, r, err, usersError)
			return
		}
		if err := checkText(field+".uid", str(it.UID), true, 255); err != nil {
			httpapi.Fail(w, r, err, usersError)
			return
		}
		if err := checkToken(field+".Token", str(it.Token)); err != nil {
			httpapi.Fail(w, r, err, usersError)
			return
		}
		if first, dup := fields[*it.UID]; dup {
			httpapi.Fail(w, r, httpapi.BadRequest(field+".uid", "the same user as %s", first), usersError)
			return
		}
		fields[*it.UID] = field
		changes = append(changes, store.TokenChange{UID: *it.UID, Token: *it.Token})
	}
	for _, c := range changes {
		if _, err := a.opts.Accounts.UserByUID(r.Context(), c.UID); errors.Is(err, store.ErrNotFound) {
			httpapi.Fail(w, r, httpapi.Errorf(http.StatusNotFound, "%s.uid: no system user with id %q", fields[c.UID], httpapi.ClipValue(c.UID)), usersError)
			return
		} else if err != nil {
			httpapi.Fail(w, r, err, usersError)
			return
		}
	}
	if err := a.opts.Users.RotateTokens(r.Context(), changes); err != nil {
		httpapi.Fail(w, r, httpapi.InField("systemUsers", err), usersError)
		return
	}
	httpapi.WriteMessage(w, http.StatusOK, "user updated")
}
