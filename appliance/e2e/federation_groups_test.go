package e2e

import (
	"context"
	"crypto/tls"
	"slices"
	"strings"
	"testing"
	"time"

	"outpost/appliance/apptest"
	"outpost/appliance/cot"
	"outpost/appliance/federation"
	"outpost/appliance/netx"
	"outpost/appliance/store"
	"outpost/appliance/takclient"
	"outpost/internal/testkit"
)

// groupClient connects a system user of groups (comma-separated) to a's
// CoT TLS port with a certificate in the user's name.
func groupClient(t *testing.T, a *apptest.App, name, groups string) *takclient.Client {
	t.Helper()
	return a.DialTLS(t, groupCert(t, a, name, groups))
}

// groupCert makes a system user of groups (comma-separated) on a and
// returns a certificate in the user's name.
func groupCert(t *testing.T, a *apptest.App, name, groups string) *tls.Certificate {
	t.Helper()
	if _, err := a.Store().Accounts().CreateUser(context.Background(), store.UserInput{Name: name, Group: groups, Password: "a long enough password 1"}); err != nil {
		t.Fatal(err)
	}
	return a.Issue(t, name)
}

// fedGroupsView is GET/PUT /api/federation/federates/{name}/groups's answer.
type fedGroupsView struct {
	Federate  string              `json:"federate"`
	Outbound  []map[string]string `json:"outbound"`
	Inbound   []map[string]string `json:"inbound"`
	Announced []string            `json:"announced"`
}

// waitAnnounced waits until a's federate name announced want.
func waitAnnounced(t *testing.T, a *apptest.App, token, name string, want ...string) {
	t.Helper()
	deadline := time.Now().Add(fedWait)
	for {
		var v fedGroupsView
		res := fedAPI(t, a, token, "GET", "/api/federation/federates/"+name+"/groups", nil)
		res.JSON(t, &v)
		if res.Status == 200 && slices.Equal(v.Announced, want) {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s's announced groups: %d %s, want %v", name, res.Status, res.Body, want)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// TestFederationGroups: two Outposts whose groups differ, mapped through
// the management API. A sends Blue to B as "Fed-Blue", and takes B's
// "Fed-Cyan" into Blue; B sends Cyan as "Fed-Cyan" and Teal as "Fed-Teal",
// and takes "Fed-Blue" into Cyan. A Blue client's position reaches B's Cyan
// client only; a Red client's (Red is not mapped out) does not cross; B's
// Cyan position reaches A's Blue client only; B's Teal position crosses
// but maps to no group on A: dropped and counted. Each side sees the
// groups the other announced; bad requests are refused and change nothing.
func TestFederationGroups(t *testing.T) {
	ca := newFedCA(t, "Federation CA")
	b := startFederated(t, ca, "bravo-server", "")
	a := startFederated(t, ca, "alpha-server", "", "B="+fedListener(t, b))
	tokA, tokB := adminToken(t, a), adminToken(t, b)

	// The users (and so their groups) first: a mapping names existing groups.
	aBlue, aRed := groupClient(t, a, "a-blue", "Blue"), groupClient(t, a, "a-red", "Red")
	bCyan, bTeal := groupClient(t, b, "b-cyan", "Cyan"), groupClient(t, b, "b-teal", "Teal")
	bAnon := b.DialTCP(t)

	// Bad requests change nothing.
	user, err := a.Store().Accounts().CreateUser(context.Background(), store.UserInput{Name: "plain-user", Password: "a long enough password 1"})
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		what, method, path, token string
		body                      any
		status                    int
		msg                       string
	}{
		{"no such local group", "PUT", "/api/federation/federates/B/groups", tokA, map[string]any{"outbound": []map[string]string{{"local": "Green", "federate": "G"}}}, 400, `no local group "Green"`},
		{"no such local group in", "PUT", "/api/federation/federates/B/groups", tokA, map[string]any{"inbound": []map[string]string{{"federate": "G", "local": "Green"}}}, 400, "no local group"},
		{"empty federate group", "PUT", "/api/federation/federates/B/groups", tokA, map[string]any{"outbound": []map[string]string{{"local": "Blue"}}}, 400, "federate is required"},
		{"not a list", "PUT", "/api/federation/federates/B/groups", tokA, map[string]any{"outbound": "Blue=Fed-Blue"}, 400, "outbound"},
		{"not JSON", "PUT", "/api/federation/federates/B/groups", tokA, "{", 400, ""},
		{"too large", "PUT", "/api/federation/federates/B/groups", tokA, map[string]any{"outbound": []map[string]string{{"local": "Blue", "federate": strings.Repeat("x", 70<<10)}}}, 413, ""},
		{"long name", "GET", "/api/federation/federates/" + strings.Repeat("n", 200) + "/groups", tokA, nil, 400, "federate must be"},
		{"not an admin", "PUT", "/api/federation/federates/B/groups", user.Token, map[string]any{}, 403, "administrator"},
		{"not an admin reads", "GET", "/api/federation/federates/B/groups", user.Token, nil, 403, "administrator"},
		{"no token", "GET", "/api/federation/federates/B/groups", "", nil, 401, ""},
	} {
		res := fedAPI(t, a, tc.token, tc.method, tc.path, tc.body)
		if res.Status != tc.status || !strings.Contains(res.Message(), tc.msg) {
			t.Errorf("%s: %d %s; want %d %q", tc.what, res.Status, res.Body, tc.status, tc.msg)
		}
	}
	if m, err := a.Store().Federates().GroupMappings(context.Background()); err != nil || len(m) != 0 {
		t.Fatalf("refused requests stored %+v %v", m, err)
	}
	var v fedGroupsView
	res := fedAPI(t, a, tokA, "GET", "/api/federation/federates/B/groups", nil)
	res.JSON(t, &v)
	if res.Status != 200 || v.Federate != "B" || len(v.Outbound) != 0 || len(v.Inbound) != 0 || v.Announced == nil {
		t.Fatalf("no mapping yet: %d %s", res.Status, res.Body)
	}

	// The mappings: A knows B as "B" (its configuration), B knows A by its
	// certificate's name.
	res = fedAPI(t, a, tokA, "PUT", "/api/federation/federates/B/groups", map[string]any{
		"outbound": []map[string]string{{"local": "Blue", "federate": "Fed-Blue"}},
		"inbound":  []map[string]string{{"federate": "Fed-Cyan", "local": "Blue"}}})
	res.JSON(t, &v)
	if res.Status != 200 || len(v.Outbound) != 1 || v.Outbound[0]["local"] != "Blue" || v.Outbound[0]["federate"] != "Fed-Blue" ||
		len(v.Inbound) != 1 || v.Inbound[0]["federate"] != "Fed-Cyan" {
		t.Fatalf("A maps B: %d %s", res.Status, res.Body)
	}
	res = fedAPI(t, b, tokB, "PUT", "/api/federation/federates/alpha-server/groups", map[string]any{
		"outbound": []map[string]string{{"local": "Cyan", "federate": "Fed-Cyan"}, {"local": "Teal", "federate": "Fed-Teal"}},
		"inbound":  []map[string]string{{"federate": "Fed-Blue", "local": "Cyan"}}})
	if res.Status != 200 {
		t.Fatalf("B maps alpha-server: %d %s", res.Status, res.Body)
	}
	waitFed(t, a, "B", func(s federation.FederateStats) bool { return s.Connected })
	waitFed(t, b, "alpha-server", func(s federation.FederateStats) bool { return s.Connected })
	// Each announces its outbound federate groups (again, once mapped).
	waitAnnounced(t, a, tokA, "B", "Fed-Cyan", "Fed-Teal")
	waitAnnounced(t, b, tokB, "alpha-server", "Fed-Blue")

	// A → B: Red first, then Blue; once Blue arrived, Red would have too.
	send := func(c *takclient.Client, uid string, lat float64) {
		t.Helper()
		if err := c.Send(takclient.SA(uid, uid, lat, 1)); err != nil {
			t.Fatal(err)
		}
	}
	send(aRed, "A-RED", 1)
	send(aBlue, "A-BLUE", 2)
	if _, err := bCyan.WaitFor(func(e *cot.Event) bool { return e.UID == "A-BLUE" }, fedWait); err != nil {
		t.Fatalf("B's Cyan client did not get A's Blue position: %v", err)
	}
	send(aBlue, "A-BLUE", 3) // a fence for the others
	if _, err := bCyan.WaitFor(func(e *cot.Event) bool { return e.UID == "A-BLUE" && e.Point.Lat == 3 }, fedWait); err != nil {
		t.Fatalf("B's Cyan client did not get A's second Blue position: %v", err)
	}
	if s := fedStats(a, "B"); s.EventsOut == 0 {
		t.Fatalf("A sent nothing to B: %+v", s)
	}

	// B → A: Teal first (crosses, mapped to nothing on A), then Cyan.
	send(bTeal, "B-TEAL", 4)
	send(bCyan, "B-CYAN", 5)
	if _, err := aBlue.WaitFor(func(e *cot.Event) bool { return e.UID == "B-CYAN" }, fedWait); err != nil {
		t.Fatalf("A's Blue client did not get B's Cyan position: %v", err)
	}
	s := waitFed(t, a, "B", func(s federation.FederateStats) bool { return s.DroppedGroup >= 1 })
	if s.Published == 0 {
		t.Fatalf("A's counters of B: %+v", s)
	}
	res = fedAPI(t, a, tokA, "GET", "/api/federation", nil)
	if res.Status != 200 || !strings.Contains(string(res.Body), `"droppedGroup":`) || strings.Contains(string(res.Body), `"droppedGroup":0`) {
		t.Fatalf("GET /api/federation lacks the group drops: %d %s", res.Status, res.Body)
	}
	res = testkit.Do(t, nil, "GET", a.URL(t, netx.ListenerREST, "/metrics"), nil)
	if !strings.Contains(string(res.Body), `outpost_federate_dropped_total{federate="B",reason="group"} `) ||
		strings.Contains(string(res.Body), `outpost_federate_dropped_total{federate="B",reason="group"} 0`) {
		t.Fatalf("/metrics lacks the group drops (status %d)", res.Status)
	}

	// What each client saw, up to a quiet window: only its mapped groups.
	for _, c := range []struct {
		name   string
		c      *takclient.Client
		refuse []string
	}{
		{"B's Cyan client", bCyan, []string{"A-RED"}},
		{"B's Teal client", bTeal, []string{"A-RED", "A-BLUE"}},
		{"B's anonymous client", bAnon, []string{"A-RED", "A-BLUE"}},
		{"A's Blue client", aBlue, []string{"B-TEAL"}},
		{"A's Red client", aRed, []string{"B-TEAL", "B-CYAN"}},
	} {
		if n := quietCount(c.c, func(e *cot.Event) bool { return slices.Contains(c.refuse, e.UID) }); n != 0 {
			t.Errorf("%s received %d events of groups not mapped to it (%v)", c.name, n, c.refuse)
		}
	}

	// A mapping removed: A is __ANON__ both ways with B again; Blue no
	// longer goes out.
	res = fedAPI(t, a, tokA, "PUT", "/api/federation/federates/B/groups", map[string]any{})
	res.JSON(t, &v)
	if res.Status != 200 || len(v.Outbound) != 0 || len(v.Inbound) != 0 {
		t.Fatalf("A clears its mapping: %d %s", res.Status, res.Body)
	}
	waitAnnounced(t, b, tokB, "alpha-server", "__ANON__")
	send(aBlue, "A-BLUE", 6)
	send(aRed, "A-RED", 7)
	if n := quietCount(bCyan, func(e *cot.Event) bool { return e.UID == "A-BLUE" && e.Point.Lat == 6 }); n != 0 {
		t.Fatalf("a Blue position crossed after the mapping was removed")
	}
}
