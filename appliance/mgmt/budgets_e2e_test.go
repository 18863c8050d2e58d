package mgmt_test

// The budgets of the tables the management API lets users grow
// (RELIABILITY.md "Budgets"), set small: the audit log keeps its newest
// records and counts what it prunes; geo objects, emergencies and data
// packages past their budget are refused with 409 and nothing is stored.

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"outpost/appliance/config"
	"outpost/appliance/store"
)

// TestAuditBudget: past maxAuditRecords the oldest records are pruned as
// new ones are added (a user's calls are never refused for it), and the
// pruning shows in the metrics and the log.
func TestAuditBudget(t *testing.T) {
	const budget, calls = 100, 105
	e := newEnv(t, func(c *config.Config) { c.MaxAuditRecords = budget })
	_, kim := e.createUser("kim", "kim-pw")
	for i := range calls {
		want(t, "an audited call", e.do("GET", fmt.Sprintf("/api/groups?n=%d", i), kim, nil), 200)
	}
	entries, err := e.app.Store().Accounts().AuditEntries(t.Context(), store.AuditFilter{})
	if err != nil {
		t.Fatal(err)
	}
	if len(entries) != budget || entries[0].Endpoint != "/api/groups?n=5" || entries[budget-1].Endpoint != fmt.Sprintf("/api/groups?n=%d", calls-1) {
		t.Fatalf("%d records from %q to %q; want the newest %d", len(entries), entries[0].Endpoint, entries[len(entries)-1].Endpoint, budget)
	}
	r := e.do("GET", "/metrics", "", nil)
	want(t, "metrics", r, 200)
	if !strings.Contains(string(r.Body), `outpost_audit_pruned_total{rule="budget"} 5`) {
		t.Fatalf("the pruning is not in the metrics:\n%s", grepLines(string(r.Body), "audit"))
	}
	if !strings.Contains(e.logs.String(), "the audit log is at its budget") {
		t.Fatal("the pruning was not logged")
	}
}

// grepLines are the lines of s holding sub.
func grepLines(s, sub string) string {
	var out []string
	for _, l := range strings.Split(s, "\n") {
		if strings.Contains(l, sub) {
			out = append(out, l)
		}
	}
	return strings.Join(out, "\n")
}

// TestServerObjectsBudget: at maxServerObjects a new geo object or
// emergency is refused and nothing is kept or sent; an object already kept
// may still change; one past its stale time is pruned to make room, and
// deleting one makes room too.
func TestServerObjectsBudget(t *testing.T) {
	e := newEnv(t, func(c *config.Config) { c.MaxServerObjects = 3 })
	geo := func(name string, timeout int, repeat bool) map[string]any {
		return map[string]any{"geoObject": "Sniper", "attitude": "hostile", "how": "gps", "latitude": 59.3, "longitude": 18.06,
			"timeout": timeout, "repeat": repeat, "name": name}
	}
	kept := e.post("POST", "/ManageGeoObject/postGeoObject", geo("kept", 0, true))
	e.post("POST", "/ManageGeoObject/postGeoObject", geo("soon-stale", 2, false))
	e.post("POST", "/ManageEmergency/postEmergency", map[string]any{"emergencyType": "911 Alert", "latitude": 59.3, "longitude": 18.06})
	const msg = "at most 3 geo objects and emergencies made through the management API are kept (maxServerObjects)"
	for _, c := range []struct {
		path string
		body any
	}{
		{"/ManageGeoObject/postGeoObject", geo("one-more", 0, true)},
		{"/ManageEmergency/postEmergency", map[string]any{"emergencyType": "911 Alert", "latitude": 1, "longitude": 1}},
	} {
		r := e.do("POST", c.path, e.admin, c.body)
		want(t, c.path+" over the budget", r, 409)
		if !strings.Contains(r.Message(), msg) {
			t.Fatalf("%s: %q, want %q", c.path, r.Message(), msg)
		}
	}
	if n := e.count("server_objects", ""); n != 3 {
		t.Fatalf("%d objects kept after the refusals", n)
	}
	var rep struct{ Messages map[string]string }
	r := e.do("GET", "/ManageGeoObject/GetRepeatedMessages", e.admin, nil)
	want(t, "repeated", r, 200)
	r.JSON(t, &rep)
	if len(rep.Messages) != 1 || !strings.Contains(rep.Messages[kept], `callsign="kept"`) {
		t.Fatalf("repeated messages: %s", r.Body)
	}
	// A kept object still moves at the budget.
	move := geo("kept", 0, true)
	move["uid"] = kept
	want(t, "moving a kept object", e.do("PUT", "/ManageGeoObject/putGeoObject", e.admin, move), 200)

	time.Sleep(2100 * time.Millisecond) // "soon-stale" goes stale
	e.post("POST", "/ManageGeoObject/postGeoObject", geo("after-stale", 0, true))
	if n := e.count("server_objects", "name = 'soon-stale'"); n != 0 {
		t.Fatal("the stale object was not pruned to make room")
	}
	want(t, "one more after the stale one", e.do("POST", "/ManageGeoObject/postGeoObject", e.admin, geo("one-more", 0, true)), 409)
	want(t, "delete", e.do("DELETE", "/ManageGeoObject/DeleteRepeatedMessage?ids="+kept, e.admin, nil), 200)
	e.post("POST", "/ManageGeoObject/postGeoObject", geo("after-delete", 0, true))
}

// TestDataPackageBudgetManagement: at maxDataPackages an upload through
// the management API is refused before its content is read, no row or
// blob is kept, and the list shows what is kept.
func TestDataPackageBudgetManagement(t *testing.T) {
	e := newEnv(t, func(c *config.Config) { c.MaxDataPackages = 2 })
	for i := range 2 {
		want(t, "upload", e.upload(e.admin, fmt.Sprintf("?filename=f%d.txt&creatorUid=ANDROID-1", i), "assetfile", []byte(fmt.Sprint("content ", i))), 200)
	}
	r := e.upload(e.admin, "?filename=f2.txt&creatorUid=ANDROID-1", "assetfile", []byte("content 2"))
	want(t, "one more", r, 409)
	if !strings.Contains(r.Message(), "at most 2 data packages are kept (maxDataPackages); delete some first") {
		t.Fatalf("refusal: %q", r.Message())
	}
	if p, b := e.count("data_packages", ""), e.count("blobs", ""); p != 2 || b != 2 {
		t.Fatalf("after the refusal: %d packages, %d blobs", p, b)
	}
	var list struct {
		JSONList []struct{ Name string } `json:"json_list"`
	}
	r = e.do("GET", "/DataPackageTable", e.admin, nil)
	want(t, "list", r, 200)
	r.JSON(t, &list)
	if len(list.JSONList) != 2 || list.JSONList[0].Name != "f1.txt" {
		t.Fatalf("list: %s", r.Body)
	}
}
