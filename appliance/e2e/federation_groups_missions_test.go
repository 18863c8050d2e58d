package e2e

import (
	"context"
	"net/http"
	"slices"
	"strings"
	"testing"

	"outpost/appliance/apptest"
	"outpost/appliance/netx"
	"outpost/internal/testkit"
)

// groupHTTPS makes a system user of groups on a and returns an HTTPS
// client (8443) with a certificate in the user's name.
func groupHTTPS(t *testing.T, a *apptest.App, name, groups string) *http.Client {
	t.Helper()
	return a.HTTPSClient(groupCert(t, a, name, groups))
}

// createMission makes the mission name on a as the user of c (its groups
// are the user's) and wants 201.
func createMission(t *testing.T, a *apptest.App, c *http.Client, name string) {
	t.Helper()
	if r := testkit.Do(t, c, "PUT", a.URL(t, netx.ListenerHTTPS, "/Marti/api/missions/"+name+"?creatorUid=ANDROID-"+name), nil); r.Status != 201 {
		t.Fatalf("mission %s: %d %s", name, r.Status, r.Body)
	}
}

// missionGroups returns the groups of the mission name on a (nil: a has
// no such mission).
func missionGroups(t *testing.T, a *apptest.App, name string) []string {
	t.Helper()
	m, err := a.Store().Missions().MissionByName(context.Background(), name)
	if err != nil {
		return nil
	}
	return append([]string{}, m.Groups...)
}

// TestFederationGroupsMissions: missions over ROL follow the group
// mapping as events do. A maps Blue out as Fed-Blue and takes Fed-Cyan in
// as Blue; B maps Cyan and Teal out and takes Fed-Blue in as Cyan. A's
// Blue mission reaches B in Cyan; A's Red mission and A's mission of no
// group (__ANON__, not mapped out) do not cross; B's Teal mission reaches
// A tagged Fed-Teal, which A maps to no group: dropped and counted; B's
// Cyan mission reaches A in Blue.
func TestFederationGroupsMissions(t *testing.T) {
	ca := newFedCA(t, "Federation CA")
	b := startFederated(t, ca, "bravo-server", "")
	a := startFederated(t, ca, "alpha-server", "", "B="+fedListener(t, b))
	tokA, tokB := adminToken(t, a), adminToken(t, b)
	aBlue, aRed := groupHTTPS(t, a, "a-blue", "Blue"), groupHTTPS(t, a, "a-red", "Red")
	bCyan, bTeal := groupHTTPS(t, b, "b-cyan", "Cyan"), groupHTTPS(t, b, "b-teal", "Teal")

	if r := fedAPI(t, a, tokA, "PUT", "/api/federation/federates/B/groups", map[string]any{
		"outbound": []map[string]string{{"local": "Blue", "federate": "Fed-Blue"}},
		"inbound":  []map[string]string{{"federate": "Fed-Cyan", "local": "Blue"}}}); r.Status != 200 {
		t.Fatalf("A's mapping: %d %s", r.Status, r.Body)
	}
	if r := fedAPI(t, b, tokB, "PUT", "/api/federation/federates/alpha-server/groups", map[string]any{
		"outbound": []map[string]string{{"local": "Cyan", "federate": "Fed-Cyan"}, {"local": "Teal", "federate": "Fed-Teal"}},
		"inbound":  []map[string]string{{"federate": "Fed-Blue", "local": "Cyan"}}}); r.Status != 200 {
		t.Fatalf("B's mapping: %d %s", r.Status, r.Body)
	}
	testkit.WaitForWithin(t, fedWait, "A's link to B", func() bool { return fedStats(a, "B").Connected })
	waitAnnounced(t, a, tokA, "B", "Fed-Cyan", "Fed-Teal")
	waitAnnounced(t, b, tokB, "alpha-server", "Fed-Blue")

	// A: Red and no group first, then Blue, on one ordered stream: when
	// Blue's is on B, the others would be too.
	createMission(t, a, aRed, "red-ops")
	if r := marti(t, a, "PUT", "/Marti/api/missions/anon-ops?creatorUid=ANDROID-ANON", nil); r.Status != 201 {
		t.Fatalf("anonymous mission: %d %s", r.Status, r.Body)
	}
	createMission(t, a, aBlue, "blue-ops")
	testkit.WaitForWithin(t, fedWait, "A's Blue mission on B", func() bool { return missionGroups(t, b, "blue-ops") != nil })
	if g := missionGroups(t, b, "blue-ops"); !slices.Equal(g, []string{"Cyan"}) {
		t.Fatalf("A's Blue mission on B in groups %v, want [Cyan]", g)
	}
	for _, name := range []string{"red-ops", "anon-ops"} {
		if g := missionGroups(t, b, name); g != nil {
			t.Fatalf("A's %s crossed (groups %v): its groups are not mapped out", name, g)
		}
	}

	// B: Teal (A maps Fed-Teal to nothing) first, then Cyan.
	createMission(t, b, bTeal, "teal-ops")
	createMission(t, b, bCyan, "cyan-ops")
	testkit.WaitForWithin(t, fedWait, "B's Cyan mission on A", func() bool { return missionGroups(t, a, "cyan-ops") != nil })
	if g := missionGroups(t, a, "cyan-ops"); !slices.Equal(g, []string{"Blue"}) {
		t.Fatalf("B's Cyan mission on A in groups %v, want [Blue]", g)
	}
	if g := missionGroups(t, a, "teal-ops"); g != nil {
		t.Fatalf("B's Teal mission is on A in groups %v: Fed-Teal maps to no group of A", g)
	}
	if st := fedStats(a, "B"); st.ROLDroppedGroup != 1 || st.ROLFailed != 0 {
		t.Fatalf("A's ROL counters of B: dropped by group %d (want 1), failed %d", st.ROLDroppedGroup, st.ROLFailed)
	}

	// A federate changes only the missions its groups reach: B has a Teal
	// mission "shared" (its ROL to A is dropped there: Fed-Teal maps to
	// nothing); A's Blue user makes a mission of the same name, adds to it
	// and deletes it: on B, where A's ROL maps to Cyan, the Teal mission
	// keeps its contents and is not deleted.
	createMission(t, b, bTeal, "shared")
	createMission(t, a, aBlue, "shared")
	before := fedStats(b, "alpha-server").ROLDroppedGroup
	if r := testkit.Do(t, aBlue, "PUT", a.URL(t, netx.ListenerHTTPS, "/Marti/api/missions/shared/contents?creatorUid=ANDROID-shared"),
		map[string]any{"uids": []string{"A-UID-IN-SHARED"}}); r.Status != 200 {
		t.Fatalf("contents of A's shared: %d %s", r.Status, r.Body)
	}
	if r := testkit.Do(t, aBlue, "DELETE", a.URL(t, netx.ListenerHTTPS, "/Marti/api/missions/shared?creatorUid=ANDROID-shared"), nil); r.Status != 200 {
		t.Fatalf("delete A's shared: %d %s", r.Status, r.Body)
	}
	createMission(t, a, aBlue, "fence-ops")
	testkit.WaitForWithin(t, fedWait, "A's fence mission on B", func() bool { return missionGroups(t, b, "fence-ops") != nil })
	m, err := b.Store().Missions().MissionByName(context.Background(), "shared")
	if err != nil || !slices.Equal(m.Groups, []string{"Teal"}) {
		t.Fatalf("B's Teal mission after A's changes: %+v %v", m, err)
	}
	if r := testkit.Do(t, bTeal, "GET", b.URL(t, netx.ListenerHTTPS, "/Marti/api/missions/shared"), nil); r.Status != 200 || strings.Contains(string(r.Body), "A-UID-IN-SHARED") {
		t.Fatalf("B's Teal mission as its Teal user reads it: %d %s", r.Status, r.Body)
	}
	if got := fedStats(b, "alpha-server").ROLDroppedGroup - before; got != 2 {
		t.Fatalf("B dropped %d of A's changes of its Teal mission by group, want 2 (the content, the deletion)", got)
	}
}
