package marti

// Password login for TAK libraries on the enrollment port (protocol.md §8
// "Password login for TAK libraries"). Sources of fact (facts only, nothing
// copied):
//
//   - TAK Server: com/bbn/marti/oauth/PasswordGrantAuthenticationProvider,
//     PasswordGrantAuthenticationSuccessHandler and AuthCookieUtils
//     (TAK-Product-Center/Server, src/takserver-core/takserver-war/): POST
//     /oauth/token with grant_type=password answers Spring Authorization
//     Server's token response (access_token, token_type "Bearer",
//     expires_in in seconds, scope) and sets the same token as the cookie
//     "access_token" (Path=/, Secure, HttpOnly). The token is a JWT made by
//     Spring's token generator; node-tak reads sub (the user), aud, nbf,
//     iat and exp from it. The official server signs it with a key of its
//     own; Outpost uses HS256 with a key of its own (enrollTokenKey in
//     secrets.yaml).
//     OAuth errors are {"error", "error_description"} (RFC 6749 §5.2).
//   - dfpc-coe/node-tak lib/api/oauth.ts and lib/auth.ts (CloudTAK): login
//     sends grant_type, username and password as query parameters of a
//     POST without a body, reads access_token, decodes the JWT's payload
//     (sub, aud as a string, nbf, exp, iat) and then sends the token as
//     the cookie access_token; a 401 means a bad user name or password.
//
// Outpost's choices: the token is accepted only on the enrollment port's
// read-only routes (config, config/qr, profile/enrollment,
// enrollment-package), never to sign a certificate; it lives
// enrollTokenTTL; it names the user by name and uid and stops working when
// that user is deleted; one got with an invitation's token stops working
// when that invitation is spent, revoked or expired.

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/golang-jwt/jwt/v5"

	"outpost/appliance/httpapi"
	"outpost/appliance/logx"
	"outpost/appliance/store"
)

// Limits and names of the token endpoint.
const (
	// OAuthTokenPath is the token endpoint (TAK Server's spelling).
	OAuthTokenPath      = "/oauth/token"
	enrollTokenTTL      = 10 * time.Minute
	enrollTokenAudience = "outpost-enrollment"
	enrollTokenCookie   = "access_token"
	oauthMaxBody        = 8 << 10 // three short form fields
	maxAccessToken      = 4 << 10 // an Outpost token is ~400 bytes
)

// enrollClaims are the token's claims. aud is a single string, as node-tak's
// TokenContents reads it (the library's default marshals a list).
type enrollClaims struct {
	jwt.RegisteredClaims
	Audience string `json:"aud"`
	UserUID  string `json:"uid"`
	// Invitation is the id of the invitation whose token was the password
	// (omitted for the user's password).
	Invitation string `json:"inv,omitempty"`
}

// GetAudience overrides RegisteredClaims' list with the single audience.
func (c enrollClaims) GetAudience() (jwt.ClaimStrings, error) {
	return jwt.ClaimStrings{c.Audience}, nil
}

// tokenAnswer is the token response (RFC 6749 §5.1, as Spring writes it).
type tokenAnswer struct {
	AccessToken string `json:"access_token"`
	TokenType   string `json:"token_type"`
	ExpiresIn   int64  `json:"expires_in"`
	Scope       string `json:"scope"`
}

// oauthToken is POST /oauth/token.
func (h *EnrollmentHandler) oauthToken(w http.ResponseWriter, r *http.Request) error {
	remote, err := h.overTLS(r)
	if err != nil {
		return err
	}
	params, err := oauthParams(w, r)
	if err != nil {
		var tooLarge *http.MaxBytesError
		if errors.As(err, &tooLarge) {
			return &oauthRefusal{http.StatusRequestEntityTooLarge, "invalid_request", fmt.Sprintf("the request body is larger than %d bytes", oauthMaxBody)}
		}
		return &oauthRefusal{http.StatusBadRequest, "invalid_request", "the parameters could not be read: send them in the query or as application/x-www-form-urlencoded"}
	}
	name, password := params.Get("username"), params.Get("password")
	if name == "" {
		// Spring takes the client's credentials as HTTP Basic; a user's
		// Basic credentials stand in for username and password here.
		if n, p, ok := r.BasicAuth(); ok {
			name, password = n, p
		}
	}
	if name == "" {
		return challenge("authentication required: username and password")
	}
	switch gt := params.Get("grant_type"); gt {
	case "password":
	case "":
		return &oauthRefusal{http.StatusBadRequest, "invalid_request", "grant_type is required (password)"}
	default:
		return &oauthRefusal{http.StatusBadRequest, "unsupported_grant_type", "grant_type " + httpapi.ClipValue(gt) + " is not supported: use password"}
	}
	user, invitation, err := h.checkCredentials(r, remote, name, password)
	if err != nil {
		return err
	}
	token, err := h.issueToken(user, invitation)
	if err != nil {
		return ours(err, "the token could not be signed", "signing an access token for "+logx.Clip(user.Name))
	}
	h.log.Info("enrollment access token issued", "user", logx.Clip(user.Name), "remote", remote, "invitation", invitation, "expires_in_s", int64(enrollTokenTTL/time.Second))
	http.SetCookie(w, &http.Cookie{Name: enrollTokenCookie, Value: token, Path: "/", Secure: true, HttpOnly: true,
		SameSite: http.SameSiteStrictMode, MaxAge: int(enrollTokenTTL / time.Second)})
	w.Header().Set("Pragma", "no-cache")
	httpapi.WriteJSON(w, http.StatusOK, tokenAnswer{AccessToken: token, TokenType: "Bearer",
		ExpiresIn: int64(enrollTokenTTL / time.Second), Scope: "enrollment"})
	return nil
}

// oauthParams merges the query and a form body (form values first, as
// ParseForm does), reading at most oauthMaxBody bytes.
func oauthParams(w http.ResponseWriter, r *http.Request) (url.Values, error) {
	q, err := url.ParseQuery(r.URL.RawQuery)
	if err != nil {
		return nil, err
	}
	body, err := readLimited(w, r, oauthMaxBody)
	if err != nil {
		return nil, err
	}
	if len(body) == 0 {
		return q, nil
	}
	ct := strings.ToLower(strings.TrimSpace(strings.SplitN(r.Header.Get("Content-Type"), ";", 2)[0]))
	if ct != "application/x-www-form-urlencoded" {
		return nil, errors.New("the body is not a form")
	}
	form, err := url.ParseQuery(string(body))
	if err != nil {
		return nil, err
	}
	for k, v := range q {
		if _, ok := form[k]; !ok {
			form[k] = v
		}
	}
	return form, nil
}

// oauthRefusal is a refusal of POST /oauth/token, answered (by enrollEdge)
// in RFC 6749's error shape (§5.2: error, error_description) with
// Outpost's message beside it.
type oauthRefusal struct {
	status            int
	code, description string
}

func (e *oauthRefusal) Error() string { return e.code + ": " + e.description }

func (e *oauthRefusal) write(w http.ResponseWriter) {
	httpapi.WriteJSON(w, e.status, map[string]string{"error": e.code, "error_description": e.description, "message": e.description})
}

// issueToken signs a token for user.
func (h *EnrollmentHandler) issueToken(user store.User, invitation string) (string, error) {
	now := h.opts.Now()
	var id [16]byte
	if _, err := rand.Read(id[:]); err != nil {
		return "", err
	}
	claims := enrollClaims{
		RegisteredClaims: jwt.RegisteredClaims{
			Subject:   user.Name,
			IssuedAt:  jwt.NewNumericDate(now),
			NotBefore: jwt.NewNumericDate(now),
			ExpiresAt: jwt.NewNumericDate(now.Add(enrollTokenTTL)),
			ID:        hex.EncodeToString(id[:]),
		},
		Audience:   enrollTokenAudience,
		UserUID:    user.UID,
		Invitation: invitation,
	}
	return jwt.NewWithClaims(jwt.SigningMethodHS256, claims).SignedString(h.tokenKey)
}

// errBadToken is every refusal of an access token (one answer for all).
var errBadToken = errors.New("bad or expired access token")

// verifyToken checks an access token and returns its user: HS256 with this
// server's key only, audience, expiry and not-before checked, and the user
// (and the invitation it was got with) still there.
func (h *EnrollmentHandler) verifyToken(ctx context.Context, raw string) (store.User, string, error) {
	if len(raw) > maxAccessToken {
		return store.User{}, "", fmt.Errorf("%w: longer than %d bytes", errBadToken, maxAccessToken)
	}
	var claims enrollClaims
	_, err := jwt.ParseWithClaims(raw, &claims, func(*jwt.Token) (any, error) { return h.tokenKey, nil },
		jwt.WithValidMethods([]string{jwt.SigningMethodHS256.Alg()}), jwt.WithAudience(enrollTokenAudience),
		jwt.WithExpirationRequired(), jwt.WithIssuedAt(), jwt.WithTimeFunc(h.opts.Now))
	if err != nil {
		return store.User{}, "", fmt.Errorf("%w: %v", errBadToken, err)
	}
	if claims.NotBefore == nil {
		return store.User{}, "", fmt.Errorf("%w: no nbf", errBadToken)
	}
	user, err := h.opts.Accounts.UserByUID(ctx, claims.UserUID)
	if errors.Is(err, store.ErrNotFound) || (err == nil && user.Name != claims.Subject) {
		return store.User{}, "", fmt.Errorf("%w: the user no longer exists", errBadToken)
	}
	if err != nil {
		return store.User{}, "", err
	}
	if claims.Invitation != "" {
		inv, err := h.opts.Accounts.EnrollInvitation(ctx, claims.Invitation)
		if errors.Is(err, store.ErrNotFound) || (err == nil && (!inv.Usable(h.opts.Now()) || inv.UserUID != user.UID)) {
			return store.User{}, "", fmt.Errorf("%w: the invitation it was got with is spent, revoked or expired", errBadToken)
		}
		if err != nil {
			return store.User{}, "", err
		}
	}
	return user, claims.Invitation, nil
}

// accessToken is the token a request carries: Authorization: Bearer, else
// the cookie access_token; "" when none.
func accessToken(r *http.Request) string {
	if a := r.Header.Get("Authorization"); len(a) > 7 && strings.EqualFold(a[:7], "bearer ") {
		return strings.TrimSpace(a[7:])
	}
	if c, err := r.Cookie(enrollTokenCookie); err == nil {
		return c.Value
	}
	return ""
}

// tokenOrBasic is the authentication of the read-only routes: HTTP Basic
// when the request carries it, else an access token. Its refusals are
// authenticate's.
func (h *EnrollmentHandler) tokenOrBasic(r *http.Request, remote string) (user store.User, invitation string, err error) {
	if _, _, basic := r.BasicAuth(); basic {
		return h.authenticate(r, remote)
	}
	raw := accessToken(r)
	if raw == "" {
		return h.authenticate(r, remote) // the 401 with its challenge
	}
	user, invitation, err = h.verifyToken(r.Context(), raw)
	switch {
	case errors.Is(err, errBadToken):
		h.busyLog.Warn("enrollment access token refused", "remote", remote, "reason", logx.Clip(err.Error()))
		return store.User{}, "", challenge(errBadToken.Error())
	case errors.Is(err, context.Canceled):
		return store.User{}, "", context.Canceled // the client went away; nothing to answer
	case err != nil:
		h.log.Error("enrollment access token could not be checked", "remote", remote, "err", err)
		return store.User{}, "", errCannotCheck
	}
	return user, invitation, nil
}
