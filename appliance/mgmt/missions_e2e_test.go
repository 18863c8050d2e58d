package mgmt_test

import (
	"context"
	"fmt"
	"net/url"
	"reflect"
	"strings"
	"testing"
	"time"

	"outpost/appliance/netx"
	"outpost/appliance/store"
	"outpost/appliance/takclient"
	"outpost/internal/testkit"
)

// missionList is GET /api/missions.
type missionList struct {
	Missions  []missionSummary `json:"missions"`
	Truncated *bool            `json:"truncated"`
}

type missionSummary struct {
	Name            string   `json:"name"`
	GUID            string   `json:"guid"`
	Description     string   `json:"description"`
	Tool            string   `json:"tool"`
	CreatorUID      string   `json:"creatorUid"`
	Created         string   `json:"created"`
	DefaultRole     string   `json:"defaultRole"`
	Keywords        []string `json:"keywords"`
	ContentCount    int      `json:"contentCount"`
	UIDCount        int      `json:"uidCount"`
	SubscriberCount int      `json:"subscriberCount"`
	LogCount        int      `json:"logCount"`
}

// missionDetail is GET /api/missions/{name}.
type missionDetail struct {
	Mission  missionSummary `json:"mission"`
	Contents []struct {
		Name, Hash, MIMEType, Submitter, CreatorUID, Added string
		Size                                               int64
	} `json:"contents"`
	UIDs []struct {
		UID, CreatorUID, Added, Type, Callsign string
		Lat, Lon                               *float64
	} `json:"uids"`
	Subscribers []struct {
		ClientUID, Username, Role, Created string
	} `json:"subscribers"`
	ExternalData []struct{ UID, Name string } `json:"externalData"`
	Changes      []struct {
		ID                                                      int64
		Type, Kind, CreatorUID, Time, Name, Hash, UID, Callsign string
		LogID, Text                                             string
		Size                                                    int64
	} `json:"changes"`
	Logs []struct {
		ID, Content, CreatorUID, DTG string
		Keywords                     []string
	} `json:"logs"`
	Truncated map[string]bool `json:"truncated"`
}

// marti calls the client API on the HTTP port (no authentication).
func (e *env) marti(method, path string, body any, status int, headers ...string) testkit.Response {
	e.t.Helper()
	r := testkit.Do(e.t, nil, method, "http://"+e.app.Addr(e.t, netx.ListenerHTTP)+path, body, headers...)
	if r.Status != status {
		e.t.Fatalf("%s %s: %d %s, want %d", method, path, r.Status, r.Body, status)
	}
	return r
}

func missionPath(name string) string { return "/api/missions/" + url.PathEscape(name) }

// TestMissionRoutes creates a mission through the client API (a file, a
// uid with a position, a subscriber, a log entry) and reads it back through
// both management routes.
func TestMissionRoutes(t *testing.T) {
	e := newEnv(t, nil)
	// Client-controlled text with markup: returned as data, unchanged.
	const name = `Op <b>Dawn</b> & "co"`
	mp := "/Marti/api/missions/" + url.PathEscape(name)

	// A client reports the position of the uid the mission will hold.
	c := e.app.DialTCP(t)
	c.Send(takclient.SA("marker-1", "MARKER-1", 48.85, 2.35))
	testkit.WaitFor(t, "marker-1 in the history", func() bool {
		return e.do("GET", "/api/map/event?uid=marker-1", e.admin, nil).Status == 200
	})

	file := []byte("the briefing, as a text file")
	e.marti("POST", "/Marti/sync/upload?filename=brief.txt&creatorUid=owner-1", file, 200, "Content-Type", "text/plain")
	e.marti("PUT", mp+"?creatorUid=owner-1&description=dawn+patrol&tool=public&keywords=alpha", nil, 201)
	e.marti("PUT", mp+"/contents?creatorUid=owner-1", map[string]any{"hashes": []string{sha(file)}, "uids": []string{"marker-1"}}, 200)
	var sub struct{ Data struct{ Token string } } // api.md §2.13's envelope
	e.marti("PUT", mp+"/subscription?uid=sub-1", nil, 201).JSON(t, &sub)
	if sub.Data.Token == "" {
		t.Fatal("subscribing gave no token")
	}
	e.marti("POST", "/Marti/api/missions/logs/entries",
		map[string]any{"content": "contact at the bridge <script>alert(1)</script>", "creatorUid": "sub-1", "missionNames": []string{name}, "keywords": []string{"contact"}}, 201)

	// The list: the migration's exchecktemplates mission and ours, by name.
	r := e.do("GET", "/api/missions", e.admin, nil)
	want(t, "list", r, 200)
	var list missionList
	r.JSON(t, &list)
	if list.Truncated == nil || *list.Truncated || len(list.Missions) != 2 || list.Missions[0].Name != name || list.Missions[1].Name != "exchecktemplates" {
		t.Fatalf("list: %s", r.Body)
	}
	m := list.Missions[0]
	created, err := time.Parse(time.RFC3339Nano, m.Created)
	if err != nil || time.Since(created) > time.Minute || m.GUID == "" || m.Tool != "public" || m.CreatorUID != "owner-1" ||
		m.Description != "dawn patrol" || m.DefaultRole != store.RoleMember || strings.Join(m.Keywords, ",") != "alpha" ||
		m.ContentCount != 1 || m.UIDCount != 1 || m.SubscriberCount != 2 || m.LogCount != 1 {
		t.Fatalf("list item: %+v", m)
	}

	// One mission.
	r = e.do("GET", missionPath(name), e.admin, nil)
	want(t, "detail", r, 200)
	if strings.Contains(string(r.Body), sub.Data.Token) || strings.Contains(string(r.Body), `"token"`) {
		t.Fatalf("a subscription token is listed: %s", r.Body)
	}
	var d missionDetail
	r.JSON(t, &d)
	if !reflect.DeepEqual(d.Mission, m) {
		t.Fatalf("detail's mission %+v, list's %+v", d.Mission, m)
	}
	if len(d.Contents) != 1 || d.Contents[0].Name != "brief.txt" || d.Contents[0].Hash != sha(file) || d.Contents[0].Size != int64(len(file)) ||
		d.Contents[0].CreatorUID != "owner-1" || d.Contents[0].Added == "" {
		t.Fatalf("contents: %+v", d.Contents)
	}
	if len(d.UIDs) != 1 || d.UIDs[0].UID != "marker-1" || d.UIDs[0].Callsign != "MARKER-1" || d.UIDs[0].Type != "a-f-G-U-C" ||
		d.UIDs[0].Lat == nil || *d.UIDs[0].Lat != 48.85 || d.UIDs[0].CreatorUID != "owner-1" {
		t.Fatalf("uids: %+v", d.UIDs)
	}
	if len(d.Subscribers) != 2 || d.Subscribers[0].ClientUID != "owner-1" || d.Subscribers[0].Role != store.RoleOwner ||
		d.Subscribers[1].ClientUID != "sub-1" || d.Subscribers[1].Role != store.RoleMember || d.Subscribers[1].Created == "" {
		t.Fatalf("subscribers: %+v", d.Subscribers)
	}
	if len(d.Logs) != 1 || d.Logs[0].Content != "contact at the bridge <script>alert(1)</script>" || d.Logs[0].CreatorUID != "sub-1" ||
		strings.Join(d.Logs[0].Keywords, ",") != "contact" || d.Logs[0].DTG == "" {
		t.Fatalf("logs: %+v", d.Logs)
	}
	// Changes, newest first: the log entry, the uid and the file (added
	// together), the creation.
	var kinds []string
	for _, c := range d.Changes {
		kinds = append(kinds, c.Type+"/"+c.Kind)
	}
	if strings.Join(kinds, " ") != "ADD_CONTENT/log ADD_CONTENT/uid ADD_CONTENT/file CREATE_MISSION/mission" {
		t.Fatalf("changes: %v", kinds)
	}
	if ch := d.Changes; ch[0].LogID != d.Logs[0].ID || ch[0].CreatorUID != "sub-1" || ch[1].UID != "marker-1" || ch[1].Callsign != "MARKER-1" ||
		ch[2].Hash != sha(file) || ch[2].Name != "brief.txt" || ch[3].CreatorUID != "owner-1" || ch[0].ID <= ch[3].ID {
		t.Fatalf("changes: %+v", ch)
	}
	for part, cut := range d.Truncated {
		if cut {
			t.Fatalf("truncated %s: %v", part, d.Truncated)
		}
	}
	if len(d.Truncated) != 6 {
		t.Fatalf("truncated: %v", d.Truncated)
	}
	// The file downloads through the data package route the console uses.
	r = e.do("GET", "/DataPackageTable/"+d.Contents[0].Hash, e.admin, nil)
	if r.Status != 200 || string(r.Body) != string(file) {
		t.Fatalf("download: %d %s", r.Status, r.Body)
	}
}

// TestMissionRoutesRefused: no token, a wrong token, an unknown mission, a
// malformed name; none changes anything.
func TestMissionRoutesRefused(t *testing.T) {
	e := newEnv(t, nil)
	e.marti("PUT", "/Marti/api/missions/known?creatorUid=owner-1", nil, 201)
	before := e.snapshot()
	for _, tc := range []struct {
		what, path, token string
		status            int
		message           string
	}{
		{"list without a token", "/api/missions", "", 401, ""},
		{"one without a token", missionPath("known"), "", 401, ""},
		{"list with a wrong token", "/api/missions", "not-a-token-of-this-server", 401, ""},
		{"one with a wrong token", missionPath("known"), "not-a-token-of-this-server", 401, ""},
		{"unknown mission", missionPath("unknown <mission>"), e.admin, 404, `name: no mission named "unknown <mission>"`},
		{"name too long", missionPath(strings.Repeat("n", store.MaxMissionName+1)), e.admin, 400, "name: "},
		{"control character", missionPath("bad\x01name"), e.admin, 400, "name: "},
	} {
		t.Run(tc.what, func(t *testing.T) {
			r := e.do("GET", tc.path, tc.token, nil)
			want(t, tc.what, r, tc.status)
			if !strings.HasPrefix(r.Message(), tc.message) {
				t.Fatalf("message %q, want %q", r.Message(), tc.message)
			}
			if tc.status == 401 && strings.Contains(string(r.Body), "owner-1") {
				t.Fatalf("refused answer names a mission: %s", r.Body)
			}
		})
	}
	sameSnapshot(t, "refused mission reads", before, e.snapshot())
}

// TestMissionRoutesBounded: a mission with more uids, changes and log
// entries than one answer holds lists the first uids and the newest
// changes and entries, says so, and counts them all.
func TestMissionRoutesBounded(t *testing.T) {
	e := newEnv(t, nil)
	const n = 501
	e.marti("PUT", "/Marti/api/missions/big?creatorUid=owner-1", nil, 201)
	uids := make([]string, n)
	for i := range uids {
		uids[i] = fmt.Sprintf("u-%03d", i)
	}
	e.marti("PUT", "/Marti/api/missions/big/contents?creatorUid=owner-1", map[string]any{"uids": uids}, 200)
	st, ctx := e.app.Store(), context.Background()
	for i := range n {
		dtg := time.Date(2026, 1, 1, 0, 0, i, 0, time.UTC)
		if _, _, err := st.Missions().PutLogEntry(ctx, store.LogEntry{Content: fmt.Sprintf("entry %03d", i), CreatorUID: "owner-1",
			Missions: []string{"big"}, DTG: dtg}); err != nil {
			t.Fatal(err)
		}
	}
	r := e.do("GET", missionPath("big"), e.admin, nil)
	want(t, "big mission", r, 200)
	var d missionDetail
	r.JSON(t, &d)
	if d.Mission.UIDCount != n || d.Mission.LogCount != n || len(d.UIDs) != 500 || d.UIDs[0].UID != "u-000" || d.UIDs[499].UID != "u-499" {
		t.Fatalf("uids: count %d, listed %d", d.Mission.UIDCount, len(d.UIDs))
	}
	if len(d.Logs) != 500 || d.Logs[0].Content != "entry 500" || d.Logs[499].Content != "entry 001" {
		t.Fatalf("logs: %d, first %+v", len(d.Logs), d.Logs[0])
	}
	// 1 creation + 501 uids + 501 entries: the newest 500 are entries.
	if len(d.Changes) != 500 || d.Changes[0].Kind != "log" || d.Changes[0].Text != "entry 500" || d.Changes[499].Text != "entry 001" {
		t.Fatalf("changes: %d, first %+v", len(d.Changes), d.Changes[0])
	}
	tr := d.Truncated
	if !tr["uids"] || !tr["logs"] || !tr["changes"] || tr["contents"] || tr["subscribers"] || tr["externalData"] {
		t.Fatalf("truncated: %v", tr)
	}
}
