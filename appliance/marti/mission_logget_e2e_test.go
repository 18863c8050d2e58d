package marti_test

import (
	"strings"
	"testing"
)

// TestMissionLogEntryByID: GET /Marti/api/missions/logs/entries/{id} (the
// official server's getOneLogEntry) on both listeners answers the entry in
// the envelope; an unknown id is 404, an id over 64 bytes 400; a Blue
// member does not read an entry of a Red mission (404, as an unknown id),
// and an entry of a password-protected mission is 403 to a caller that has
// not subscribed.
func TestMissionLogEntryByID(t *testing.T) {
	e := start(t, nil)
	for _, l := range both {
		name := "logget-" + l
		e.call(t, l, "PUT", "/Marti/api/missions/"+name+"?creatorUid=LOG-1", nil, 201, nil)
		var made struct{ ID string }
		e.call(t, l, "POST", "/Marti/api/missions/logs/entries", map[string]any{"content": "by id on " + l, "creatorUid": "LOG-1",
			"missionNames": []string{name}}, 201, &made)
		var got struct {
			ID, Content  string
			MissionNames []string
		}
		if env := e.call(t, l, "GET", "/Marti/api/missions/logs/entries/"+made.ID, nil, 200, &got); env.Type != "com.bbn.marti.sync.model.LogEntry" ||
			got.ID != made.ID || got.Content != "by id on "+l || len(got.MissionNames) != 1 || got.MissionNames[0] != name {
			t.Fatalf("%s entry %s: %+v", l, env.Type, got)
		}
		wantRefusal(t, "unknown id", e.do(t, l, "GET", "/Marti/api/missions/logs/entries/no-such-entry", nil), 404, "no-such-entry")
		wantRefusal(t, "long id", e.do(t, l, "GET", "/Marti/api/missions/logs/entries/"+strings.Repeat("x", 65), nil), 400, "id")
	}
	red, blue := e.member(t, "reddy", "Red"), e.member(t, "bluey", "Blue")
	if r := e.as(t, red, "PUT", "/Marti/api/missions/redlog?creatorUid=RED-1", nil); r.Status != 201 {
		t.Fatalf("red mission: %d %s", r.Status, r.Body)
	}
	r := e.as(t, red, "POST", "/Marti/api/missions/logs/entries", map[string]any{"content": "red only", "creatorUid": "RED-1", "missionNames": []string{"redlog"}})
	if r.Status != 201 {
		t.Fatalf("red entry: %d %s", r.Status, r.Body)
	}
	id := between(string(r.Body), `"id":"`, `"`)
	if r := e.as(t, red, "GET", "/Marti/api/missions/logs/entries/"+id, nil); r.Status != 200 {
		t.Fatalf("red reads its entry: %d %s", r.Status, r.Body)
	}
	if r := e.as(t, blue, "GET", "/Marti/api/missions/logs/entries/"+id, nil); r.Status != 404 || strings.Contains(string(r.Body), "red only") {
		t.Fatalf("blue reads red's entry: %d %s", r.Status, r.Body)
	}
	if r := e.as(t, red, "PUT", "/Marti/api/missions/redlog/password?password=pw-red&creatorUid=RED-1", nil); r.Status != 200 {
		t.Fatalf("red password: %d %s", r.Status, r.Body)
	}
	rosa := e.member(t, "rosa", "Red")
	if r := e.as(t, rosa, "GET", "/Marti/api/missions/logs/entries/"+id, nil); r.Status != 403 || !strings.Contains(r.Msg, "password protected") {
		t.Fatalf("another red member reads the protected mission's entry: %d %s", r.Status, r.Body)
	}
	if r := e.as(t, red, "GET", "/Marti/api/missions/logs/entries/"+id, nil); r.Status != 200 {
		t.Fatalf("the owner reads its protected mission's entry: %d %s", r.Status, r.Body)
	}
}

func between(s, a, b string) string {
	_, rest, _ := strings.Cut(s, a)
	v, _, _ := strings.Cut(rest, b)
	return v
}
