package access

import (
	"encoding/json"
	"errors"
	"math/big"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"testing"

	"outpost/appliance/httpapi"
	"outpost/appliance/store"
	"outpost/internal/testkit"
)

var allRules = []Rule{Public, AllowList, Any, Self, Admin, Client, CertificateOnly, Password}

func TestRuleNames(t *testing.T) {
	seen := map[string]bool{}
	for _, r := range allRules {
		name := r.String()
		if name == "unknown" || seen[name] {
			t.Errorf("rule %d has name %q (unknown or taken)", r, name)
		}
		seen[name] = true
		back, ok := ParseRule(name)
		if !ok || back != r {
			t.Errorf("ParseRule(%q) = %v, %v; want %v", name, back, ok, r)
		}
	}
	// The names the route matrix of access.md uses.
	for _, n := range []string{"public", "allow-list", "any", "self", "admin", "client", "certificate", "password"} {
		if _, ok := ParseRule(n); !ok {
			t.Errorf("ParseRule(%q): not a rule", n)
		}
	}
	for _, n := range []string{"", "Admin", "unknown", "certificate-only", " admin"} {
		if r, ok := ParseRule(n); ok {
			t.Errorf("ParseRule(%q) = %v, want no rule", n, r)
		}
	}
	if got := Rule(0).String(); got != "unknown" {
		t.Errorf("Rule(0).String() = %q, want unknown", got)
	}
}

// principals is one principal of every kind the listeners resolve.
var principals = map[string]Principal{
	"anonymous":            Anon(),
	"api user":             {Kind: APIUser, Name: "ops", In: store.AllGroups, Out: store.AllGroups},
	"user by token":        {Kind: SystemUser, Name: "alice", UID: "u1", Role: store.UserRoleUser},
	"admin by token":       {Kind: SystemUser, Name: "boss", UID: "u2", Role: store.UserRoleAdmin},
	"user by certificate":  {Kind: SystemUser, Name: "alice", UID: "u1", Role: store.UserRoleUser, Serial: big.NewInt(3)},
	"admin by certificate": {Kind: SystemUser, Name: "boss", UID: "u2", Role: store.UserRoleAdmin, Serial: big.NewInt(4)},
	"certificate":          {Kind: Certificate, Name: "sensor", Serial: big.NewInt(5)},
	"channel key":          {Kind: ChannelKey},
}

func TestCheckEveryRuleAndPrincipal(t *testing.T) {
	const (
		ok    = "ok"
		no401 = "401"
		no403 = "403"
	)
	// want[rule][principal]
	want := map[Rule]map[string]string{
		Public:    {"anonymous": ok, "api user": ok, "user by token": ok, "admin by token": ok, "user by certificate": ok, "admin by certificate": ok, "certificate": ok, "channel key": ok},
		AllowList: {"anonymous": ok, "api user": ok, "user by token": ok, "admin by token": ok, "user by certificate": ok, "admin by certificate": ok, "certificate": ok, "channel key": ok},
		Client:    {"anonymous": ok, "api user": ok, "user by token": ok, "admin by token": ok, "user by certificate": ok, "admin by certificate": ok, "certificate": ok, "channel key": ok},
		Password:  {"anonymous": ok, "api user": ok, "user by token": ok, "admin by token": ok, "user by certificate": ok, "admin by certificate": ok, "certificate": ok, "channel key": ok},
		Any:       {"anonymous": no401, "api user": ok, "user by token": ok, "admin by token": ok, "user by certificate": ok, "admin by certificate": ok, "certificate": ok, "channel key": ok},
		Self:      {"anonymous": no401, "api user": ok, "user by token": ok, "admin by token": ok, "user by certificate": ok, "admin by certificate": ok, "certificate": ok, "channel key": ok},
		Admin:     {"anonymous": no401, "api user": ok, "user by token": no403, "admin by token": ok, "user by certificate": no403, "admin by certificate": ok, "certificate": no403, "channel key": ok},
		CertificateOnly: {"anonymous": no403, "api user": no403, "user by token": no403, "admin by token": no403,
			"user by certificate": ok, "admin by certificate": ok, "certificate": ok, "channel key": no403},
		Rule(0):  {"anonymous": no403, "api user": no403, "admin by token": no403, "channel key": no403},
		Rule(99): {"anonymous": no403, "api user": no403, "admin by certificate": no403},
	}
	for _, r := range allRules {
		if len(want[r]) != len(principals) {
			t.Fatalf("rule %v: the table covers %d principals of %d", r, len(want[r]), len(principals))
		}
	}
	for r, byName := range want {
		for name, w := range byName {
			p, found := principals[name]
			if !found {
				t.Fatalf("no principal %q", name)
			}
			err := Check(r, p)
			var got string
			switch {
			case err == nil:
				got = ok
			case errors.Is(err, ErrUnauthorized) && !errors.Is(err, ErrForbidden):
				got = no401
			case errors.Is(err, ErrForbidden) && !errors.Is(err, ErrUnauthorized):
				got = no403
			default:
				got = "unexpected " + err.Error()
			}
			if got != w {
				t.Errorf("Check(%v, %s) = %s (%v), want %s", r, name, got, err, w)
			}
		}
	}
}

func TestSelfOrAdmin(t *testing.T) {
	for _, tc := range []struct {
		p    string
		uid  string
		want bool
	}{
		{"user by token", "u1", true},
		{"user by certificate", "u1", true},
		{"user by token", "u2", false},
		{"user by token", "", false},
		{"admin by token", "u1", true},
		{"api user", "u1", true},
		{"channel key", "u1", true},
		{"certificate", "u1", false},
		{"anonymous", "", false},
	} {
		err := SelfOrAdmin(principals[tc.p], tc.uid)
		if tc.want && err != nil || !tc.want && !errors.Is(err, ErrForbidden) {
			t.Errorf("SelfOrAdmin(%s, %q) = %v, want allowed %v", tc.p, tc.uid, err, tc.want)
		}
	}
}

func TestFromWithoutPrincipalIsAnonymous(t *testing.T) {
	r := httptest.NewRequest("GET", "/x", nil)
	if p := From(r); p.Kind != Anonymous || p.In != store.AnonGroup || p.Out != store.AnonGroup {
		t.Errorf("From(a bare request) = %+v, want an anonymous principal", p)
	}
	boss := principals["admin by token"]
	if p := From(r.WithContext(With(r.Context(), boss))); p.Name != "boss" || !p.Admin() {
		t.Errorf("From(With(boss)) = %+v", p)
	}
}

func TestRoutes(t *testing.T) {
	mux := httpapi.NewMux(testkit.Discard())
	rt := NewRoutes(mux)
	called := map[string]int{}
	handler := func(name string) httpapi.HandlerFunc {
		return func(w http.ResponseWriter, r *http.Request) error {
			called[name]++
			httpapi.WriteMessage(w, http.StatusOK, "ran "+name)
			return nil
		}
	}
	rt.Handle("POST /b", Admin, handler("POST /b"))
	rt.Handle("GET /b", Any, handler("GET /b"))
	rt.Handle("GET /a/{x}", Public, handler("GET /a/{x}"))
	rt.Handle("DELETE /a/{x}", Admin, handler("DELETE /a/{x}"))
	rt.Handle("GET /c", CertificateOnly, handler("GET /c"))

	wantPatterns := []string{"DELETE /a/{x}", "GET /a/{x}", "GET /b", "POST /b", "GET /c"}
	if got := rt.Patterns(); !slices.Equal(got, wantPatterns) {
		t.Errorf("Patterns() = %q, want %q (by path, then method)", got, wantPatterns)
	}
	if r, ok := rt.Rule("POST /b"); !ok || r != Admin {
		t.Errorf("Rule(POST /b) = %v, %v; want admin", r, ok)
	}
	if _, ok := rt.Rule("PUT /b"); ok {
		t.Error("Rule of an unregistered pattern was found")
	}

	t.Run("registering twice panics", func(t *testing.T) {
		defer func() {
			v := recover()
			if v == nil || !strings.Contains(v.(string), "GET /b") {
				t.Errorf("recover() = %v, want a panic naming the pattern", v)
			}
		}()
		rt.Handle("GET /b", Public, handler("again"))
	})

	serve := func(method, path string, p *Principal) *httptest.ResponseRecorder {
		req := httptest.NewRequest(method, path, nil)
		if p != nil {
			req = req.WithContext(With(req.Context(), *p))
		}
		rec := httptest.NewRecorder()
		mux.ServeHTTP(rec, req)
		return rec
	}
	message := func(t *testing.T, rec *httptest.ResponseRecorder) string {
		t.Helper()
		var m httpapi.Message
		if err := json.Unmarshal(rec.Body.Bytes(), &m); err != nil || m.Message == "" {
			t.Fatalf("body %q is not a JSON message: %v", rec.Body.String(), err)
		}
		return m.Message
	}
	user, boss, cert := principals["user by token"], principals["admin by token"], principals["certificate"]

	t.Run("no credential on an admin route is 401 with a challenge", func(t *testing.T) {
		rec := serve("POST", "/b", nil)
		if rec.Code != http.StatusUnauthorized || rec.Header().Get("WWW-Authenticate") != `Bearer realm="Outpost"` {
			t.Fatalf("status %d, WWW-Authenticate %q", rec.Code, rec.Header().Get("WWW-Authenticate"))
		}
		if msg := message(t, rec); !strings.Contains(msg, "Authorization: Bearer") {
			t.Errorf("message %q does not say how to authenticate", msg)
		}
	})
	t.Run("a user on an admin route is 403 without a challenge", func(t *testing.T) {
		rec := serve("DELETE", "/a/1", &user)
		if rec.Code != http.StatusForbidden || rec.Header().Get("WWW-Authenticate") != "" {
			t.Fatalf("status %d, WWW-Authenticate %q", rec.Code, rec.Header().Get("WWW-Authenticate"))
		}
		if msg := message(t, rec); !strings.Contains(msg, "administrator") {
			t.Errorf("message %q does not say who may", msg)
		}
	})
	t.Run("a token without a certificate on a certificate route is 403", func(t *testing.T) {
		rec := serve("GET", "/c", &boss)
		if rec.Code != http.StatusForbidden {
			t.Fatalf("status %d", rec.Code)
		}
		if msg := message(t, rec); !strings.Contains(msg, "certificate") {
			t.Errorf("message %q does not name what is missing", msg)
		}
	})
	if n := len(called); n != 0 {
		t.Fatalf("a refused route ran its handler: %v", called)
	}
	for _, tc := range []struct {
		method, path string
		p            *Principal
		ran          string
	}{
		{"GET", "/a/1", nil, "GET /a/{x}"},
		{"GET", "/b", &user, "GET /b"},
		{"POST", "/b", &boss, "POST /b"},
		{"DELETE", "/a/1", &boss, "DELETE /a/{x}"},
		{"GET", "/c", &cert, "GET /c"},
	} {
		rec := serve(tc.method, tc.path, tc.p)
		if rec.Code != http.StatusOK || called[tc.ran] != 1 {
			t.Errorf("%s %s: status %d, handler %q ran %d times; want 200 and once", tc.method, tc.path, rec.Code, tc.ran, called[tc.ran])
		}
	}
}

// claimer binds uids in memory: the first identity to claim a uid keeps it
// (the broker's rule, reduced to what ActFor needs).
type claimer struct {
	bound  map[string]string
	claims []string
}

func (c *claimer) ClaimUID(uid, identity string) error {
	c.claims = append(c.claims, uid+"="+identity)
	if owner, ok := c.bound[uid]; ok && owner != identity {
		return errors.New("bound to another identity")
	}
	if identity != "" {
		c.bound[uid] = identity
	}
	return nil
}

func TestActFor(t *testing.T) {
	c := &claimer{bound: map[string]string{"ANDROID-bob": "bob"}}
	alice := principals["user by certificate"]
	if err := ActFor(c, alice, "creatorUid", "ANDROID-alice"); err != nil {
		t.Fatalf("an unbound uid: %v", err)
	}
	if c.bound["ANDROID-alice"] != "alice" {
		t.Errorf("the unbound uid was not bound to the certificate's identity: %v", c.bound)
	}
	err := ActFor(c, alice, "clientUid", "ANDROID-bob")
	if !errors.Is(err, ErrForbidden) || !strings.Contains(err.Error(), `clientUid: uid "ANDROID-bob" belongs to another user`) {
		t.Errorf("another's uid: %v, want 403 naming the field and the uid", err)
	}
	// Anonymous (no certificate) acts for uids bound to no identity, and
	// never for a bound one.
	if err := ActFor(c, Anon(), "uid", "ANDROID-carol"); err != nil {
		t.Errorf("anonymous, an unbound uid: %v", err)
	}
	if err := ActFor(c, Anon(), "uid", "ANDROID-alice"); !errors.Is(err, ErrForbidden) {
		t.Errorf("anonymous, a bound uid: %v, want forbidden", err)
	}
	// Nothing to check: no uid, or no claimer.
	before := len(c.claims)
	if err := ActFor(c, alice, "uid", ""); err != nil || len(c.claims) != before {
		t.Errorf("an empty uid: %v, %d claims made", err, len(c.claims)-before)
	}
	if err := ActFor(nil, alice, "uid", "ANDROID-bob"); err != nil {
		t.Errorf("no claimer: %v", err)
	}
}
