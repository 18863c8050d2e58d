package marti_test

import (
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"
	"time"

	"outpost/appliance/admin"
	"outpost/appliance/cot"
	"outpost/appliance/netx"
	"outpost/appliance/takclient"
	"outpost/internal/testkit"
)

// TestNodeTakGroups drives the groups of the client API with @tak-ps/node-tak
// 8.9.0's Group client over 8443 (marti-groups.mjs), with the certificate of
// gina, a system user in Red both ways and Blue OUT only: the list shows
// her groups one item per direction with their bit positions, all active;
// switching Blue off with Group.update (PUT /Marti/api/groups/active) shows
// in the next list and in what reaches her: a Blue member's position
// reports stop, a Red member's keep coming (access.md "Groups").
func TestNodeTakGroups(t *testing.T) {
	testkit.RequireInterop(t, "@tak-ps/node-tak")
	e := start(t, nil)
	tok, err := os.ReadFile(filepath.Join(e.Cfg.DataDir, admin.AdminTokenFile))
	if err != nil {
		t.Fatal(err)
	}
	admin := strings.TrimSpace(string(tok))
	api := func(method, path string, body any, status int) testkit.Response {
		t.Helper()
		r := testkit.Do(t, nil, method, e.URL(t, netx.ListenerREST, path), body, "Authorization", "Bearer "+admin)
		if r.Status != status {
			t.Fatalf("%s %s: %d %s, want %d", method, path, r.Status, r.Body, status)
		}
		return r
	}
	bits := map[string]int{}
	for _, g := range []string{"Red", "Blue"} {
		var out struct{ Bitpos int }
		api("POST", "/api/groups", map[string]string{"name": g, "description": g + " team"}, 201).JSON(t, &out)
		bits[g] = out.Bitpos
	}
	var created struct {
		SystemUsers []struct{ ID, Username string }
	}
	api("POST", "/ManageSystemUser/postSystemUser", map[string]any{"systemUsers": []map[string]string{
		{"Name": "gina", "Password": "gina-pw"},
		{"Name": "reddy", "Password": "reddy-pw", "Group": "Red"},
		{"Name": "bluey", "Password": "bluey-pw", "Group": "Blue"},
	}}, 201).JSON(t, &created)
	ids := map[string]string{}
	for _, u := range created.SystemUsers {
		ids[u.Username] = u.ID
	}
	api("PUT", "/api/users/"+ids["gina"]+"/groups", map[string]any{"groups": []map[string]string{
		{"name": "Red", "direction": "BOTH"}, {"name": "Blue", "direction": "OUT"},
	}}, 200)

	// gina's CoT TLS connection hears both teams before the switch.
	gina := e.DialTLS(t, e.Issue(t, "gina"))
	red := e.DialTLS(t, e.Issue(t, "reddy"))
	blue := e.DialTLS(t, e.Issue(t, "bluey"))
	gina.Send(takclient.SA("GINA", "GINA", 50, 10))
	red.Send(takclient.SA("RED-1", "RED", 50.1, 10.1))
	blue.Send(takclient.SA("BLUE-1", "BLUE", 50.2, 10.2))
	// Both reports, in whichever order they come (WaitFor drops what it
	// passes over).
	heard := map[string]bool{}
	if _, err := gina.WaitFor(func(ev *cot.Event) bool {
		heard[ev.UID] = true
		return heard["RED-1"] && heard["BLUE-1"]
	}, 10*time.Second); err != nil {
		t.Fatalf("gina before the switch heard %v, want RED-1 and BLUE-1: %v", heard, err)
	}

	certFile, keyFile := writePEM(t, e, "gina")
	steps := runNode(t, "marti-groups.mjs", "OUTPOST_URL="+strings.TrimSuffix(e.URL(t, netx.ListenerHTTPS, "/"), "/"),
		"CERT="+certFile, "KEY="+keyFile, "GROUP_OFF=Blue")
	for _, name := range []string{"list", "update", "relist", "done"} {
		if s, ok := steps[name]; !ok || !s.OK {
			t.Fatalf("step %s: %+v", name, s)
		}
	}
	// describe is a list as "name direction bitpos active" lines, sorted.
	describe := func(s nodeStep) string {
		var l []string
		for _, g := range s.Groups {
			l = append(l, fmt.Sprintf("%s %s %d %v", g.Name, g.Direction, g.Bitpos, g.Active))
		}
		sort.Strings(l)
		return strings.Join(l, "\n")
	}
	want := func(blueOn bool) string {
		return strings.Join([]string{
			fmt.Sprintf("Blue OUT %d %v", bits["Blue"], blueOn),
			fmt.Sprintf("Red IN %d true", bits["Red"]),
			fmt.Sprintf("Red OUT %d true", bits["Red"]),
		}, "\n")
	}
	if got := describe(steps["list"]); got != want(true) {
		t.Fatalf("node-tak's list:\n%s\nwant:\n%s", got, want(true))
	}
	if got := describe(steps["relist"]); got != want(false) {
		t.Fatalf("node-tak's list after the update:\n%s\nwant:\n%s", got, want(false))
	}

	// The switch applies to gina's open connection: Blue's next report
	// does not reach her, Red's does. Blue's is stored (so published and
	// routed) before Red's is sent, and a connection receives in order.
	blue.Send(takclient.SA("BLUE-1", "BLUE-2", 50.3, 10.3))
	bluey := e.HTTPSClient(e.Issue(t, "bluey"))
	testkit.WaitFor(t, "Blue's second report stored", func() bool {
		r := testkit.Do(t, bluey, "GET", e.URL(t, netx.ListenerHTTPS, "/Marti/api/cot/xml/BLUE-1"), nil)
		return r.Status == 200 && strings.Contains(string(r.Body), "BLUE-2")
	})
	red.Send(takclient.SA("RED-1", "RED-2", 50.4, 10.4))
	_, err = gina.WaitFor(func(ev *cot.Event) bool {
		if ev.UID == "BLUE-1" {
			t.Errorf("gina received Blue's report after switching Blue off: %s", ev.Detail.XML)
		}
		return ev.UID == "RED-1" && ev.Detail.Contact != nil && ev.Detail.Contact.Callsign == "RED-2"
	}, 10*time.Second)
	if err != nil {
		t.Fatalf("Red's report after the switch: %v", err)
	}
}
