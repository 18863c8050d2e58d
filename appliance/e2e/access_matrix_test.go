package e2e

import (
	"context"
	"encoding/base64"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"testing"

	"outpost/appliance/access"
	"outpost/appliance/admin"
	"outpost/appliance/apptest"
	"outpost/appliance/config"
	"outpost/appliance/netx"
	"outpost/appliance/store"
	"outpost/internal/testkit"
)

// The route matrix (docs/access.md "Route matrix") against the code: every
// route the management, client and enrollment handlers register has exactly
// one row with the rule it is registered with, and every route, called by
// every kind of principal, answers as its rule says.

// matrixListeners are the matrix's listener names, the appliance listener
// whose routes they are, and the rules a route of that listener may have.
var matrixListeners = []struct {
	name, listener string
	rules          []access.Rule
}{
	{"management", netx.ListenerREST, []access.Rule{access.Public, access.AllowList, access.Any, access.Self, access.Admin}},
	{"client", netx.ListenerHTTP, []access.Rule{access.Client, access.CertificateOnly}},
	{"enrollment", netx.ListenerEnroll, []access.Rule{access.Password}},
}

// matrixRow is one row of the table.
type matrixRow struct {
	listener, route string
	rule            access.Rule
	line            int // in docs/access.md
}

const matrixDoc = "docs/access.md"

// readMatrix parses the table of docs/access.md "Route matrix" (columns
// Listener, Route, Rule; any further column is a note and ignored), keyed by
// "listener route".
func readMatrix(t *testing.T) map[string]matrixRow {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(testkit.ModuleRoot(t), filepath.FromSlash(matrixDoc)))
	if err != nil {
		t.Fatal(err)
	}
	cells := func(line string) []string {
		line = strings.TrimSpace(line)
		line = strings.TrimSuffix(strings.TrimPrefix(line, "|"), "|")
		out := strings.Split(line, "|")
		for i, c := range out {
			out[i] = strings.Trim(strings.TrimSpace(c), "`")
		}
		return out
	}
	known := map[string]bool{}
	for _, l := range matrixListeners {
		known[l.name] = true
	}
	rows := map[string]matrixRow{}
	section, header, table := false, false, false
lines:
	for i, line := range strings.Split(string(b), "\n") {
		n := i + 1
		switch {
		case strings.HasPrefix(line, "## "):
			if table {
				break lines
			}
			section = strings.TrimSpace(line) == "## Route matrix"
			continue
		case !section:
			continue
		case !header:
			if c := cells(line); strings.HasPrefix(strings.TrimSpace(line), "|") && len(c) >= 3 &&
				c[0] == "Listener" && c[1] == "Route" && c[2] == "Rule" {
				header = true
			}
			continue
		case !table:
			if !strings.HasPrefix(strings.TrimSpace(line), "|") || !strings.Contains(line, "---") {
				t.Fatalf("%s:%d: the matrix's header is not followed by its separator line", matrixDoc, n)
			}
			table = true
			continue
		}
		if !strings.HasPrefix(strings.TrimSpace(line), "|") {
			break lines // the table ends
		}
		c := cells(line)
		if len(c) < 3 {
			t.Errorf("%s:%d: a row of the matrix needs Listener, Route and Rule: %q", matrixDoc, n, line)
			continue
		}
		rule, ok := access.ParseRule(c[2])
		if !ok {
			t.Errorf("%s:%d: %q is no rule (public, allow-list, any, self, admin, client, certificate, password)", matrixDoc, n, c[2])
			continue
		}
		if !known[c[0]] {
			t.Errorf("%s:%d: %q is no listener of the matrix (management, client, enrollment)", matrixDoc, n, c[0])
			continue
		}
		key := c[0] + " " + c[1]
		if prev, dup := rows[key]; dup {
			t.Errorf("%s:%d: %s %s has a row already (line %d)", matrixDoc, n, c[0], c[1], prev.line)
			continue
		}
		rows[key] = matrixRow{listener: c[0], route: c[1], rule: rule, line: n}
	}
	if !table {
		t.Fatalf(`%s: no table with the header "| Listener | Route | Rule |" in the section "Route matrix"`, matrixDoc)
	}
	return rows
}

const (
	matrixPassword = "matrix-password" // of both system users
	matrixPrefix   = "matrix-"         // of every placeholder: no user, group, mission or uid is named so
)

// matrixEnv is the appliance the routes are called on and its principals.
type matrixEnv struct {
	app  *apptest.App
	user store.User // a system user of the role user
	boss store.User // a system user of the role admin
	api  string     // the first run's API user token (admin.token)
}

func TestAccessMatrix(t *testing.T) {
	// No address may reach the allow-list routes without a token here
	// (192.0.2.0/24 is documentation space): loopback, allowed by
	// default, is tested at the end.
	app := apptest.Start(t, func(c *config.Config) { c.AllowedCLIIPs = []string{"192.0.2.0/24"} })
	e := &matrixEnv{app: app}
	ctx := context.Background()
	var err error
	acc := app.Store().Accounts()
	if e.user, err = acc.CreateUser(ctx, store.UserInput{Name: "matrix-user", Password: matrixPassword}); err != nil {
		t.Fatal(err)
	}
	if e.boss, err = acc.CreateUser(ctx, store.UserInput{Name: "matrix-boss", Password: matrixPassword, Role: store.UserRoleAdmin}); err != nil {
		t.Fatal(err)
	}
	tok, err := os.ReadFile(filepath.Join(app.Cfg.DataDir, admin.AdminTokenFile))
	if err != nil {
		t.Fatalf("first run wrote no admin token: %v", err)
	}
	e.api = strings.TrimSpace(string(tok))

	// Every registered route has its row, with its rule, and every row
	// its route.
	rows := readMatrix(t)
	routes := map[string]*access.Routes{}
	for _, l := range matrixListeners {
		rt := app.Routes(l.listener)
		if rt == nil {
			t.Fatalf("the %s listener (%s) serves no routes", l.name, l.listener)
		}
		routes[l.name] = rt
		allowed := map[access.Rule]bool{}
		for _, r := range l.rules {
			allowed[r] = true
		}
		for _, p := range rt.Patterns() {
			rule, _ := rt.Rule(p)
			row, ok := rows[l.name+" "+p]
			switch {
			case !ok:
				t.Errorf("%s %s is registered with the rule %s but %s has no row for it: add | %s | `%s` | %s |",
					l.name, p, rule, matrixDoc, l.name, p, rule)
			case row.rule != rule:
				t.Errorf("%s %s is registered with the rule %s, but %s:%d says %s", l.name, p, rule, matrixDoc, row.line, row.rule)
			}
			if !allowed[rule] {
				t.Errorf("%s %s has the rule %s, which is not one of the %s listener's", l.name, p, rule, l.name)
			}
		}
	}
	if app.Routes(netx.ListenerHTTPS) != routes["client"] {
		t.Errorf("8080 and 8443 do not serve the same client routes")
	}
	for _, row := range sortedRows(rows) {
		if _, ok := routes[row.listener].Rule(row.route); !ok {
			t.Errorf("%s:%d: %s %s (rule %s): no such route is registered", matrixDoc, row.line, row.listener, row.route, row.rule)
		}
	}
	if t.Failed() {
		t.FailNow()
	}

	// Every route, by every kind of principal.
	t.Run("management", func(t *testing.T) { e.management(t, routes["management"]) })
	t.Run("client", func(t *testing.T) { e.client(t, routes["client"]) })
	t.Run("enrollment", func(t *testing.T) { e.enrollment(t, routes["enrollment"]) })

	// An address in AllowedCLIIPs needs no token on the allow-list routes.
	t.Run("allow-list from an allowed address", func(t *testing.T) {
		app := apptest.Start(t, nil) // AllowedCLIIPs: loopback (the default)
		rt := app.Routes(netx.ListenerREST)
		mux := newPatternMux(rt)
		n := 0
		for _, p := range rt.Patterns() {
			if rule, _ := rt.Rule(p); rule != access.AllowList {
				continue
			}
			n++
			method, path := mux.fill(t, p, "allowed")
			r := testkit.Do(t, nil, method, app.URL(t, netx.ListenerREST, path), nil)
			if !served(r) {
				t.Errorf("%s from loopback (in AllowedCLIIPs) without a token: %s; want it served", p, show(r))
			}
		}
		if n == 0 {
			t.Fatal("no allow-list route is registered")
		}
	})
}

func sortedRows(rows map[string]matrixRow) []matrixRow {
	out := make([]matrixRow, 0, len(rows))
	for _, r := range rows {
		out = append(out, r)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].line < out[j].line })
	return out
}

var wildcard = regexp.MustCompile(`\{[^}]*\}`)

// patternMux routes like the listener's mux (an http.ServeMux of the same
// patterns), to check that a filled path reaches the route it was filled
// for and no other.
// The paths under a prefix of rt.Prefixes go to a mux of their own, as the
// listener sends them.
type patternMux struct {
	*http.ServeMux
	subs map[string]*http.ServeMux
}

func newPatternMux(rt *access.Routes) patternMux {
	m := patternMux{ServeMux: http.NewServeMux(), subs: map[string]*http.ServeMux{}}
	for _, prefix := range rt.Prefixes() {
		m.subs[prefix] = http.NewServeMux()
	}
	for _, p := range rt.Patterns() {
		m.muxOf(strings.SplitN(p, " ", 2)[1]).HandleFunc(p, func(http.ResponseWriter, *http.Request) {})
	}
	return m
}

func (m patternMux) muxOf(path string) *http.ServeMux {
	for prefix, sub := range m.subs {
		if strings.HasPrefix(path, prefix) {
			return sub
		}
	}
	return m.ServeMux
}

// Handler is the pattern the listener would route r to.
func (m patternMux) Handler(r *http.Request) (http.Handler, string) {
	return m.muxOf(r.URL.Path).Handler(r)
}

// fill is the method and a path of pattern, its wildcards filled with
// placeholders tagged with who calls and the method (no two identities act
// for the same uid, and what one call makes, as a mission PUT or POST does,
// is not what another call finds and may not change), checked to reach
// pattern.
func (m patternMux) fill(t *testing.T, pattern, tag string) (method, path string) {
	t.Helper()
	method, path, _ = strings.Cut(pattern, " ")
	path = wildcard.ReplaceAllStringFunc(path, func(w string) string {
		name := strings.TrimSuffix(strings.Trim(w, "{}"), "...")
		if name == "$" {
			return ""
		}
		return matrixPrefix + tag + "-" + strings.ToLower(method) + "-" + name
	})
	req, err := http.NewRequest(method, "http://outpost.invalid"+path, nil)
	if err != nil {
		t.Fatalf("%s: %v", pattern, err)
	}
	if _, got := m.Handler(req); got != pattern {
		t.Fatalf("%s filled as %s %s reaches %q, not its route", pattern, method, path, got)
	}
	return method, path
}

// statuses counts the answers of a listener's calls, for the log.
type statuses map[int]int

func (s statuses) String() string {
	codes := make([]int, 0, len(s))
	for c := range s {
		codes = append(codes, c)
	}
	sort.Ints(codes)
	var b strings.Builder
	for _, c := range codes {
		fmt.Fprintf(&b, " %d: %d,", c, s[c])
	}
	return strings.Trim(b.String(), " ,")
}

// served reports whether a route let the caller through: neither refused
// (401, 403) nor throttled (429), nor failed (5xx).
func served(r testkit.Response) bool {
	switch r.Status {
	case http.StatusUnauthorized, http.StatusForbidden, http.StatusTooManyRequests:
		return false
	}
	return r.Status < 500
}

// show is a response for a failure message.
func show(r testkit.Response) string {
	b := string(r.Body)
	if len(b) > 200 {
		b = b[:200] + "..."
	}
	return fmt.Sprintf("%d %q", r.Status, b)
}

// mgmtCaller is a principal of the management API.
type mgmtCaller struct {
	name  string
	token string // "" sends none
	admin bool
	uid   string // a system user's uid ("" for the others)
}

// Routes whose answer to a caller the rule alone does not say.
const (
	// GET /Clients answers a user's token with the clients its groups see
	// (docs/api-management.md "Groups").
	routeClients = "GET /Clients"
	// GET /ManageSystemUser/getSystemUser leaves other users out of a
	// user's answer instead of refusing it (api-management.md).
	routeGetSystemUser = "GET /ManageSystemUser/getSystemUser"
)

// selfRequest is what a self route is asked about the system user uid:
// harmless to every caller (no change is asked for).
func selfRequest(pattern, uid string) (query string, body any) {
	switch pattern {
	case "GET /ManageSystemUser/getSystemUser", "GET /ManageSystemUser/certificatePackage":
		return "?id=" + uid, nil
	case "PUT /ManageSystemUser/putSystemUser":
		return "", map[string]string{"id": uid}
	}
	return "", nil
}

func (e *matrixEnv) management(t *testing.T, rt *access.Routes) {
	callers := []mgmtCaller{
		{name: "no token"},
		{name: "a user's token", token: e.user.Token, uid: e.user.UID},
		{name: "an admin user's token", token: e.boss.Token, admin: true, uid: e.boss.UID},
		{name: "an API user's token", token: e.api, admin: true},
	}
	seen := statuses{}
	do := func(c mgmtCaller, method, path string, body any) testkit.Response {
		var h []string
		if c.token != "" {
			h = []string{"Authorization", "Bearer " + c.token}
		}
		r := testkit.Do(t, nil, method, e.app.URL(t, netx.ListenerREST, path), body, h...)
		seen[r.Status]++
		return r
	}
	const forAdmins = "only an administrator may do this"
	const forSelf = "a user may see and change only its own record"
	mux := newPatternMux(rt)
	for _, p := range rt.Patterns() {
		rule, _ := rt.Rule(p)
		method, path := mux.fill(t, p, "x")
		for _, c := range callers {
			what := fmt.Sprintf("%s (%s) with %s", p, rule, c.name)
			if rule == access.Self {
				// About another user's record: the admin user's for the
				// user, the user's for everyone else.
				other := e.user.UID
				if c.uid == e.user.UID {
					other = e.boss.UID
				}
				q, body := selfRequest(p, other)
				r := do(c, method, path+q, body)
				switch {
				case c.token == "":
					if r.Status != http.StatusUnauthorized {
						t.Errorf("%s: %s; want 401", what, show(r))
					}
				case c.admin:
					if !served(r) {
						t.Errorf("%s about another user: %s; want it served", what, show(r))
					}
				case p == routeGetSystemUser:
					if r.Status != http.StatusOK || strings.Contains(string(r.Body), other) {
						t.Errorf("%s about another user: %s; want 200 without the other user", what, show(r))
					}
				default:
					if r.Status != http.StatusForbidden || r.Message() != forSelf {
						t.Errorf("%s about another user: %s; want 403 %q", what, show(r), forSelf)
					}
				}
				if c.uid != "" {
					// About its own record: served.
					q, body := selfRequest(p, c.uid)
					r := do(c, method, path+q, body)
					if !served(r) {
						t.Errorf("%s about itself: %s; want it served", what, show(r))
					}
					if p == routeGetSystemUser && !strings.Contains(string(r.Body), c.uid) {
						t.Errorf("%s about itself: %s; want its own record", what, show(r))
					}
				}
				continue
			}
			r := do(c, method, path, nil)
			switch {
			case rule == access.Public:
				if !served(r) {
					t.Errorf("%s: %s; want it served", what, show(r))
				}
			case c.token == "":
				// Any, admin and allow-list (no address of this test is
				// in AllowedCLIIPs).
				if r.Status != http.StatusUnauthorized {
					t.Errorf("%s: %s; want 401", what, show(r))
				}
			case c.admin || rule == access.Any || (rule == access.AllowList && p == routeClients):
				if !served(r) {
					t.Errorf("%s: %s; want it served", what, show(r))
				}
			case rule == access.Admin:
				if r.Status != http.StatusForbidden || r.Message() != forAdmins {
					t.Errorf("%s: %s; want 403 %q", what, show(r), forAdmins)
				}
			case rule == access.AllowList:
				if r.Status != http.StatusForbidden {
					t.Errorf("%s: %s; want 403", what, show(r))
				}
			default:
				t.Errorf("%s: the rule %s is not one of the management listener's", what, rule)
			}
		}
	}
	t.Logf("%d management routes; answers: %s", len(rt.Patterns()), seen)
}

func (e *matrixEnv) client(t *testing.T, rt *access.Routes) {
	type caller struct {
		name, tag, listener string
		client              *http.Client
	}
	callers := []caller{
		{"anonymous on 8080", "anon", netx.ListenerHTTP, testkit.Client},
		{"a user's certificate on 8443", "user", netx.ListenerHTTPS, e.app.HTTPSClient(e.app.Issue(t, e.user.Name))},
		{"a certificate of no user on 8443", "device", netx.ListenerHTTPS, e.app.HTTPSClient(e.app.Issue(t, "matrix-device"))},
	}
	mux, seen := newPatternMux(rt), statuses{}
	for _, p := range rt.Patterns() {
		rule, _ := rt.Rule(p)
		for _, c := range callers {
			what := fmt.Sprintf("%s (%s) by %s", p, rule, c.name)
			method, path := mux.fill(t, p, c.tag)
			r := testkit.Do(t, c.client, method, e.app.URL(t, c.listener, path), nil)
			seen[r.Status]++
			switch {
			case rule == access.CertificateOnly && c.listener == netx.ListenerHTTP:
				if r.Status != http.StatusForbidden || !strings.Contains(r.Message(), "client certificate") {
					t.Errorf("%s: %s; want 403 (a client certificate is needed)", what, show(r))
				}
			case rule == access.Client || rule == access.CertificateOnly:
				if !served(r) {
					t.Errorf("%s: %s; want it served", what, show(r))
				}
			default:
				t.Errorf("%s: the rule %s is not one of the client listener's", what, rule)
			}
		}
	}
	t.Logf("%d client routes; answers: %s", len(rt.Patterns()), seen)
}

func (e *matrixEnv) enrollment(t *testing.T, rt *access.Routes) {
	client := e.app.HTTPSClient(nil) // the enrollment listener asks for no client certificate
	basic := base64.StdEncoding.EncodeToString([]byte(e.user.Name + ":" + matrixPassword))
	mux, seen := newPatternMux(rt), statuses{}
	for _, p := range rt.Patterns() {
		rule, _ := rt.Rule(p)
		if rule != access.Password {
			t.Errorf("%s: the rule %s is not the enrollment listener's", p, rule)
			continue
		}
		method, path := mux.fill(t, p, "x")
		url := e.app.URL(t, netx.ListenerEnroll, path)
		r := testkit.Do(t, client, method, url, nil)
		seen[r.Status]++
		if r.Status != http.StatusUnauthorized || r.Header.Get("WWW-Authenticate") == "" {
			t.Errorf("%s (%s) without credentials: %s; want 401 with a challenge", p, rule, show(r))
		}
		r = testkit.Do(t, client, method, url, nil, "Authorization", "Basic "+basic)
		if !served(r) {
			t.Errorf("%s (%s) with a user's credentials: %s; want it served", p, rule, show(r))
		}
		seen[r.Status]++
	}
	t.Logf("%d enrollment routes; answers: %s", len(rt.Patterns()), seen)
}
