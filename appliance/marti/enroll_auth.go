package marti

// Who calls the enrollment port (protocol.md §8): the request must have
// come over TLS and carry the Basic credentials of a system user (or an
// invitation's token of that user), checked under the password guard
// (access.md "Password guesses cost the guesser"); the read-only routes
// also take an access token (enroll_oauth.go). And how the port's
// failures are answered: through httpapi.Fail like every route's, after
// enrollEdge has added the port's own parts (the Basic challenge, the
// OAuth error shape).

import (
	"context"
	"errors"
	"net/http"
	"time"

	"outpost/appliance/access"
	"outpost/appliance/httpapi"
	"outpost/appliance/logx"
	"outpost/appliance/store"
)

// enrollRoute is an enrollment route once its caller is authenticated.
type enrollRoute func(w http.ResponseWriter, r *http.Request, c *enrollCall) error

// challenged is a 401 of the enrollment port: enrollEdge adds the Basic
// challenge (WWW-Authenticate) to its answer.
type challenged struct{ err *httpapi.Error }

func (c *challenged) Error() string { return c.err.Error() }
func (c *challenged) Unwrap() error { return c.err }

// challenge is the 401 {"message": msg} with the Basic challenge.
func challenge(msg string) error {
	return &challenged{httpapi.Errorf(http.StatusUnauthorized, "%s", msg)}
}

// enrollEdge answers what is the enrollment port's own before the one edge
// (httpapi.Fail, through httpapi.HandlerFunc) answers the rest: a refusal of
// POST /oauth/token in RFC 6749's shape (oauthRefusal), and the Basic
// challenge of a 401.
func enrollEdge(f httpapi.HandlerFunc) httpapi.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) error {
		err := f(w, r)
		var oe *oauthRefusal
		var ch *challenged
		switch {
		case errors.As(err, &oe):
			oe.write(w)
			return nil
		case errors.As(err, &ch):
			w.Header().Set("WWW-Authenticate", enrollRealm)
		}
		return err
	}
}

// authenticated wraps a route: the request must have arrived over TLS and
// carry the Basic credentials of a system user, or (token: the read-only
// routes) an access token of POST /oauth/token.
func (h *EnrollmentHandler) authenticated(serve enrollRoute, token bool) httpapi.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) error {
		remote, err := h.overTLS(r)
		if err != nil {
			return err
		}
		check := h.authenticate
		if token {
			check = h.tokenOrBasic
		}
		user, invitation, err := check(r, remote)
		if err != nil {
			return err
		}
		return serve(w, r, &enrollCall{user: user, remote: remote, uid: logx.Clip(clientUID(r)), invitation: invitation})
	}
}

// overTLS returns the client's address when the request arrived over TLS;
// otherwise (credentials over cleartext: a wiring fault, never served) it
// refuses it (403).
func (h *EnrollmentHandler) overTLS(r *http.Request) (remote string, err error) {
	remote = clientAddr(r.RemoteAddr)
	if r.TLS == nil {
		h.log.Error("enrollment request without TLS refused", "remote", remote, "path", logx.Clip(r.URL.Path))
		return remote, httpapi.Errorf(http.StatusForbidden, "enrollment requires TLS")
	}
	return remote, nil
}

// authenticate checks the Basic credentials under the password guard.
//
// The password is an invitation's token or the user's password: the token
// is looked up first (one indexed lookup of its hash, no slow hashing), and
// anything that is not a usable invitation of this user goes on to the
// password check, so a wrong token costs the guesser what a wrong password
// does, inside the same guard. invitation is the id of the invitation used
// ("" for a password); the token itself is never logged.
func (h *EnrollmentHandler) authenticate(r *http.Request, remote string) (user store.User, invitation string, err error) {
	name, password, ok := r.BasicAuth()
	if !ok {
		return store.User{}, "", challenge("authentication required")
	}
	return h.checkCredentials(r, remote, name, password)
}

// checkCredentials is authenticate's check of a name and password (or
// invitation token), shared with POST /oauth/token. Its failures are
// refusals, logged here: 401 for wrong credentials, 429 when the guard or
// the password gate refuses, 503 when they cannot be checked; a client
// that went away is answered nothing.
func (h *EnrollmentHandler) checkCredentials(r *http.Request, remote, name, password string) (user store.User, invitation string, err error) {
	logName := logx.Clip(name)
	blocked, err := h.opts.Guard.Check(httpapi.ClientAddr(r), "user:"+name, func() (err error) {
		inv, err := h.opts.Accounts.CheckEnrollInvitation(r.Context(), name, password, h.opts.Now())
		switch {
		case err == nil:
			invitation = inv.ID
			if user, err = h.opts.Accounts.UserByUID(r.Context(), inv.UserUID); errors.Is(err, store.ErrNotFound) {
				err = store.ErrBadCredentials // deleted in between
			}
			return err
		case !errors.Is(err, store.ErrBadCredentials):
			return err
		}
		user, err = h.opts.Accounts.VerifyPassword(r.Context(), name, password)
		return err
	})
	var ref *access.Refusal
	switch {
	case errors.As(err, &ref):
		return store.User{}, "", h.refuseBlocked(remote, logName, ref.Wait, ref.Error())
	case errors.Is(err, store.ErrBadCredentials):
		h.log.Warn("enrollment login failed", "user", logName, "remote", remote, "reason", "bad user name, password or invitation token", "address_blocked", blocked)
		// Same answer for an unknown user and a wrong password.
		return store.User{}, "", challenge("bad user name or password")
	case errors.Is(err, context.Canceled):
		return store.User{}, "", context.Canceled // the client went away; nothing to answer
	case errors.Is(err, store.ErrBusy):
		// The process-wide password gate (store) is full: every login,
		// from anywhere, right or wrong, slows down together.
		h.busyLog.Warn("enrollment login deferred: too many password checks right now", "remote", remote)
		return store.User{}, "", httpapi.TooManyRequests(time.Second, "the server is busy checking passwords; retry in a second")
	case err != nil:
		h.log.Error("enrollment login could not be checked", "user", logName, "remote", remote, "err", err)
		return store.User{}, "", errCannotCheck
	}
	return user, invitation, nil
}

// errCannotCheck is the answer when credentials cannot be checked (the
// store failed): 503, the client may try again; the cause is logged where
// it happened.
var errCannotCheck = httpapi.Errorf(http.StatusServiceUnavailable, "credentials cannot be checked right now")

// refuseBlocked is the guard's refusal: 429 with Retry-After.
func (h *EnrollmentHandler) refuseBlocked(remote, user string, wait time.Duration, why string) error {
	// Rate-limited: a guesser's refusals come as fast as it sends them.
	h.busyLog.Warn("enrollment refused", "user", user, "remote", remote, "reason", why, "retry_after_s", httpapi.RetryAfter(wait))
	return httpapi.TooManyRequests(wait, "too many password checks; retry later")
}
