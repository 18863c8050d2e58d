package marti_test

import (
	"context"
	"encoding/json"
	"net/http"
	"strings"
	"testing"

	"outpost/appliance/netx"
	"outpost/appliance/store"
	"outpost/appliance/takclient"
	"outpost/internal/testkit"
)

// copNode is a node of /Marti/api/cops/hierarchy.
type copNode struct {
	Name     string    `json:"name"`
	Children []copNode `json:"children"`
}

// tree writes nodes as "a(b,c(d))", children in their order.
func tree(nodes []copNode) string {
	var parts []string
	for _, n := range nodes {
		s := n.Name
		if n.Children == nil {
			s += "<nil>"
		} else if len(n.Children) > 0 {
			s += "(" + tree(n.Children) + ")"
		}
		parts = append(parts, s)
	}
	return strings.Join(parts, ",")
}

// subscriptionOut is an item of /Marti/api/subscriptions/all.
type subscriptionOut struct {
	Callsign, ClientUID, Protocol, IPAddress, Username, HandlerType string
	LastReportMilliseconds                                          int64
	Groups                                                          []struct{ Name, Direction string }
}

func uidsOf(list []subscriptionOut) string {
	var out []string
	for _, s := range list {
		out = append(out, s.ClientUID)
	}
	return strings.Join(out, ",")
}

// getJSONAs answers GET path with hc on a listener, decoded into v.
func (e *env) getJSONAs(t *testing.T, hc *http.Client, listener, path string, v any) {
	t.Helper()
	resp := e.doAs(t, hc, listener, "GET", path, nil)
	if resp.Status != 200 {
		t.Fatalf("GET %s: %d %s", path, resp.Status, resp.Body)
	}
	resp.JSON(t, v)
}

// TestSettingsRoutes runs the routes clients ask about their settings and
// the server's layout on both listeners: a tool's device profile, the
// caller's roles, the COP hierarchy and the subscriptions, with their bad
// parameters.
func TestSettingsRoutes(t *testing.T) {
	e := start(t, nil)
	// Missions of the COP tool with paths, one of another tool, one
	// protected by a password (its path stays hidden).
	for _, m := range []struct{ name, query string }{
		{"cop-north", "tool=vbm&path=/ops/north"},
		{"cop-east", "tool=vbm&path=ops/south/east"},
		{"cop-south", "tool=vbm&path=/ops/south"},
		{"plain", "tool=public&path=/other"},
		{"cop-secret", "tool=vbm&path=/secret&password=hush"},
	} {
		e.call(t, netx.ListenerHTTP, "PUT", "/Marti/api/missions/"+m.name+"?creatorUid=COP-1&"+m.query, nil, 201, nil)
	}
	// Two clients on the CoT stream.
	zulu, alpha := e.DialTCP(t), e.DialTCP(t)
	zulu.Send(takclient.SA("SUB-Z", "Zulu", 50, 10))
	alpha.Send(takclient.SA("SUB-A", "Alpha", 50.1, 10.1))
	testkit.WaitFor(t, "both clients listed", func() bool {
		var list []subscriptionOut
		e.call(t, netx.ListenerHTTP, "GET", "/Marti/api/subscriptions/all", nil, 200, &list)
		return len(list) == 2
	})

	for _, l := range both {
		t.Run(l, func(t *testing.T) {
			for _, path := range []string{
				"/Marti/api/device/profile/tool/ATAK",
				"/Marti/api/device/profile/tool/video%20tool?clientUid=ANDROID-1&syncSecago=-1",
				"/Marti/api/device/profile/connection?syncSecago=30&clientUid=ANDROID-1",
			} {
				if resp := e.do(t, l, "GET", path, nil); resp.Status != 204 || len(resp.Body) != 0 {
					t.Errorf("GET %s: %d %s, want 204", path, resp.Status, resp.Body)
				}
			}
			for _, c := range []struct{ path, msg string }{
				{"/Marti/api/device/profile/tool/ATAK?syncSecago=soon", "syncSecago: must be -1 or a whole number"},
				{"/Marti/api/device/profile/tool/ATAK?syncSecago=-2", "syncSecago:"},
				{"/Marti/api/device/profile/tool/AT%07AK", "name: contains a control character"},
				{"/Marti/api/device/profile/tool/ATAK?clientUid=a%0Ab", "clientUid: contains a control character"},
				{"/Marti/api/device/profile/connection?syncSecago=x", "syncSecago:"},
			} {
				wantRefusal(t, c.path, e.do(t, l, "GET", c.path, nil), 400, c.msg)
			}

			var roles []string
			e.do(t, l, "GET", "/Marti/api/util/user/roles", nil).JSON(t, &roles)
			if strings.Join(roles, ",") != "ROLE_ANONYMOUS" {
				t.Errorf("roles %v", roles)
			}

			var nodes []copNode
			if env := e.call(t, l, "GET", "/Marti/api/cops/hierarchy", nil, 200, &nodes); env.Type != "CopHierarchyNode" {
				t.Errorf("hierarchy type %q", env.Type)
			}
			if got := tree(nodes); got != "ops(north,south(east))" {
				t.Errorf("hierarchy %s", got)
			}

			var list []subscriptionOut
			if env := e.call(t, l, "GET", "/Marti/api/subscriptions/all", nil, 200, &list); env.Type != "SubscriptionInfo" {
				t.Errorf("subscriptions type %q", env.Type)
			}
			if uidsOf(list) != "SUB-A,SUB-Z" {
				t.Fatalf("subscriptions %+v", list)
			}
			a := list[0]
			if a.Callsign != "Alpha" || a.Protocol != "tcp" || a.HandlerType != netx.ListenerCoTTCP || a.IPAddress != "127.0.0.1" ||
				a.LastReportMilliseconds == 0 || len(a.Groups) != 1 || a.Groups[0].Name != store.AnonGroupName || a.Groups[0].Direction != "IN" {
				t.Errorf("Alpha's subscription %+v", a)
			}
			for q, want := range map[string]string{
				"?sortBy=UID&direction=DESCENDING":      "SUB-Z,SUB-A",
				"?sortBy=callsign&direction=descending": "SUB-Z,SUB-A",
				"?page=1&limit=1":                       "SUB-A",
				"?page=2&limit=1":                       "SUB-Z",
				"?page=3&limit=1":                       "",
				"?limit=1":                              "SUB-A",
				"?page=-1&limit=-1":                     "SUB-A,SUB-Z",
			} {
				e.call(t, l, "GET", "/Marti/api/subscriptions/all"+q, nil, 200, &list)
				if got := uidsOf(list); got != want {
					t.Errorf("subscriptions%s: %s, want %s", q, got, want)
				}
			}
			for _, c := range []struct{ q, msg string }{
				{"?sortBy=TEAM", "sortBy: must be CALLSIGN or UID"},
				{"?direction=UP", "direction: must be ASCENDING or DESCENDING"},
				{"?page=0&limit=1", "page: must be -1 or a whole number from 1"},
				{"?limit=0", "limit: must be -1 or a whole number from 1"},
				{"?limit=ten", "limit:"},
			} {
				wantRefusal(t, "subscriptions"+c.q, e.do(t, l, "GET", "/Marti/api/subscriptions/all"+c.q, nil), 400, c.msg)
			}
		})
	}
}

// TestSettingsGroups holds the settings routes to access.md "Groups" and
// "Roles": an administrator's roles, a user whose IN groups are all
// switched off is read-only, and Red's COP paths and Red's clients are
// neither in Blue's hierarchy and subscriptions nor in an anonymous
// client's.
func TestSettingsGroups(t *testing.T) {
	e := start(t, nil)
	red, rosa, blue := e.member(t, "reddy", "Red"), e.member(t, "rosa", "Red"), e.member(t, "bluey", "Blue")
	if _, err := e.Store().Accounts().CreateUser(context.Background(), store.UserInput{Name: "boss", Password: "boss-pw", Role: store.UserRoleAdmin}); err != nil {
		t.Fatal(err)
	}
	boss := e.certHolder(t, "boss")

	roles := func(c certHolder) string {
		t.Helper()
		var out []string
		e.getJSONAs(t, c.hc, netx.ListenerHTTPS, "/Marti/api/util/user/roles", &out)
		return strings.Join(out, ",")
	}
	if got := roles(boss); got != "ROLE_ADMIN" {
		t.Errorf("boss's roles %s", got)
	}
	if got := roles(rosa); got != "ROLE_ANONYMOUS" {
		t.Errorf("rosa's roles %s", got)
	}
	off := e.doAs(t, rosa.hc, netx.ListenerHTTPS, "PUT", "/Marti/api/groups/active", []map[string]any{{"name": "Red", "direction": "IN", "active": false}})
	wantStatus(t, "rosa switching Red IN off", off, 200)
	if got := roles(rosa); got != "ROLE_ANONYMOUS,ROLE_READONLY" {
		t.Errorf("rosa's roles with no IN group %s", got)
	}

	// COP paths: a Red mission and an anonymous one.
	wantStatus(t, "a Red COP", e.doAs(t, red.hc, netx.ListenerHTTPS, "PUT", "/Marti/api/missions/red-cop?creatorUid=RED-1&tool=vbm&path=/red/base", nil), 201)
	e.call(t, netx.ListenerHTTP, "PUT", "/Marti/api/missions/anon-cop?creatorUid=ANON-1&tool=vbm&path=/open", nil, 201, nil)
	hierarchy := func(hc *http.Client, listener string) string {
		t.Helper()
		var nodes []copNode
		e.envelopeAs(t, hc, listener, "/Marti/api/cops/hierarchy", &nodes)
		return tree(nodes)
	}
	for _, c := range []struct {
		who  string
		hc   *http.Client
		l    string
		want string
	}{
		{"reddy", red.hc, netx.ListenerHTTPS, "red(base)"},
		{"bluey", blue.hc, netx.ListenerHTTPS, ""},
		{"anonymous", nil, netx.ListenerHTTP, "open"},
	} {
		if got := hierarchy(c.hc, c.l); got != c.want {
			t.Errorf("%s's hierarchy %q, want %q", c.who, got, c.want)
		}
	}

	// Subscriptions: reddy's CoT connection is Red's to see.
	e.DialTLS(t, red.cert).Send(takclient.SA("RED-1", "Red One", 50, 10))
	e.DialTCP(t).Send(takclient.SA("ANON-1", "Anon One", 50, 10))
	subs := func(hc *http.Client, listener string) []subscriptionOut {
		t.Helper()
		var list []subscriptionOut
		e.envelopeAs(t, hc, listener, "/Marti/api/subscriptions/all", &list)
		return list
	}
	testkit.WaitFor(t, "reddy's connection listed for Red", func() bool { return uidsOf(subs(red.hc, netx.ListenerHTTPS)) == "RED-1" })
	testkit.WaitFor(t, "the anonymous connection listed", func() bool { return uidsOf(subs(nil, netx.ListenerHTTP)) == "ANON-1" })
	list := subs(red.hc, netx.ListenerHTTPS)
	if s := list[0]; s.Username != "reddy" || s.Protocol != "tls" || len(s.Groups) != 1 || s.Groups[0].Name != "Red" {
		t.Errorf("reddy's subscription %+v", s)
	}
	if got := uidsOf(subs(blue.hc, netx.ListenerHTTPS)); got != "" {
		t.Errorf("bluey sees the subscriptions %s", got)
	}
	b, _ := json.Marshal(subs(nil, netx.ListenerHTTP))
	if strings.Contains(string(b), "RED-1") {
		t.Errorf("an anonymous client sees reddy's subscription: %s", b)
	}
}
