package marti_test

import (
	"encoding/json"
	"fmt"
	"net/url"
	"reflect"
	"strings"
	"testing"
	"time"

	"outpost/appliance/config"
)

// pageOf reads one page of a listing: its records and the next page's
// cursor from header.
func (e *env) pageOf(t *testing.T, path, header string, data any) string {
	t.Helper()
	resp := e.do(t, both[0], "GET", path, nil)
	if resp.Status != 200 {
		t.Fatalf("GET %s: %d %s", path, resp.Status, resp.Body)
	}
	var env envelopeOf
	resp.JSON(t, &env)
	if err := json.Unmarshal(env.Data, data); err != nil {
		t.Fatalf("GET %s: %v", path, err)
	}
	return resp.Header.Get(header)
}

// TestMissionPaging: the change history, the logs, the mission with its
// logs and changes, and the mission list answer the newest page (all of
// it when it is short), name the next page in a header, and page on
// without gaps or repeats; bad paging parameters are 400 naming them.
func TestMissionPaging(t *testing.T) {
	e := start(t, func(c *config.Config) { c.MissionLogEntriesPerMinute, c.MissionLogBytesPerMinute = 0, 0 })
	const m = "/Marti/api/missions/"
	e.call(t, both[0], "PUT", m+"pages?creatorUid=owner-1", nil, 201, nil)
	uids := make([]string, 30)
	for i := range uids {
		uids[i] = fmt.Sprintf("u%02d", i)
	}
	e.call(t, both[0], "PUT", m+"pages/contents?creatorUid=owner-1", map[string]any{"uids": uids}, 200, nil)
	t0 := time.Now().Add(-time.Hour).UTC()
	for i := range 6 {
		e.call(t, both[0], "POST", m+"logs/entries", map[string]any{"content": fmt.Sprint("entry ", i), "missionNames": []string{"pages"},
			"dtg": t0.Add(time.Duration(i) * time.Minute).Format(time.RFC3339)}, 201, nil)
	}

	// No paging parameters: a short history comes whole, with no next page.
	var all []changeOut
	if next := e.pageOf(t, m+"pages/changes", "Outpost-Next-Changes", &all); len(all) != 37 || next != "" {
		t.Fatalf("whole history: %d records, next %q", len(all), next)
	}
	// Pages of 10, newest first, each oldest first.
	var paged []changeOut
	path := m + "pages/changes?limit=10"
	for pages := 0; ; pages++ {
		var page []changeOut
		next := e.pageOf(t, path, "Outpost-Next-Changes", &page)
		if len(page) > 10 || pages > 4 {
			t.Fatalf("page %d of %d records", pages, len(page))
		}
		paged = append(page, paged...)
		if next == "" {
			break
		}
		path = m + "pages/changes?limit=10&before=" + url.QueryEscape(next)
	}
	if len(paged) != len(all) {
		t.Fatalf("pages gave %d records, want %d", len(paged), len(all))
	}
	for i := range all {
		if !reflect.DeepEqual(paged[i], all[i]) {
			t.Fatalf("record %d: paged %+v, whole %+v", i, paged[i], all[i])
		}
	}

	// Logs: one mission's and everyone's.
	for _, p := range []string{m + "pages/log", m + "all/logs"} {
		var page []struct{ Content string }
		next := e.pageOf(t, p+"?limit=4", "Outpost-Next-Logs", &page)
		if len(page) != 4 || page[0].Content != "entry 2" || page[3].Content != "entry 5" || next == "" {
			t.Fatalf("%s first page: %+v next %q", p, page, next)
		}
		next = e.pageOf(t, p+"?limit=4&before="+url.QueryEscape(next), "Outpost-Next-Logs", &page)
		if len(page) != 2 || page[0].Content != "entry 0" || next != "" {
			t.Fatalf("%s last page: %+v next %q", p, page, next)
		}
	}

	// The mission with its logs and changes: the newest of each.
	resp := e.do(t, both[0], "GET", m+"pages?logs=true&changes=true&limit=2", nil)
	var ms []struct {
		Logs           []struct{ Content string } `json:"logs"`
		MissionChanges []changeOut                `json:"missionChanges"`
	}
	var env envelopeOf
	resp.JSON(t, &env)
	if err := json.Unmarshal(env.Data, &ms); err != nil || resp.Status != 200 || len(ms) != 1 {
		t.Fatalf("mission: %d %v %s", resp.Status, err, resp.Body)
	}
	if len(ms[0].Logs) != 2 || ms[0].Logs[1].Content != "entry 5" || len(ms[0].MissionChanges) != 2 ||
		resp.Header.Get("Outpost-Next-Logs") == "" || resp.Header.Get("Outpost-Next-Changes") == "" {
		t.Fatalf("mission with logs and changes: %+v %v", ms[0], resp.Header)
	}

	// The mission list by name, after= the last of the page before.
	for _, n := range []string{"pages-b", "pages-c"} {
		e.call(t, both[0], "PUT", m+n+"?creatorUid=owner-1", nil, 201, nil)
	}
	var names []string
	const list = "/Marti/api/missions"
	path = list + "?limit=1"
	for pages := 0; ; pages++ {
		var page []missionOut
		next := e.pageOf(t, path, "Outpost-Next-Missions", &page)
		if len(page) > 1 || pages > 5 {
			t.Fatalf("mission page %d: %d missions", pages, len(page))
		}
		for _, p := range page {
			names = append(names, p.Name)
		}
		if next == "" {
			break
		}
		path = list + "?limit=1&after=" + url.QueryEscape(next)
	}
	if strings.Join(names, ",") != "pages,pages-b,pages-c" {
		t.Fatalf("mission pages: %v", names)
	}

	for _, c := range []struct{ path, msg string }{
		{m + "pages/changes?limit=0", "limit: must be a whole number from 1 to 5000"},
		{m + "pages/changes?limit=5001", "limit: must be a whole number from 1 to 5000"},
		{m + "pages/log?limit=ten", `limit: must be a whole number from 1 to 5000, not "ten"`},
		{m + "all/logs?before=yesterday", `before: "yesterday" is not a cursor this server gave`},
		{m + "pages/changes?before=123_abc", `"123_abc" is not a cursor of a change history`},
		{m + "pages?logs=true&limit=-1", "limit: must be a whole number"},
		{"/Marti/api/missions?limit=x", "limit: must be a whole number"},
	} {
		resp := e.do(t, both[0], "GET", c.path, nil)
		var out struct{ Message string }
		resp.JSON(t, &out)
		if resp.Status != 400 || !strings.Contains(out.Message, c.msg) {
			t.Errorf("GET %s: %d %q, want 400 with %q", c.path, resp.Status, out.Message, c.msg)
		}
	}
}

// TestMissionPageBytes: a page stops at 2 MiB of records, however many
// the limit allows: 40 log entries of 60 KiB come in two pages.
func TestMissionPageBytes(t *testing.T) {
	e := start(t, func(c *config.Config) { c.MissionLogEntriesPerMinute, c.MissionLogBytesPerMinute = 0, 0 })
	e.call(t, both[0], "PUT", "/Marti/api/missions/heavy?creatorUid=owner-1", nil, 201, nil)
	for i := range 40 {
		e.call(t, both[0], "POST", "/Marti/api/missions/logs/entries", logPost(strings.Repeat(fmt.Sprint(i%10), 60<<10), "heavy"), 201, nil)
	}
	for _, c := range []struct{ path, header string }{
		{"/Marti/api/missions/heavy/log", "Outpost-Next-Logs"},
		{"/Marti/api/missions/heavy/changes", "Outpost-Next-Changes"},
	} {
		resp := e.do(t, both[0], "GET", c.path, nil)
		var env envelopeOf
		resp.JSON(t, &env)
		var page []map[string]any
		if err := json.Unmarshal(env.Data, &page); err != nil {
			t.Fatal(err)
		}
		if resp.Status != 200 || len(page) < 30 || len(page) >= 40 || resp.Header.Get(c.header) == "" || len(resp.Body) > 5<<20/2 {
			t.Fatalf("%s: %d records in %d bytes, next %q", c.path, len(page), len(resp.Body), resp.Header.Get(c.header))
		}
	}
}
