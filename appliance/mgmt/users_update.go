package mgmt

// PUT /ManageSystemUser/putSystemUser (api.md §4.1):
//
//	flat:  {"id", "username"?, "password"?, "token"?}                    change one user
//	batch: {"systemUsers": [{"uid", "Token"?, "Password"?, "Group"?}]}  change several
//
// The batch is FreeTAKServer's updateSystemUser body, which the socket.io
// channel's updateSystemUser takes too (channel_users.go).
//
// Both are all or nothing: an unknown id, a taken name or token, or any bad
// field changes nobody. A new password ends the user's login tokens. A user
// holding valid certificates cannot be renamed (the certificates carry the
// name, and revoking them by name on deletion would miss them): delete and
// re-create the user instead.

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strings"

	"outpost/appliance/access"
	"outpost/appliance/fault"
	"outpost/appliance/httpapi"
	"outpost/appliance/store"
)

func (a *API) putSystemUser(w http.ResponseWriter, r *http.Request) error {
	var body struct {
		ID          *string           `json:"id"`
		Username    *string           `json:"username"`
		Password    *string           `json:"password"`
		Token       *string           `json:"token"`
		SystemUsers []json.RawMessage `json:"systemUsers"`
	}
	if err := httpapi.DecodeJSON(r, maxJSONBody, &body); err != nil {
		return err
	}
	p := access.From(r)
	if body.SystemUsers != nil {
		if !p.Admin() {
			return fmt.Errorf("%w: systemUsers: only an administrator rotates other users' tokens", access.ErrForbidden)
		}
		return a.rotateTokens(w, r, body.SystemUsers)
	}
	id := str(body.ID)
	if err := checkText("id", id, true, 255); err != nil {
		return err
	}
	// access.md "Roles": a user changes its own password and token; its
	// name and everything of other users are an administrator's.
	if err := access.SelfOrAdmin(p, id); err != nil {
		return err
	}
	if body.Username != nil && !p.Admin() {
		return fmt.Errorf("%w: username: only an administrator renames users", access.ErrForbidden)
	}
	var up store.UserUpdate
	if body.Username != nil {
		if err := checkText("username", *body.Username, true, 256); err != nil {
			return err
		}
		if err := checkUserName("username", *body.Username, false); err != nil {
			return err
		}
		up.Name = body.Username
	}
	if body.Password != nil {
		if err := checkText("password", *body.Password, true, 256); err != nil {
			return err
		}
		up.Password = body.Password
	}
	if body.Token != nil {
		if err := checkToken("token", *body.Token); err != nil {
			return err
		}
		up.Token = body.Token
	}
	if up.Name == nil && up.Password == nil && up.Token == nil {
		return httpapi.BadRequest("username, password or token", "at least one is required")
	}
	_, err := a.opts.Users.Update(r.Context(), id, up)
	if errors.Is(err, store.ErrNotFound) {
		return httpapi.Errorf(http.StatusNotFound, "id: no system user with id %q", httpapi.ClipValue(id))
	}
	if err != nil {
		field := "username"
		if isTokenConflict(err) {
			field = "token"
		}
		return httpapi.Internal(httpapi.InField(field, err), usersError)
	}
	httpapi.WriteMessage(w, http.StatusOK, "user updated")
	return nil
}

func isTokenConflict(err error) bool {
	return errors.Is(err, store.ErrConflict) && fault.Detail(err) == "token already in use"
}

// rotateTokens is the batch shape: every item's uid gets the Token,
// Password and Group it names, all or none (checkUserChanges).
func (a *API) rotateTokens(w http.ResponseWriter, r *http.Request, items []json.RawMessage) error {
	if err := a.updateUsers(r.Context(), items); err != nil {
		return httpapi.Internal(err, usersError)
	}
	httpapi.WriteMessage(w, http.StatusOK, "user updated")
	return nil
}

// updateUsers checks and applies a batch of user changes (the REST batch
// and the channel's updateSystemUser).
func (a *API) updateUsers(ctx context.Context, items []json.RawMessage) error {
	changes, fields, err := checkUserChanges(items)
	if err != nil {
		return err
	}
	for _, c := range changes {
		if _, err := a.opts.Accounts.UserByUID(ctx, c.UID); errors.Is(err, store.ErrNotFound) {
			return httpapi.Errorf(http.StatusNotFound, "%s.uid: no system user with id %q", fields[c.UID], httpapi.ClipValue(c.UID))
		} else if err != nil {
			return err
		}
	}
	if err := a.opts.Users.UpdateMany(ctx, changes); err != nil {
		field := "systemUsers"
		if isTokenConflict(err) {
			field = "systemUsers: Token"
		}
		return httpapi.InField(field, err)
	}
	return nil
}

// checkUserChanges reads the batch items {"uid", "Token", "Password",
// "Group"} (FreeTAKServer's updateSystemUser body). An empty Token,
// Password or Group leaves it as it is: FreeTAKServer's web UI sends every
// field of its form, edited or not, and Outpost cannot fill in a password
// it keeps only as a hash. fields names each uid's item for messages.
func checkUserChanges(items []json.RawMessage) ([]store.UserChange, map[string]string, error) {
	if len(items) == 0 || len(items) > maxBatch {
		return nil, nil, httpapi.BadRequest("systemUsers", "must hold 1 to %d users", maxBatch)
	}
	changes := make([]store.UserChange, 0, len(items))
	fields := map[string]string{} // uid -> field
	for i, raw := range items {
		field := fmt.Sprintf("systemUsers[%d]", i)
		var it struct {
			UID      *string `json:"uid"`
			Token    *string `json:"Token"`
			Password *string `json:"Password"`
			Group    *string `json:"Group"`
		}
		if err := httpapi.DecodeValue(raw, &it, field); err != nil {
			return nil, nil, err
		}
		if err := checkText(field+".uid", str(it.UID), true, 255); err != nil {
			return nil, nil, err
		}
		c := store.UserChange{UID: *it.UID}
		if v := str(it.Token); v != "" {
			if err := checkToken(field+".Token", v); err != nil {
				return nil, nil, err
			}
			c.Token = &v
		}
		if v := str(it.Password); v != "" {
			if err := checkText(field+".Password", v, true, 256); err != nil {
				return nil, nil, err
			}
			c.Password = &v
		}
		if v := str(it.Group); v != "" {
			joined, err := checkGroups(field+".Group", v)
			if err != nil {
				return nil, nil, err
			}
			if joined == "" {
				return nil, nil, httpapi.BadRequest(field+".Group", "must name at least one group")
			}
			names := strings.Split(joined, ",")
			c.Groups = &names
		}
		if c.Token == nil && c.Password == nil && c.Groups == nil {
			return nil, nil, httpapi.BadRequest(field, "Token, Password or Group: at least one is required (an empty one is left as it is)")
		}
		if first, dup := fields[c.UID]; dup {
			return nil, nil, httpapi.BadRequest(field+".uid", "the same user as %s", first)
		}
		fields[c.UID] = field
		changes = append(changes, c)
	}
	return changes, fields, nil
}
