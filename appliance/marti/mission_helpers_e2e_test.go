package marti_test

import (
	"encoding/json"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"

	"outpost/appliance/cot"
	"outpost/appliance/takclient"
)

// envelopeOf is api.md §2.13 with the data left raw.
type envelopeOf struct {
	Version string          `json:"version"`
	Type    string          `json:"type"`
	Data    json.RawMessage `json:"data"`
	NodeID  string          `json:"nodeId"`
}

type missionOut struct {
	Name              string   `json:"name"`
	GUID              string   `json:"guid"`
	Description       string   `json:"description"`
	Tool              string   `json:"tool"`
	CreatorUID        string   `json:"creatorUid"`
	CreateTime        string   `json:"createTime"`
	PasswordProtected bool     `json:"passwordProtected"`
	Keywords          []string `json:"keywords"`
	Expiration        int64    `json:"expiration"`
	Token             string   `json:"token"`
	Groups            []string `json:"groups"`
	DefaultRole       struct {
		Type        string   `json:"type"`
		Permissions []string `json:"permissions"`
	} `json:"defaultRole"`
	UIDs []struct {
		Data    string `json:"data"`
		Details *struct {
			Type     string `json:"type"`
			Callsign string `json:"callsign"`
		} `json:"details"`
	} `json:"uids"`
	Contents []struct {
		Data struct {
			Hash     string `json:"hash"`
			Name     string `json:"name"`
			Filename string `json:"filename"`
		} `json:"data"`
		CreatorUID string `json:"creatorUid"`
	} `json:"contents"`
	ExternalData []struct {
		UID  string `json:"uid"`
		Tool string `json:"tool"`
	} `json:"externalData"`
	Subscriptions []struct {
		ClientUID string `json:"clientUid"`
		Token     string `json:"token"`
	} `json:"subscriptions"`
}

type changeOut struct {
	Type            string `json:"type"`
	MissionName     string `json:"missionName"`
	CreatorUID      string `json:"creatorUid"`
	ContentUID      string `json:"contentUid"`
	ContentResource *struct {
		Hash string `json:"hash"`
	} `json:"contentResource"`
	ExternalData *struct {
		UID string `json:"uid"`
	} `json:"externalData"`
	LogEntry *struct {
		ID string `json:"id"`
	} `json:"logEntry"`
}

// call sends a request and decodes an envelope answer, failing unless the
// status is want.
func (e *env) call(t *testing.T, listener, method, path string, body any, want int, data any) envelopeOf {
	t.Helper()
	resp := e.do(t, listener, method, path, body)
	if resp.Status != want {
		t.Fatalf("%s %s %s: %d %s, want %d", listener, method, path, resp.Status, resp.Body, want)
	}
	var env envelopeOf
	if data == nil {
		return env
	}
	resp.JSON(t, &env)
	if env.Version != "3" || env.NodeID == "" {
		t.Fatalf("%s %s: not an api.md §2.13 envelope: %s", method, path, resp.Body)
	}
	if err := json.Unmarshal(env.Data, data); err != nil {
		t.Fatalf("%s %s: data: %v: %s", method, path, err, resp.Body)
	}
	return env
}

// mission reads one mission.
func (e *env) mission(t *testing.T, listener, name string) missionOut {
	t.Helper()
	var ms []missionOut
	e.call(t, listener, "GET", "/Marti/api/missions/"+url.PathEscape(name), nil, 200, &ms)
	if len(ms) != 1 || ms[0].Name != name {
		t.Fatalf("mission %s: %+v", name, ms)
	}
	return ms[0]
}

func (e *env) changes(t *testing.T, listener, name string) []changeOut {
	t.Helper()
	var cs []changeOut
	env := e.call(t, listener, "GET", "/Marti/api/missions/"+url.PathEscape(name)+"/changes", nil, 200, &cs)
	if env.Type != "MissionChange" {
		t.Fatalf("changes type %q", env.Type)
	}
	return cs
}

// missionNotice matches a mission notification of type typ about mission
// name whose detail contains every part.
func missionNotice(typ, name string, parts ...string) func(*cot.Event) bool {
	return func(ev *cot.Event) bool {
		d := string(ev.Detail.XML)
		if ev.Type != typ || !strings.Contains(d, `name="`+name+`"`) {
			return false
		}
		for _, p := range parts {
			if !strings.Contains(d, p) {
				return false
			}
		}
		return true
	}
}

// expect waits for a matching event on each client.
func expect(t *testing.T, what string, match func(*cot.Event) bool, clients ...*takclient.Client) *cot.Event {
	t.Helper()
	var last *cot.Event
	for i, c := range clients {
		ev, err := c.WaitFor(match, 10*time.Second)
		if err != nil {
			t.Fatalf("client %d: %s: %v", i, what, err)
		}
		last = ev
	}
	return last
}

// fence broadcasts a chat from sender and checks that c receives it
// without receiving anything matching forbidden first (the broker delivers
// to a client in order, so what was sent to c before the fence arrives
// before it).
func fence(t *testing.T, sender *takclient.Client, forbidden func(*cot.Event) bool, clients ...*takclient.Client) {
	t.Helper()
	uid := "fence-" + uuid.NewString()
	if err := sender.Send(takclient.Chat(uid, "fence")); err != nil {
		t.Fatal(err)
	}
	for i, c := range clients {
		_, err := c.WaitFor(func(ev *cot.Event) bool {
			if forbidden(ev) {
				t.Errorf("client %d received what it must not: %s %s", i, ev.Type, ev.Detail.XML)
			}
			return ev.UID == uid
		}, 10*time.Second)
		if err != nil {
			t.Fatalf("client %d: fence: %v", i, err)
		}
	}
}
