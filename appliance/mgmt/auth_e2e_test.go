package mgmt_test

import (
	"context"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"testing"
	"time"

	"outpost/appliance"
	"outpost/appliance/admin"
	"outpost/appliance/config"
	"outpost/internal/testkit"
)

// TestFirstRunAdminToken: the first start creates API user admin and writes
// its token to <dataDir>/admin.token (0600); the log names the file, never
// the token; a restart creates nothing new.
func TestFirstRunAdminToken(t *testing.T) {
	e := newEnv(t, func(c *config.Config) { c.HTTPPort, c.CoTPort = -1, -1 })
	path := filepath.Join(e.app.Cfg.DataDir, admin.AdminTokenFile)
	st, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	if runtime.GOOS != "windows" && st.Mode().Perm() != 0o600 {
		t.Fatalf("admin.token mode %v, want 0600", st.Mode().Perm())
	}
	if len(e.admin) < 40 {
		t.Fatalf("admin token %d characters", len(e.admin))
	}
	logs := e.logs.String()
	if strings.Contains(logs, e.admin) || !strings.Contains(logs, path) {
		t.Fatalf("the log must name %s and never the token", path)
	}
	if n := e.count("api_users", "name = 'admin'"); n != 1 {
		t.Fatalf("%d admin rows", n)
	}
	// The token is stored hashed, never in clear.
	var stored string
	e.db().QueryRow(`SELECT token_hash FROM api_users WHERE name = 'admin'`).Scan(&stored)
	if stored == e.admin || stored != sha([]byte(e.admin)) {
		t.Fatalf("stored %q is not the SHA-256 of the token", stored)
	}

	// A second appliance on the same data directory (after the first closed)
	// finds the API user and creates nothing.
	cfg := e.app.Cfg
	if err := e.app.Close(context.Background()); err != nil {
		t.Fatal(err)
	}
	a2 := appliance.New(cfg, testkit.Discard())
	if err := a2.Open(context.Background()); err != nil {
		t.Fatal(err)
	}
	defer a2.Close(context.Background())
	b, _ := os.ReadFile(path)
	if strings.TrimSpace(string(b)) != e.admin {
		t.Fatal("a restart rewrote admin.token")
	}
}

// TestAuthentication: the middleware in front of every route.
func TestAuthentication(t *testing.T) {
	e := newEnv(t, func(c *config.Config) { c.HTTPPort, c.CoTPort, c.LoginTokenLifetime = -1, -1, 2*time.Second })
	kimUID, kimToken := e.createUser("kim", "kim-password-1")

	cases := []struct {
		name, method, path, token string
		status                    int
		msg                       string
	}{
		{"alive needs nothing", "GET", "/Alive", "", 200, ""},
		{"clients by IP, no token", "GET", "/Clients", "", 200, ""},
		{"no token", "GET", "/ManageSystemUser/getAll", "", 401, "authentication required"},
		{"wrong scheme", "GET", "/ManageSystemUser/getAll", "", 401, "authentication required"},
		{"unknown token", "GET", "/ManageSystemUser/getAll", "not-a-token", 401, "unknown or expired token"},
		{"api user", "GET", "/ManageSystemUser/getAll", e.admin, 200, ""},
		{"system user's own token", "GET", "/DataPackageTable", kimToken, 200, ""},
		{"a user on an administrator's route", "GET", "/ManageSystemUser/getAll", kimToken, 403, "only an administrator"},
		{"unknown route with a token", "GET", "/NoSuchThing", e.admin, 404, "no such endpoint"},
		{"unknown route without one", "GET", "/NoSuchThing", "", 401, "authentication required"},
		{"wrong method", "PATCH", "/DataPackageTable", e.admin, 405, "not allowed"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			var r testkit.Response
			if tc.name == "wrong scheme" {
				r = e.do(tc.method, tc.path, "", nil, "Authorization", "Basic "+e.admin)
			} else {
				r = e.do(tc.method, tc.path, tc.token, nil)
			}
			want(t, tc.name, r, tc.status)
			if !strings.Contains(r.Message(), tc.msg) {
				t.Fatalf("message %q, want %q", r.Message(), tc.msg)
			}
			if tc.status == 401 && r.Header.Get("WWW-Authenticate") == "" {
				t.Fatal("401 without WWW-Authenticate")
			}
		})
	}

	// POST /api/login: a login token works as kim's bearer token until it
	// expires (loginTokenLifetime 2 s here).
	r := e.do("POST", "/api/login", "", map[string]string{"username": "kim", "password": "kim-password-1"})
	want(t, "login", r, 200)
	var login struct{ Token, Expires, ID, Username string }
	r.JSON(t, &login)
	if login.ID != kimUID || login.Username != "kim" || len(login.Token) < 40 {
		t.Fatalf("login answer %s", r.Body)
	}
	exp, err := time.Parse("2006-01-02T15:04:05.000Z", login.Expires)
	if err != nil || time.Until(exp) > 3*time.Second {
		t.Fatalf("expires %q", login.Expires)
	}
	r = e.do("GET", "/api/whoami", login.Token, nil)
	want(t, "GET /api/whoami with the login token", r, 200)
	if !strings.Contains(string(r.Body), `"name":"kim"`) || !strings.Contains(string(r.Body), `"role":"user"`) {
		t.Fatalf("/api/whoami: %s", r.Body)
	}
	if n := e.count("login_tokens", "user_uid = ?", kimUID); n != 1 {
		t.Fatalf("%d login tokens stored", n)
	}
	testkit.WaitFor(t, "the login token to expire", func() bool {
		return e.do("GET", "/api/whoami", login.Token, nil).Status == 401
	})
	want(t, "wrong password", e.do("POST", "/api/login", "", map[string]string{"username": "kim", "password": "nope"}), 401)
	want(t, "unknown user", e.do("POST", "/api/login", "", map[string]string{"username": "nobody", "password": "nope"}), 401)

	// A token revoked with `outpost token revoke` (another process, same
	// file) is refused at the next request: nothing is cached.
	ops, err := admin.TokenCreate(context.Background(), e.app.Cfg, testkit.Discard(), "ops")
	if err != nil {
		t.Fatal(err)
	}
	want(t, "new API token", e.do("GET", "/DataPackageTable", ops.Token, nil), 200)
	if err := admin.TokenRevoke(context.Background(), e.app.Cfg, testkit.Discard(), "ops"); err != nil {
		t.Fatal(err)
	}
	want(t, "revoked API token", e.do("GET", "/DataPackageTable", ops.Token, nil), 401)
}

// TestFailureLimit: ten unknown tokens or failed logins from one address in
// a minute get it 429 with Retry-After, even with a valid token; the log says
// so and never holds the credentials.
func TestFailureLimit(t *testing.T) {
	e := newEnv(t, func(c *config.Config) { c.HTTPPort, c.CoTPort = -1, -1 })
	e.createUser("lee", "lee-password-1")
	const badToken = "guessed-token-0123456789abcdef"
	for i := 0; i < 5; i++ {
		want(t, "bad token", e.do("GET", "/ManageSystemUser/getAll", badToken, nil), 401)
	}
	for i := 0; i < 5; i++ {
		want(t, "bad login", e.do("POST", "/api/login", "", map[string]string{"username": "lee", "password": "guess-" + strconv.Itoa(i)}), 401)
	}
	r := e.do("GET", "/ManageSystemUser/getAll", e.admin, nil)
	want(t, "valid token from a blocked address", r, 429)
	if ra, _ := strconv.Atoi(r.Header.Get("Retry-After")); ra < 1 || ra > 60 {
		t.Fatalf("Retry-After %q", r.Header.Get("Retry-After"))
	}
	want(t, "login from a blocked address", e.do("POST", "/api/login", "", map[string]string{"username": "lee", "password": "lee-password-1"}), 429)
	want(t, "/Alive stays open", e.do("GET", "/Alive", "", nil), 200)
	logs := e.logs.String()
	if !strings.Contains(logs, "address blocked after repeated failed logins or unknown tokens") {
		t.Fatalf("no block in the log:\n%s", logs)
	}
	for _, secret := range []string{badToken, "guess-0", "lee-password-1", e.admin} {
		if strings.Contains(logs, secret) {
			t.Fatalf("the log holds a credential %q", secret)
		}
	}
}
