package mgmt

// POST /ManageSystemUser/postSystemUser (api.md §4.1) in its two shapes:
//
//	flat:  {"username", "password", "token"?, "certificatePackageName"?}
//	batch: {"systemUsers": [{"Name", "Group", "Token", "Password", "DeviceType", "Certs"}, ...]}
//
// The whole body is checked first (types, required fields, device types,
// duplicate names): a mistake anywhere is a 400 and nothing is created. Then
// each user is created; one that fails (its name or token is taken, its
// certificate cannot be built) is named in the message and the others are
// still created. Answer: 201 {"message": "user(s) created", "SystemUsers":
// [...]}, with each new user's token (shown this once). When no user could
// be created: 409 when every failure was a conflict, 500 otherwise. The
// socket.io channel's addSystemUser does the same (channel_users.go).

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strings"

	"outpost/appliance/httpapi"
	"outpost/appliance/logx"
	"outpost/appliance/pki"
	"outpost/appliance/store"
	"outpost/appliance/users"
)

// newUser is one user to create, checked.
type newUser struct {
	field      string // where it came from in the body, for messages
	in         store.UserInput
	certs      bool
	device     pki.Device
	nameField  string
	tokenField string
}

type batchUser struct {
	Name       *string `json:"Name"`
	Group      *string `json:"Group"`
	Token      *string `json:"Token"`
	Password   *string `json:"Password"`
	DeviceType *string `json:"DeviceType"`
	Certs      any     `json:"Certs"`
	Role       *string `json:"Role"`
}

// createBody is the body of postSystemUser (and of the channel's
// addSystemUser) in both shapes.
type createBody struct {
	Username               *string           `json:"username"`
	Password               *string           `json:"password"`
	Token                  *string           `json:"token"`
	CertificatePackageName *string           `json:"certificatePackageName"`
	Role                   *string           `json:"role"`
	Group                  *string           `json:"group"`
	SystemUsers            []json.RawMessage `json:"systemUsers"`
}

// createResult is the answer to a creation that made at least one user:
// 201 with the users made (and the failures in the message).
type createResult struct {
	Message     string     `json:"message"`
	SystemUsers []userItem `json:"SystemUsers,omitempty"`
}

func (a *API) postSystemUser(w http.ResponseWriter, r *http.Request) error {
	var body createBody
	if err := httpapi.DecodeJSON(r, maxJSONBody, &body); err != nil {
		return err
	}
	users, err := checkCreate(body)
	if err != nil {
		return err
	}
	res, err := a.createUsers(r.Context(), users, a.serverHostPort(r))
	if err != nil {
		return httpapi.Internal(err, usersError)
	}
	httpapi.WriteJSON(w, http.StatusCreated, res)
	return nil
}

// checkCreate checks a whole creation body: a mistake anywhere is an
// error and nothing is created.
func checkCreate(body createBody) ([]newUser, error) {
	if body.SystemUsers == nil {
		u, err := checkFlatUser(str(body.Username), str(body.Password), body.Token, str(body.CertificatePackageName))
		if err == nil {
			u.in.Role, err = checkRole("role", str(body.Role))
		}
		if err == nil {
			u.in.Group, err = checkGroups("group", str(body.Group))
		}
		if err != nil {
			return nil, err
		}
		return []newUser{u}, nil
	}
	if len(body.SystemUsers) == 0 || len(body.SystemUsers) > maxBatch {
		return nil, httpapi.BadRequest("systemUsers", "must hold 1 to %d users", maxBatch)
	}
	var users []newUser
	names := map[string]string{}
	for i, raw := range body.SystemUsers {
		u, err := checkBatchUser(raw, fmt.Sprintf("systemUsers[%d]", i))
		if err == nil {
			if first, dup := names[u.in.Name]; dup {
				err = httpapi.BadRequest(u.nameField, "%q is also the name of %s", httpapi.ClipValue(u.in.Name), first)
			}
			names[u.in.Name] = u.field
		}
		if err != nil {
			return nil, err
		}
		users = append(users, u)
	}
	return users, nil
}

// createUsers creates checked users one by one: one that fails (its name
// or token is taken, its certificate cannot be built) is named in the
// message and the others are still created. A user given certificates is
// offered its package once its device connects (certsend.go); hostPort is
// where that device downloads it. When no user was created the error is a
// 409 refusal naming the failures if every one was a conflict, else a
// fault of ours (each failure was logged); or the context's: the caller
// went away.
func (a *API) createUsers(ctx context.Context, users []newUser, hostPort string) (createResult, error) {
	created := make([]userItem, 0, len(users))
	var failures []string
	conflictsOnly := true
	for _, nu := range users {
		u, err := a.createUser(ctx, nu)
		if err != nil {
			if errors.Is(err, context.Canceled) {
				return createResult{}, err
			}
			if status, msg, ok := httpapi.Refusal(err); ok {
				conflictsOnly = conflictsOnly && status == http.StatusConflict
				failures = append(failures, fmt.Sprintf("%s %q: %s", nu.nameField, httpapi.ClipValue(nu.in.Name), msg))
			} else {
				conflictsOnly = false
				a.log.Error("creating a system user failed", "user", logx.Clip(nu.in.Name), "err", err)
				failures = append(failures, fmt.Sprintf("%s %q: could not be created (internal error)", nu.nameField, httpapi.ClipValue(nu.in.Name)))
			}
			continue
		}
		if nu.certs {
			a.certSends.offer(u, hostPort)
		}
		created = append(created, a.userView(u))
	}
	msg := "user(s) created"
	if len(failures) > 0 {
		msg += "; not created: " + strings.Join(failures, "; ")
	}
	switch {
	case len(created) > 0:
		return createResult{Message: msg, SystemUsers: created}, nil
	case conflictsOnly:
		return createResult{}, &httpapi.Error{Status: http.StatusConflict, Msg: "no user created: " + strings.Join(failures, "; ")}
	}
	return createResult{}, fmt.Errorf("mgmt: none of %d system users could be created", len(users))
}

func checkFlatUser(name, password string, token *string, pkgName string) (newUser, error) {
	u := newUser{field: "body", nameField: "username", tokenField: "token"}
	if err := checkText("username", name, true, 256); err != nil {
		return u, err
	}
	if err := checkText("password", password, true, 256); err != nil {
		return u, err
	}
	if token != nil {
		if err := checkToken("token", *token); err != nil {
			return u, err
		}
		u.in.Token = *token
	}
	if err := checkText("certificatePackageName", pkgName, false, 255); err != nil {
		return u, err
	}
	u.in.Name, u.in.Password, u.in.CertificatePackageName = name, password, pkgName
	return u, checkUserName("username", name, false)
}

func checkBatchUser(raw json.RawMessage, field string) (newUser, error) {
	var b batchUser
	if err := httpapi.DecodeValue(raw, &b, field); err != nil {
		return newUser{}, err
	}
	u := newUser{field: field, nameField: field + ".Name", tokenField: field + ".Token"}
	name, password := str(b.Name), str(b.Password)
	if err := checkText(field+".Name", name, true, 256); err != nil {
		return u, err
	}
	if err := checkText(field+".Password", password, true, 256); err != nil {
		return u, err
	}
	group, err := checkGroups(field+".Group", str(b.Group))
	if err != nil {
		return u, err
	}
	role, err := checkRole(field+".Role", str(b.Role))
	if err != nil {
		return u, err
	}
	if b.Token != nil {
		if err := checkToken(field+".Token", *b.Token); err != nil {
			return u, err
		}
		u.in.Token = *b.Token
	}
	certs, err := asBool(field+".Certs", b.Certs)
	if err != nil {
		return u, err
	}
	// DeviceType (api.md §2.1): mobile or desktop, any case; the client
	// names atak, itak and wintak (the desktop value) are accepted too.
	dt := strings.ToLower(strings.TrimSpace(str(b.DeviceType)))
	if dt == "" {
		dt = "mobile"
	}
	d, err := pki.ParseDevice(dt)
	if err != nil {
		return u, httpapi.BadRequest(field+".DeviceType", "must be mobile, desktop, wintak, atak or itak, not %q", httpapi.ClipValue(str(b.DeviceType)))
	}
	u.in = store.UserInput{Name: name, Password: password, Group: group, Role: role, Token: u.in.Token, DeviceType: dt}
	u.certs, u.device = certs, d
	return u, checkUserName(field+".Name", name, certs)
}

// checkRole reads a role ("" is the default, user; any case).
func checkRole(field, v string) (string, error) {
	r := strings.ToLower(strings.TrimSpace(v))
	if r != "" && !store.ValidUserRole(r) {
		return "", httpapi.BadRequest(field, "must be %s or %s, not %q", store.UserRoleUser, store.UserRoleAdmin, httpapi.ClipValue(v))
	}
	return r, nil
}

// checkGroups reads the seed's group field: group names separated by
// commas (access.md "Groups").
func checkGroups(field, v string) (string, error) {
	if err := checkText(field, v, false, 255); err != nil {
		return "", err
	}
	names, err := store.ParseGroupField(v)
	if err != nil {
		return "", httpapi.InField(field, err)
	}
	return strings.Join(names, ","), nil
}

// checkUserName applies the store's name rules (and, for users who get a
// certificate, the stricter file-name rules) with the field's name.
func checkUserName(field, name string, certs bool) error {
	if strings.TrimSpace(name) != name {
		return httpapi.BadRequest(field, "must not start or end with a space")
	}
	if n := len([]rune(name)); n > 64 {
		return httpapi.BadRequest(field, "must be at most 64 characters, not %d", n)
	}
	if certs {
		if err := pki.ValidateName(name); err != nil {
			return httpapi.BadRequest(field, "a user with certificates needs a name of letters, digits, '.', '_', '-' and spaces (%v)", err)
		}
	}
	return nil
}

// createUser creates one user through the users service: the user and
// its certificate package together or not at all.
func (a *API) createUser(ctx context.Context, nu newUser) (users.User, error) {
	return a.opts.Users.Create(ctx, users.NewUser{UserInput: nu.in, Certs: nu.certs, Device: nu.device})
}
