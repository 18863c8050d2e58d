package marti_test

import (
	"encoding/json"
	"strings"
	"testing"
)

// TestMissionBadInput: every mission route refuses what it cannot take
// with a 4xx {"message"} naming what is wrong, on both listeners, and
// nothing is written: unknown missions, log entries and contents are 404,
// malformed JSON and values 400, oversized bodies 413, changes a role does
// not allow 403, wrong mission passwords 403.
func TestMissionBadInput(t *testing.T) {
	e := start(t, nil)
	l0 := both[0]
	e.call(t, l0, "PUT", "/Marti/api/missions/bad?creatorUid=owner-1", nil, 201, nil)
	e.call(t, l0, "PUT", "/Marti/api/missions/ro?creatorUid=owner-1&defaultRole=MISSION_READONLY_SUBSCRIBER", nil, 201, nil)
	e.call(t, l0, "PUT", "/Marti/api/missions/locked?creatorUid=owner-1&password=s3cret", nil, 201, nil)
	unknownHash := strings.Repeat("ab", 32)
	big := `{"hashes":["` + strings.Repeat("a", 300<<10) + `"]}`
	const m = "/Marti/api/missions/"
	cases := []struct {
		name, method, path string
		body               any
		status             int
		msg                string
	}{
		{"get unknown", "GET", m + "nope", nil, 404, `no mission named "nope"`},
		{"cot unknown", "GET", m + "nope/cot", nil, 404, "no mission"},
		{"changes unknown", "GET", m + "nope/changes", nil, 404, "no mission"},
		{"log unknown", "GET", m + "nope/log", nil, 404, "no mission"},
		{"subscriptions unknown", "GET", m + "nope/subscriptions", nil, 404, "no mission"},
		{"roles unknown", "GET", m + "nope/subscriptions/roles", nil, 404, "no mission"},
		{"children unknown", "GET", m + "nope/children", nil, 404, "no mission"},
		{"parent unknown", "GET", m + "nope/parent", nil, 404, "no mission"},
		{"no parent", "GET", m + "bad/parent", nil, 404, "has no parent"},
		{"set parent unknown", "PUT", m + "nope/parent/bad", nil, 404, "no mission"},
		{"contents unknown", "PUT", m + "nope/contents", map[string]any{"uids": []string{"u"}}, 404, "no mission"},
		{"package unknown", "PUT", m + "nope/contents/missionpackage?filename=a.zip", "zip", 404, "no mission"},
		{"subscribe unknown", "PUT", m + "nope/subscription?uid=x", nil, 404, "no mission"},
		{"unsubscribe unknown", "DELETE", m + "nope/subscription?uid=x", nil, 404, "no mission"},
		{"unsubscribe never subscribed", "DELETE", m + "bad/subscription?uid=never", nil, 404, "not subscribed"},
		{"subscribe without uid", "PUT", m + "bad/subscription", nil, 400, "uid: required"},
		{"disconnectOnly not boolean", "DELETE", m + "bad/subscription?uid=owner-1&disconnectOnly=maybe", nil, 400, "disconnectOnly"},
		{"subscribe bad secago", "PUT", m + "bad/subscription?uid=x&secago=soon", nil, 400, "secago"},
		{"contents malformed", "PUT", m + "bad/contents", "{", 400, "JSON"},
		{"contents empty", "PUT", m + "bad/contents", map[string]any{}, 400, "hashes"},
		{"contents bad hash", "PUT", m + "bad/contents", map[string]any{"hashes": []string{"zz"}}, 400, "hashes: must be a SHA-256"},
		{"contents unknown hash", "PUT", m + "bad/contents", map[string]any{"hashes": []string{unknownHash}, "uids": []string{"u1"}}, 404, "no file with hash"},
		{"contents oversized", "PUT", m + "bad/contents", big, 413, ""},
		{"remove without hash or uid", "DELETE", m + "bad/contents", nil, 400, "hash: required"},
		{"remove unknown hash", "DELETE", m + "bad/contents?hash=" + unknownHash, nil, 404, "holds no file"},
		{"remove unknown uid", "DELETE", m + "bad/contents?uid=ghost", nil, 404, "holds no uid"},
		{"log malformed", "POST", m + "logs/entries", "{", 400, "JSON"},
		{"log without content", "POST", m + "logs/entries", map[string]any{"missionNames": []string{"bad"}}, 400, "content: required"},
		{"log without missions", "POST", m + "logs/entries", map[string]any{"content": "x"}, 400, "missionNames: required"},
		{"log unknown mission", "POST", m + "logs/entries", map[string]any{"content": "x", "missionNames": []string{"bad", "nope"}}, 404, "no mission"},
		{"log bad dtg", "POST", m + "logs/entries", map[string]any{"content": "x", "missionNames": []string{"bad"}, "dtg": "noon"}, 400, "dtg"},
		{"log content not text", "POST", m + "logs/entries", map[string]any{"content": 5, "missionNames": []string{"bad"}}, 400, "content"},
		{"log update without id", "PUT", m + "logs/entries", map[string]any{"content": "x", "missionNames": []string{"bad"}}, 400, "id: required"},
		{"log update unknown", "PUT", m + "logs/entries", map[string]any{"id": "nope", "content": "x", "missionNames": []string{"bad"}}, 404, "no log entry"},
		{"log delete unknown", "DELETE", m + "logs/entries/nope", nil, 404, "no log entry"},
		{"logs bad secago", "GET", m + "bad/log?secago=abc", nil, 400, "secago"},
		{"logs bad start", "GET", m + "bad/log?start=yesterday", nil, 400, "start"},
		{"changes bad end", "GET", m + "bad/changes?end=later", nil, 400, "end"},
		{"external data without uid", "POST", m + "bad/externaldata", map[string]any{"name": "x"}, 400, "uid: required"},
		{"external data malformed", "POST", m + "bad/externaldata", "[", 400, ""},
		{"external data unknown mission", "POST", m + "nope/externaldata", map[string]any{"uid": "x"}, 404, "no mission"},
		{"read-only role writes", "PUT", m + "ro/contents?creatorUid=someone", map[string]any{"uids": []string{"u"}}, 403, "may not change it"},
		{"read-only role logs", "POST", m + "logs/entries", map[string]any{"content": "x", "creatorUid": "someone", "missionNames": []string{"ro"}}, 403, "may not change it"},
		{"bad default role", "PUT", m + "new?creatorUid=owner-1&defaultRole=KING", nil, 400, "defaultRole"},
		{"bad body", "PUT", m + "new2?creatorUid=owner-1", `{"description": 5}`, 400, "description"},
		{"name too long", "GET", m + strings.Repeat("n", 300), nil, 400, "mission_id: longer than"},
		{"wrong password", "PUT", m + "locked/subscription?uid=x&password=wrong", nil, 403, "password: wrong mission password"},
		{"no password", "PUT", m + "locked/subscription?uid=x", nil, 403, "password"},
		{"invite bad role", "PUT", m + "bad/invite/clientUid/x?role=KING", nil, 400, "role"},
		{"invite nobody", "POST", m + "bad/invite", map[string]any{}, 400, "invitee: required"},
		{"invite unknown mission", "PUT", m + "nope/invite/clientUid/x", nil, 404, "no mission"},
		{"package read-only", "PUT", m + "ro/contents/missionpackage?filename=a.zip&creatorUid=someone", "zip", 403, "may not change it"},
		{"invite read-only", "PUT", m + "ro/invite/clientUid/x?creatorUid=someone", nil, 403, "may not change it"},
	}
	for _, l := range both {
		for _, c := range cases {
			var resp = e.do(t, l, c.method, c.path, c.body, "Content-Type", "application/json")
			if resp.Status != c.status {
				t.Errorf("%s %s: %d %s, want %d", l, c.name, resp.Status, resp.Body, c.status)
				continue
			}
			var msg struct{ Message string }
			resp.JSON(t, &msg)
			if msg.Message == "" || !strings.Contains(msg.Message, c.msg) {
				t.Errorf("%s %s: message %q, want it to contain %q", l, c.name, msg.Message, c.msg)
			}
		}
	}
	// Nothing was written by any of them.
	if cs := e.changes(t, l0, "bad"); len(cs) != 1 || cs[0].Type != "CREATE_MISSION" {
		t.Fatalf("changes after bad input: %+v", cs)
	}
	var logs []struct{ ID string }
	if e.call(t, l0, "GET", m+"all/logs", nil, 200, &logs); len(logs) != 0 {
		t.Fatalf("logs after bad input: %+v", logs)
	}
	if bad := e.mission(t, l0, "bad"); len(bad.UIDs) != 0 || len(bad.Contents) != 0 || bad.PasswordProtected {
		t.Fatalf("mission after bad input: %+v", bad)
	}
	if n := e.packages(t); n != 0 {
		t.Fatalf("%d files stored by refused mission package uploads", n)
	}
	for _, name := range []string{"new", "new2", "nope"} {
		e.call(t, l0, "GET", m+name, nil, 404, nil)
	}
	// The right password subscribes; the mission says it is protected. Its
	// contents need the subscription's token (access.md "Missions").
	var sub struct{ Token string }
	e.call(t, l0, "PUT", m+"locked/subscription?uid=anon-sub&password=s3cret", nil, 201, &sub)
	if r := e.do(t, l0, "GET", m+"locked", nil); r.Status != 403 || !strings.Contains(r.Message(), "password protected") {
		t.Fatalf("protected mission without the token: %d %s", r.Status, r.Body)
	}
	r := e.do(t, l0, "GET", m+"locked", nil, "Authorization", "Bearer "+sub.Token)
	var got envelopeOf
	r.JSON(t, &got)
	var ms []missionOut
	if r.Status != 200 || json.Unmarshal(got.Data, &ms) != nil || len(ms) != 1 || !ms[0].PasswordProtected {
		t.Fatalf("protected mission with the subscription's token: %d %s", r.Status, r.Body)
	}
}
