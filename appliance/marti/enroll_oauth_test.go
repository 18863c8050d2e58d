package marti

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/golang-jwt/jwt/v5"
)

// login posts to /oauth/token as node-tak does (parameters in the query, no body).
func (e *enrollEnv) login(t *testing.T, user, password string) (enrollResp, tokenAnswer) {
	t.Helper()
	q := url.Values{"grant_type": {"password"}, "username": {user}, "password": {password}}
	res := e.do(t, e.client, enrollReq{method: http.MethodPost, path: OAuthTokenPath + "?" + q.Encode(), noAuth: true})
	var ans tokenAnswer
	if res.status == http.StatusOK {
		if err := json.Unmarshal(res.body, &ans); err != nil {
			t.Fatalf("token answer %s: %v", res.body, err)
		}
	}
	return res, ans
}

// withToken calls a route with the token as a cookie (node-tak) or as a bearer header.
func (e *enrollEnv) withToken(t *testing.T, method, path, token string, cookie bool) enrollResp {
	t.Helper()
	h := map[string]string{"Authorization": "Bearer " + token}
	if cookie {
		h = map[string]string{"Cookie": enrollTokenCookie + "=" + token}
	}
	return e.do(t, e.client, enrollReq{method: method, path: path, noAuth: true, header: h})
}

// TestOAuthTokenLogin: a password login answers TAK Server's token response
// and cookie; the JWT carries the claims node-tak reads and opens the
// read-only routes, by cookie and by bearer header, and nothing else.
func TestOAuthTokenLogin(t *testing.T) {
	env := newEnrollEnv(t)
	res, ans := env.login(t, enrollUser, enrollPassword)
	if res.status != http.StatusOK || ans.AccessToken == "" || ans.TokenType != "Bearer" || ans.ExpiresIn != 600 {
		t.Fatalf("login: %d %s", res.status, res.body)
	}
	if ct := res.header.Get("Content-Type"); ct != "application/json" {
		t.Errorf("Content-Type %q (node-tak reads JSON by exactly application/json)", ct)
	}
	cookie := res.header.Get("Set-Cookie")
	if !strings.HasPrefix(cookie, "access_token="+ans.AccessToken) || !strings.Contains(cookie, "Secure") || !strings.Contains(cookie, "HttpOnly") {
		t.Errorf("Set-Cookie %q", cookie)
	}
	// The payload as node-tak's OAuth.parse reads it.
	parts := strings.Split(ans.AccessToken, ".")
	if len(parts) != 3 {
		t.Fatalf("not a JWT: %q", ans.AccessToken)
	}
	head, _ := base64.RawURLEncoding.DecodeString(parts[0])
	payload, err := base64.RawURLEncoding.DecodeString(parts[1])
	if err != nil {
		t.Fatal(err)
	}
	var claims map[string]any
	if err := json.Unmarshal(payload, &claims); err != nil {
		t.Fatal(err)
	}
	now := float64(env.clock.Now().Unix())
	if claims["sub"] != enrollUser || claims["aud"] != enrollTokenAudience || claims["iat"] != now || claims["nbf"] != now ||
		claims["exp"] != now+600 || claims["jti"] == "" || !strings.Contains(string(head), `"HS256"`) {
		t.Fatalf("header %s claims %v", head, claims)
	}
	for _, cookie := range []bool{true, false} {
		if r := env.withToken(t, http.MethodGet, "/Marti/api/tls/config", ans.AccessToken, cookie); r.status != http.StatusOK || !strings.Contains(string(r.body), "certificateConfig") {
			t.Fatalf("config with the token (cookie %v): %d %s", cookie, r.status, r.body)
		}
		if r := env.withToken(t, http.MethodGet, "/Marti/api/tls/profile/enrollment", ans.AccessToken, cookie); r.status != http.StatusNoContent {
			t.Fatalf("profile with the token: %d %s", r.status, r.body)
		}
	}
	// A JWT never mints a certificate.
	csr := atakBody(newCSR(t, ecKey(t), enrollUser))
	for _, p := range []string{"/Marti/api/tls/signClient/v2", "/Marti/api/tls/signClient"} {
		for _, cookie := range []bool{true, false} {
			h := map[string]string{"Authorization": "Bearer " + ans.AccessToken}
			if cookie {
				h = map[string]string{"Cookie": "access_token=" + ans.AccessToken}
			}
			r := env.do(t, env.client, enrollReq{method: http.MethodPost, path: p, noAuth: true, header: h, body: csr})
			if r.status != http.StatusUnauthorized {
				t.Fatalf("%s with the token: %d %s", p, r.status, r.body)
			}
		}
	}
	if n := env.issued(t, enrollUser); n != 0 {
		t.Fatalf("%d certificates issued on a token", n)
	}
	// A form body works as the query does; Basic credentials stand in for username/password.
	r := env.do(t, env.client, enrollReq{method: http.MethodPost, path: OAuthTokenPath, noAuth: true,
		header: map[string]string{"Content-Type": "application/x-www-form-urlencoded"},
		body:   []byte(url.Values{"grant_type": {"password"}, "username": {enrollUser}, "password": {enrollPassword}}.Encode())})
	if r.status != http.StatusOK {
		t.Fatalf("form login: %d %s", r.status, r.body)
	}
	r = env.do(t, env.client, enrollReq{method: http.MethodPost, path: OAuthTokenPath + "?grant_type=password"})
	if r.status != http.StatusOK {
		t.Fatalf("Basic login: %d %s", r.status, r.body)
	}
	if logs := env.logs.String(); strings.Contains(logs, enrollPassword) || strings.Contains(logs, ans.AccessToken) {
		t.Fatalf("a secret in the log:\n%s", logs)
	}
	// The token stops working when its user is deleted.
	u, err := env.store.Accounts().UserByName(context.Background(), enrollUser)
	if err != nil {
		t.Fatal(err)
	}
	if err := env.store.Accounts().DeleteUser(context.Background(), u.UID); err != nil {
		t.Fatal(err)
	}
	if r := env.withToken(t, http.MethodGet, "/Marti/api/tls/config", ans.AccessToken, true); r.status != http.StatusUnauthorized {
		t.Fatalf("config with a deleted user's token: %d %s", r.status, r.body)
	}
}

// TestOAuthTokenErrors: every credential failure is the same 401; a bad
// grant_type is 400 in the OAuth shape; an oversized or non-form body is
// refused; nothing is issued.
func TestOAuthTokenErrors(t *testing.T) {
	env := newEnrollEnv(t)
	for _, c := range []struct{ user, pw string }{{enrollUser, "wrong"}, {"nobody", enrollPassword}, {enrollUser, ""}} {
		res, _ := env.login(t, c.user, c.pw)
		if msg := wantMessage(t, "login "+c.user, res, http.StatusUnauthorized); msg != "bad user name or password" {
			t.Errorf("login %s/%s: %q", c.user, c.pw, msg)
		}
		if strings.Contains(res.header.Get("Set-Cookie"), "access_token") {
			t.Error("a cookie set on a refusal")
		}
	}
	if res := env.do(t, env.client, enrollReq{method: http.MethodPost, path: OAuthTokenPath + "?grant_type=password", noAuth: true}); res.status != http.StatusUnauthorized || res.header.Get("WWW-Authenticate") == "" {
		t.Fatalf("no credentials: %d %s", res.status, res.body)
	}
	for gt, code := range map[string]string{"client_credentials": "unsupported_grant_type", "refresh_token": "unsupported_grant_type", "": "invalid_request"} {
		q := url.Values{"username": {enrollUser}, "password": {enrollPassword}}
		if gt != "" {
			q.Set("grant_type", gt)
		}
		res := env.do(t, env.client, enrollReq{method: http.MethodPost, path: OAuthTokenPath + "?" + q.Encode(), noAuth: true})
		var e map[string]string
		if res.status != http.StatusBadRequest || json.Unmarshal(res.body, &e) != nil || e["error"] != code || e["error_description"] == "" || e["message"] == "" {
			t.Fatalf("grant_type %q: %d %s", gt, res.status, res.body)
		}
	}
	form := map[string]string{"Content-Type": "application/x-www-form-urlencoded"}
	big := "grant_type=password&username=" + enrollUser + "&password=" + strings.Repeat("x", oauthMaxBody)
	if res := env.do(t, env.client, enrollReq{method: http.MethodPost, path: OAuthTokenPath, noAuth: true, header: form, body: []byte(big)}); res.status != http.StatusRequestEntityTooLarge {
		t.Fatalf("oversized body: %d %s", res.status, res.body)
	}
	for _, bad := range []struct {
		ct, body string
	}{{"application/json", `{"grant_type":"password"}`}, {"application/x-www-form-urlencoded", "grant_type=%zz"}} {
		res := env.do(t, env.client, enrollReq{method: http.MethodPost, path: OAuthTokenPath, noAuth: true, header: map[string]string{"Content-Type": bad.ct}, body: []byte(bad.body)})
		if res.status != http.StatusBadRequest {
			t.Fatalf("body %q as %s: %d %s", bad.body, bad.ct, res.status, res.body)
		}
	}
	if res := env.do(t, env.client, enrollReq{path: OAuthTokenPath}); res.status != http.StatusMethodNotAllowed {
		t.Fatalf("GET %s: %d", OAuthTokenPath, res.status)
	}
}

// TestOAuthTokenGuard: wrong logins spend the password guard's budget as
// Basic does, and the refusal is 429 with Retry-After.
func TestOAuthTokenGuard(t *testing.T) {
	env := newEnrollEnv(t)
	got := map[int]int{}
	for i := 0; i < 12; i++ {
		res, _ := env.login(t, enrollUser, "guess")
		got[res.status]++
	}
	if got[http.StatusTooManyRequests] == 0 || got[http.StatusUnauthorized] == 0 || got[http.StatusUnauthorized]+got[http.StatusTooManyRequests] != 12 {
		t.Fatalf("12 wrong logins: %v", got)
	}
	res, _ := env.login(t, enrollUser, enrollPassword)
	if wantMessage(t, "right password from the guessing address", res, http.StatusTooManyRequests); res.header.Get("Retry-After") == "" {
		t.Fatal("no Retry-After")
	}
	// Basic on the same port shares the budget.
	if r := env.do(t, env.client, enrollReq{path: "/Marti/api/tls/config"}); r.status != http.StatusTooManyRequests {
		t.Fatalf("Basic after the guesses: %d", r.status)
	}
	env.clock.Add(61 * time.Second)
	if res, _ := env.login(t, enrollUser, enrollPassword); res.status != http.StatusOK {
		t.Fatalf("after the block: %d %s", res.status, res.body)
	}
}

// TestOAuthTokenInvitation: an invitation's token logs in without being
// spent; the JWT works until signClient (with Basic) spends the invitation.
func TestOAuthTokenInvitation(t *testing.T) {
	env := newEnrollEnv(t)
	inv := env.invite(t, 1, time.Hour)
	res, ans := env.login(t, enrollUser, inv.Token)
	if res.status != http.StatusOK {
		t.Fatalf("login with the invitation: %d %s", res.status, res.body)
	}
	if n := usesLeft(t, env, inv.ID); n != 1 {
		t.Fatalf("login spent the invitation: %d uses left", n)
	}
	if r := env.withToken(t, http.MethodGet, "/Marti/api/tls/config", ans.AccessToken, true); r.status != http.StatusOK {
		t.Fatalf("config with the invitation's JWT: %d %s", r.status, r.body)
	}
	if r := env.signWith(t, env.client, enrollUser, inv.Token); r.status != http.StatusOK {
		t.Fatalf("signClient/v2 with the invitation: %d %s", r.status, r.body)
	}
	if r := env.withToken(t, http.MethodGet, "/Marti/api/tls/config", ans.AccessToken, true); r.status != http.StatusUnauthorized {
		t.Fatalf("config with a spent invitation's JWT: %d %s", r.status, r.body)
	}
	if res, _ := env.login(t, enrollUser, inv.Token); res.status != http.StatusUnauthorized {
		t.Fatalf("login with the spent invitation: %d", res.status)
	}
}

// TestOAuthTokenTampering: forged, re-signed, alg none, expired, early,
// foreign-audience and oversized tokens are refused with the same 401.
func TestOAuthTokenTampering(t *testing.T) {
	env := newEnrollEnv(t)
	_, ans := env.login(t, enrollUser, enrollPassword)
	h := env.handler.(*EnrollmentHandler)
	var claims enrollClaims
	if _, err := jwt.ParseWithClaims(ans.AccessToken, &claims, func(*jwt.Token) (any, error) { return h.tokenKey, nil }, jwt.WithTimeFunc(env.clock.Now)); err != nil {
		t.Fatal(err)
	}
	sign := func(m jwt.SigningMethod, key any, edit func(c *enrollClaims)) string {
		c := claims
		edit(&c)
		s, err := jwt.NewWithClaims(m, c).SignedString(key)
		if err != nil {
			t.Fatal(err)
		}
		return s
	}
	same := func(*enrollClaims) {}
	parts := strings.Split(ans.AccessToken, ".")
	other := []byte("another appliance's key, 32 byte")
	bad := map[string]string{
		"alg none":           sign(jwt.SigningMethodNone, jwt.UnsafeAllowNoneSignatureType, same),
		"HS512":              sign(jwt.SigningMethodHS512, h.tokenKey, same),
		"another key":        sign(jwt.SigningMethodHS256, other, same),
		"edited payload":     parts[0] + "." + base64.RawURLEncoding.EncodeToString([]byte(`{"sub":"root","aud":"outpost-enrollment","uid":"x","exp":9999999999,"nbf":0,"iat":0}`)) + "." + parts[2],
		"no signature":       parts[0] + "." + parts[1] + ".",
		"expired":            sign(jwt.SigningMethodHS256, h.tokenKey, func(c *enrollClaims) { c.ExpiresAt = jwt.NewNumericDate(env.clock.Now().Add(-time.Second)) }),
		"no expiry":          sign(jwt.SigningMethodHS256, h.tokenKey, func(c *enrollClaims) { c.ExpiresAt = nil }),
		"not yet valid":      sign(jwt.SigningMethodHS256, h.tokenKey, func(c *enrollClaims) { c.NotBefore = jwt.NewNumericDate(env.clock.Now().Add(time.Hour)) }),
		"no nbf":             sign(jwt.SigningMethodHS256, h.tokenKey, func(c *enrollClaims) { c.NotBefore = nil }),
		"wrong audience":     sign(jwt.SigningMethodHS256, h.tokenKey, func(c *enrollClaims) { c.Audience = "takserver" }),
		"another user":       sign(jwt.SigningMethodHS256, h.tokenKey, func(c *enrollClaims) { c.Subject = "bob" }),
		"garbage":            "not.a.jwt",
		"oversized":          strings.Repeat("a", maxAccessToken+1),
		"unknown invitation": sign(jwt.SigningMethodHS256, h.tokenKey, func(c *enrollClaims) { c.Invitation = "no-such-invitation" }),
	}
	for name, tok := range bad {
		for _, cookie := range []bool{true, false} {
			r := env.withToken(t, http.MethodGet, "/Marti/api/tls/config", tok, cookie)
			if msg := wantMessage(t, name, r, http.StatusUnauthorized); msg != errBadToken.Error() {
				t.Errorf("%s: %q", name, msg)
			}
		}
	}
	// The original still works, and expires after ten minutes.
	if r := env.withToken(t, http.MethodGet, "/Marti/api/tls/config", ans.AccessToken, false); r.status != http.StatusOK {
		t.Fatalf("the original token: %d", r.status)
	}
	env.clock.Add(enrollTokenTTL + time.Second)
	if r := env.withToken(t, http.MethodGet, "/Marti/api/tls/config", ans.AccessToken, false); r.status != http.StatusUnauthorized {
		t.Fatalf("the token after its expiry: %d", r.status)
	}
}
