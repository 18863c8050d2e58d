package marti_test

// The budgets of the tables the client API lets clients grow
// (RELIABILITY.md "Budgets"), set small: what fits is stored, the one more
// is refused with 409 naming the budget and its setting, and nothing of
// it is stored.

import (
	"database/sql"
	"fmt"
	"strings"
	"testing"

	_ "modernc.org/sqlite" // counts the blobs in the appliance's database

	"outpost/appliance/config"
)

// refused checks a budget's refusal: 409 with the words of the budget.
func refused(t *testing.T, what string, status int, body []byte, msg string) {
	t.Helper()
	if status != 409 || !strings.Contains(string(body), msg) {
		t.Fatalf("%s: %d %s, want 409 with %q", what, status, body, msg)
	}
}

// TestExCheckBudget: at maxExCheckDocuments a new template and a new
// checklist (and its mission) are refused, a template may still be
// replaced; an edit that would take the XML past maxExCheckBytes is
// refused and the document stays as it was.
func TestExCheckBudget(t *testing.T) {
	e := start(t, func(c *config.Config) { c.MaxExCheckDocuments, c.MaxExCheckBytes = 2, 64<<10 })
	l := both[0]
	const base = "/Marti/api/excheck/"
	tpl := func(uid string) []byte {
		return []byte(strings.Replace(string(readTestdata(t, "spec-template.xml")), "tpl-preflight", uid, 1))
	}
	e.xmlCall(t, l, "POST", base+"template?creatorUid=U", tpl("a"), 200)
	e.xmlCall(t, l, "POST", base+"template?creatorUid=U", tpl("b"), 200)
	resp := e.do(t, l, "POST", base+"template?creatorUid=U", tpl("c"), "Content-Type", "application/xml")
	refused(t, "a third template", resp.Status, resp.Body, "at most 2 templates are kept (maxExCheckDocuments)")
	e.xmlCall(t, l, "GET", base+"template/c", nil, 404)
	e.xmlCall(t, l, "POST", base+"template?creatorUid=U", tpl("a"), 200) // replacing one: no new document

	missions := func() int {
		var list []any
		e.call(t, l, "GET", "/Marti/api/missions", nil, 200, &list)
		return len(list)
	}
	e.xmlCall(t, l, "POST", base+"a/start?name=one", nil, 200)
	e.xmlCall(t, l, "POST", base+"a/start?name=two", nil, 200)
	before := missions()
	resp = e.do(t, l, "POST", base+"a/start?name=three", nil)
	refused(t, "a third checklist", resp.Status, resp.Body, "at most 2 checklists are kept (maxExCheckDocuments)")
	if n := missions(); n != before {
		t.Fatalf("a refused checklist made a mission: %d missions, %d before", n, before)
	}
	active := string(e.xmlCall(t, l, "GET", base+"checklist/active", nil, 200))
	if strings.Count(active, "<checklist>")+strings.Count(active, "<checklist ") != 2 || strings.Contains(active, "three") {
		t.Fatalf("checklists after the refusal: %s", active)
	}

	big := []byte(`<checklistTask><description>` + strings.Repeat("x", 64<<10) + `</description></checklistTask>`)
	resp = e.do(t, l, "POST", base+"template/b/task/big", big, "Content-Type", "application/xml")
	refused(t, "a task past the bytes", resp.Status, resp.Body, "(maxExCheckBytes)")
	if got := e.xmlCall(t, l, "GET", base+"template/b", nil, 200); strings.Contains(string(got), "xxxx") || strings.Contains(string(got), `uid="big"`) {
		t.Fatalf("a refused edit changed the template: %.300s", got)
	}
}

// TestVideoBudget: at maxVideoConnections a new connection is refused on
// both routes (JSON and ATAK's XML), a refused batch stores none of its
// connections, and deleting one makes room.
func TestVideoBudget(t *testing.T) {
	e := start(t, func(c *config.Config) { c.MaxVideoConnections = 2 })
	l := both[0]
	conn := func(uids ...string) map[string]any {
		var conns []any
		for _, u := range uids {
			conns = append(conns, map[string]any{"uuid": u, "feeds": []any{map[string]any{"url": "rtsp://h/" + u}}})
		}
		return map[string]any{"videoConnections": conns}
	}
	if resp := e.do(t, l, "POST", "/Marti/api/video", conn("c1", "c2")); resp.Status != 200 {
		t.Fatalf("fill: %d %s", resp.Status, resp.Body)
	}
	const msg = "at most 2 video connections are kept (maxVideoConnections); delete one first"
	resp := e.do(t, l, "POST", "/Marti/api/video", conn("c1", "c3"))
	refused(t, "a batch with one too many", resp.Status, resp.Body, msg)
	resp = e.do(t, l, "POST", "/Marti/vcm", "<videoConnections><feed><protocol>rtsp</protocol><address>h</address><uid>c4</uid></feed></videoConnections>")
	refused(t, "one more over XML", resp.Status, resp.Body, msg)
	list, err := e.Store().Videos().VideoConnections(t.Context())
	if err != nil || len(list) != 2 || list[0].UID != "c1" || list[1].UID != "c2" || list[0].Feeds[0].URL != "rtsp://h/c1" {
		t.Fatalf("after the refusals: %+v %v", list, err)
	}
	// The listings (written as read) show exactly what is kept.
	var got struct{ VideoConnections []struct{ UID string } }
	resp = e.do(t, l, "GET", "/Marti/api/video", nil)
	resp.JSON(t, &got)
	if len(got.VideoConnections) != 2 {
		t.Fatalf("GET /Marti/api/video: %s", resp.Body)
	}
	if resp := e.do(t, l, "GET", "/Marti/vcm", nil); strings.Count(string(resp.Body), "<feed>") != 2 || !strings.HasSuffix(string(resp.Body), "</videoConnections>") {
		t.Fatalf("GET /Marti/vcm: %s", resp.Body)
	}
	if resp := e.do(t, l, "DELETE", "/Marti/api/video/c2", nil); resp.Status != 200 {
		t.Fatalf("delete: %d %s", resp.Status, resp.Body)
	}
	if resp := e.do(t, l, "POST", "/Marti/api/video", conn("c3")); resp.Status != 200 {
		t.Fatalf("after a delete: %d %s", resp.Status, resp.Body)
	}
}

// TestDataPackageBudget: at maxDataPackages an enterprise sync upload is
// refused (anonymous on 8080 and with a certificate on 8443), no row and
// no blob is kept of it, the search still lists what is kept, and
// deleting one makes room.
func TestDataPackageBudget(t *testing.T) {
	e := start(t, func(c *config.Config) { c.MaxDataPackages = 2 })
	upload := func(l, name string) (int, []byte) {
		resp := e.do(t, l, "POST", "/Marti/sync/upload?filename="+name+"&creatorUid=U-"+l, "content of "+name, "Content-Type", "text/plain")
		return resp.Status, resp.Body
	}
	for i, l := range both {
		if status, body := upload(l, fmt.Sprint("p", i, ".txt")); status != 200 {
			t.Fatalf("%s: upload: %d %s", l, status, body)
		}
	}
	blobs := func() int {
		db, err := sql.Open("sqlite", "file:"+e.Cfg.DBPath()+"?mode=ro")
		if err != nil {
			t.Fatal(err)
		}
		defer db.Close()
		var n int
		if err := db.QueryRow(`SELECT COUNT(*) FROM blobs`).Scan(&n); err != nil {
			t.Fatal(err)
		}
		return n
	}
	for _, l := range both {
		status, body := upload(l, "one-more.txt")
		refused(t, l+": one more", status, body, "at most 2 data packages are kept (maxDataPackages); delete some first")
	}
	if n, b := e.packages(t), blobs(); n != 2 || b != 2 {
		t.Fatalf("after the refusals: %d packages, %d blobs", n, b)
	}
	if got := e.search(t, both[0], ""); len(got) != 2 {
		t.Fatalf("search: %v", got)
	}
	if err := e.Store().Files().DeleteDataPackageByHash(t.Context(), sha([]byte("content of p0.txt"))); err != nil {
		t.Fatal(err)
	}
	if status, body := upload(both[1], "one-more.txt"); status != 200 {
		t.Fatalf("after a delete: %d %s", status, body)
	}
}
