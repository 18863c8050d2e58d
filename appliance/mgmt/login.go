package mgmt

// POST /api/login (api.md §5.7): a system user's name and password give a
// login token, a bearer token for that user that expires after
// loginTokenLifetime (12 h by default). It is stored hashed, works like the
// user's own token (calls made with it are audited as the user) and ends
// early when the user's password changes or the user is deleted. Answer:
//
//	{"token": "...", "expires": "<ISO 8601>", "id": "<uid>", "username": "..."}
//
// Every password check passes the password guard's budgets per address, per
// user and in total (access.md "Password guesses cost the guesser") and the
// store's process-wide password gate (PBKDF2 is deliberately slow); a
// refusal is 429 with Retry-After.

import (
	"context"
	"errors"
	"log/slog"
	"net/http"
	"time"

	"outpost/appliance/access"
	"outpost/appliance/httpapi"
	"outpost/appliance/logx"
	"outpost/appliance/store"
)

// errBadLogin answers a wrong user name or password: 401, without a
// WWW-Authenticate challenge (the credential is the body's, api.md §5.7).
var errBadLogin = &httpapi.Error{Status: http.StatusUnauthorized, Msg: "bad user name or password"}

// errNoAccounts is a login on an API without the accounts store.
var errNoAccounts = errors.New("mgmt: login: no accounts store")

type loginAnswer struct {
	Token    string `json:"token"`
	Expires  string `json:"expires"`
	ID       string `json:"id"`
	Username string `json:"username"`
}

func (a *API) login(w http.ResponseWriter, r *http.Request) error {
	if a.opts.Accounts == nil {
		return httpapi.Internal(errNoAccounts, usersError)
	}
	addr := httpapi.ClientAddr(r)
	capture := &captureBody{rc: r.Body, keep: true}
	r.Body = capture
	var body struct {
		Username *string `json:"username"`
		Password *string `json:"password"`
	}
	if err := httpapi.DecodeJSON(r, maxJSONBody, &body); err != nil {
		return err
	}
	name, password := str(body.Username), str(body.Password)
	if err := checkText("username", name, true, 256); err != nil {
		return err
	}
	if password == "" {
		return httpapi.BadRequest("password", "required")
	}
	// access.md "Password guesses cost the guesser".
	var u store.User
	blocked, err := a.opts.Guard.Check(addr, "user:"+name, func() (err error) {
		u, err = a.opts.Accounts.VerifyPassword(r.Context(), name, password)
		return err
	})
	var ref *access.Refusal
	switch {
	case errors.As(err, &ref):
		a.authLog.Log(slog.LevelWarn, "management API login refused: password budget spent", "user", logx.Clip(name), "remote", addr.String(), "err", err)
		return httpapi.Internal(err, usersError)
	case errors.Is(err, store.ErrBadCredentials):
		if blocked {
			a.log.Warn("management API: address blocked after repeated failed logins or unknown tokens", "remote", addr.String())
		}
		a.authLog.Log(slog.LevelWarn, "management API login failed", "user", logx.Clip(name), "remote", addr.String(), "reason", "bad user name or password")
		return errBadLogin
	case errors.Is(err, context.Canceled):
		return err // the client went away: nothing to answer
	case errors.Is(err, store.ErrBusy):
		// The process-wide password gate (store) is full: logins and
		// enrollments, from anywhere, slow down together.
		a.authLog.Log(slog.LevelWarn, "management API login deferred: too many password checks right now", "remote", addr.String())
		return httpapi.TooManyRequests(time.Second, "the server is busy checking passwords; retry in a second")
	case err != nil:
		return httpapi.Internal(err, usersError)
	}
	now := a.opts.Now()
	expires := now.Add(a.opts.LoginTokenLifetime)
	token, err := a.opts.Accounts.CreateLoginToken(r.Context(), u.UID, expires)
	if err != nil {
		return httpapi.Internal(err, usersError)
	}
	a.log.Info("management API login", "user", logx.Clip(u.Name), "uid", u.UID, "remote", addr.String(), "expires", expires.UTC())
	// A login is a call authenticated as a system user (api.md §5.5).
	a.recordAudit(r, access.Principal{Kind: access.SystemUser, Name: u.Name, UID: u.UID, Login: true}, now, http.StatusOK, capture, "")
	httpapi.WriteJSON(w, http.StatusOK, loginAnswer{Token: token, Expires: httpapi.FormatTime(expires), ID: u.UID, Username: u.Name})
	return nil
}
