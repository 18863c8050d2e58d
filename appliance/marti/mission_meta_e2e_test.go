package marti_test

import (
	"net/url"
	"strings"
	"testing"
)

// TestMissionMetaRoutes drives the routes of a mission's settings on both
// listeners, by name and by guid: roles, the caller's own subscription,
// keywords, password, expiration, contacts, invitations and deletion, with
// their refusals (unknown mission or guid, not the owner, bad values), each
// of which changes nothing.
func TestMissionMetaRoutes(t *testing.T) {
	e := start(t, nil)
	for _, l := range both {
		t.Run(l, func(t *testing.T) {
			name := "meta-" + l
			p := "/Marti/api/missions/" + url.PathEscape(name)
			owner, member := "META-OWNER-"+l, "META-MEMBER-"+l
			var ms []missionOut
			e.call(t, l, "PUT", p+"?creatorUid="+owner, nil, 201, &ms)
			guid := ms[0].GUID
			if len(guid) != 36 {
				t.Fatalf("guid %q", guid)
			}
			e.call(t, l, "PUT", p+"/subscription?uid="+member, nil, 201, &struct{}{})

			// The caller's own subscription and role, by name and by guid.
			var sub struct {
				Token, ClientUID string
				Role             struct{ Type string }
			}
			for _, base := range []string{p, "/Marti/api/missions/guid/" + guid} {
				e.call(t, l, "GET", base+"/subscription?uid="+member, nil, 200, &sub)
				if sub.Token == "" || sub.ClientUID != member || sub.Role.Type != "MISSION_SUBSCRIBER" {
					t.Fatalf("subscription: %+v", sub)
				}
				var role struct {
					Type        string
					Permissions []string
				}
				e.call(t, l, "GET", base+"/role?clientUid="+owner, nil, 200, &role)
				if role.Type != "MISSION_OWNER" || len(role.Permissions) != 8 {
					t.Fatalf("owner role: %+v", role)
				}
			}
			if r := e.do(t, l, "GET", p+"/role", nil, "MissionAuthorization", "Bearer "+sub.Token); r.Status != 200 || !strings.Contains(string(r.Body), `"MISSION_SUBSCRIBER"`) {
				t.Fatalf("role by token: %d %s", r.Status, r.Body)
			}
			if r := e.do(t, l, "GET", p+"/subscription?uid=NOT-SUBSCRIBED-"+l, nil); r.Status != 404 {
				t.Fatalf("unsubscribed uid: %d %s", r.Status, r.Body)
			}

			// Roles: only the owner sets them; a bad role is 400; the last owner stays.
			for _, c := range []struct {
				query string
				want  int
			}{
				{"clientUid=" + member + "&role=MISSION_OWNER&creatorUid=" + member, 403},
				{"clientUid=" + member + "&role=BOSS&creatorUid=" + owner, 400},
				{"role=MISSION_READONLY_SUBSCRIBER&creatorUid=" + owner, 400},
				{"clientUid=NOBODY&role=MISSION_READONLY_SUBSCRIBER&creatorUid=" + owner, 404},
				{"clientUid=" + owner + "&role=MISSION_SUBSCRIBER&creatorUid=" + owner, 409},
				{"clientUid=" + member + "&role=MISSION_READONLY_SUBSCRIBER&creatorUid=" + owner, 200},
			} {
				if r := e.do(t, l, "PUT", p+"/role?"+c.query, nil); r.Status != c.want {
					t.Fatalf("PUT role?%s: %d %s, want %d", c.query, r.Status, r.Body, c.want)
				}
			}
			e.call(t, l, "GET", "/Marti/api/missions/guid/"+guid+"/subscription?uid="+member, nil, 200, &sub)
			if sub.Role.Type != "MISSION_READONLY_SUBSCRIBER" {
				t.Fatalf("role after PUT: %+v", sub)
			}

			// Keywords: a read-only subscriber may not; the body is a JSON list.
			if r := e.do(t, l, "PUT", p+"/keywords?creatorUid="+member, []string{"x"}); r.Status != 403 {
				t.Fatalf("read-only keywords: %d %s", r.Status, r.Body)
			}
			if r := e.do(t, l, "PUT", p+"/keywords?creatorUid="+owner, map[string]string{"a": "b"}); r.Status != 400 {
				t.Fatalf("object keywords: %d %s", r.Status, r.Body)
			}
			e.call(t, l, "PUT", "/Marti/api/missions/guid/"+guid+"/keywords?creatorUid="+owner, []string{"bridge", "recon", "bridge"}, 200, &ms)
			if strings.Join(ms[0].Keywords, ",") != "bridge,recon" {
				t.Fatalf("keywords: %v", ms[0].Keywords)
			}
			e.call(t, l, "DELETE", p+"/keywords/bridge?creatorUid="+owner, nil, 200, &ms)
			if r := e.do(t, l, "DELETE", p+"/keywords/bridge?creatorUid="+owner, nil); r.Status != 404 {
				t.Fatalf("absent keyword: %d %s", r.Status, r.Body)
			}
			if got := e.mission(t, l, name).Keywords; strings.Join(got, ",") != "recon" {
				t.Fatalf("keywords after delete: %v", got)
			}

			// Password: the owner's; a subscriber's attempt and an empty one change nothing.
			if r := e.do(t, l, "PUT", p+"/password?password=x&creatorUid="+member, nil); r.Status != 403 {
				t.Fatalf("member password: %d %s", r.Status, r.Body)
			}
			if r := e.do(t, l, "PUT", p+"/password?creatorUid="+owner, nil); r.Status != 400 {
				t.Fatalf("empty password: %d %s", r.Status, r.Body)
			}
			if e.mission(t, l, name).PasswordProtected {
				t.Fatal("a refused password was set")
			}
			if r := e.do(t, l, "PUT", p+"/password?password=s3cret&creatorUid="+owner, nil); r.Status != 200 {
				t.Fatalf("set password: %d %s", r.Status, r.Body)
			}
			if r := e.do(t, l, "PUT", p+"/subscription?uid=STRANGER-"+l+"&password=wrong", nil); r.Status != 403 {
				t.Fatalf("wrong password subscribes: %d %s", r.Status, r.Body)
			}
			// On 8443 the caller's certificate holds the owner's uid: it is subscribed.
			if r := e.do(t, l, "GET", p+"/cot", nil); l == both[0] && r.Status != 403 {
				t.Fatalf("protected cot: %d %s", r.Status, r.Body)
			}
			e.call(t, l, "PUT", p+"/subscription?uid=FRIEND-"+l+"&password=s3cret", nil, 201, &struct{}{})
			if r := e.do(t, l, "DELETE", p+"/password?creatorUid="+owner, nil); r.Status != 200 {
				t.Fatalf("remove password: %d %s", r.Status, r.Body)
			}
			if e.mission(t, l, name).PasswordProtected {
				t.Fatal("the password stayed")
			}

			// Expiration.
			for q, want := range map[string]int{"expiration=soon&creatorUid=" + owner: 400, "creatorUid=" + owner: 400,
				"expiration=-5&creatorUid=" + owner: 400, "expiration=1900000000&creatorUid=" + member: 403,
				"expiration=1900000000&creatorUid=" + owner: 200} {
				if r := e.do(t, l, "PUT", p+"/expiration?"+q, nil); r.Status != want {
					t.Fatalf("expiration?%s: %d %s, want %d", q, r.Status, r.Body, want)
				}
			}
			if got := e.mission(t, l, name).Expiration; got != 1900000000 {
				t.Fatalf("expiration %d", got)
			}

			// Contacts (a bare list) and invitations.
			if r := e.do(t, l, "GET", "/Marti/api/missions/guid/"+guid+"/contacts", nil); r.Status != 200 || !strings.HasPrefix(string(r.Body), "[") {
				t.Fatalf("contacts: %d %s", r.Status, r.Body)
			}
			e.call(t, l, "PUT", p+"/invite/clientUid/INVITED-"+l+"?creatorUid="+owner, nil, 200, &[]any{})
			var invs []struct{ Invitee, Token string }
			e.call(t, l, "GET", p+"/invitations", nil, 200, &invs)
			if len(invs) != 1 || invs[0].Invitee != "INVITED-"+l || invs[0].Token != "" {
				t.Fatalf("invitations: %+v", invs)
			}
			var names []string
			e.call(t, l, "GET", "/Marti/api/missions/all/invitations?clientUid=INVITED-"+l, nil, 200, &names)
			if len(names) != 1 || names[0] != name {
				t.Fatalf("all/invitations: %v", names)
			}
			if r := e.do(t, l, "GET", "/Marti/api/missions/all/invitations", nil); r.Status != 400 {
				t.Fatalf("all/invitations without clientUid: %d %s", r.Status, r.Body)
			}

			// Unknown mission, unknown and malformed guid.
			for path, want := range map[string]int{
				"/Marti/api/missions/no-such-mission/role":                                    404,
				"/Marti/api/missions/guid/00000000-0000-4000-8000-000000000000":               404,
				"/Marti/api/missions/guid/not-a-guid/cot":                                     400,
				"/Marti/api/missions/no-such-mission/subscription?uid=X":                      404,
				"/Marti/api/missions/guid/00000000-0000-4000-8000-000000000000/subscriptions": 404,
			} {
				if r := e.do(t, l, "GET", path, nil); r.Status != want {
					t.Fatalf("GET %s: %d %s, want %d", path, r.Status, r.Body, want)
				}
			}

			// Deletion: not by a subscriber, not deep; by the owner, by guid.
			if r := e.do(t, l, "DELETE", p+"?creatorUid="+member, nil); r.Status != 403 {
				t.Fatalf("member delete: %d %s", r.Status, r.Body)
			}
			if r := e.do(t, l, "DELETE", p+"?creatorUid="+owner+"&deepDelete=true", nil); r.Status != 400 {
				t.Fatalf("deep delete: %d %s", r.Status, r.Body)
			}
			e.mission(t, l, name)
			e.call(t, l, "DELETE", "/Marti/api/missions?guid="+guid+"&creatorUid="+owner, nil, 200, &ms)
			if ms[0].Name != name {
				t.Fatalf("deleted: %+v", ms)
			}
			if r := e.do(t, l, "GET", p, nil); r.Status != 404 {
				t.Fatalf("deleted mission: %d %s", r.Status, r.Body)
			}
			if r := e.do(t, l, "DELETE", p+"?creatorUid="+owner, nil); r.Status != 404 {
				t.Fatalf("delete again: %d %s", r.Status, r.Body)
			}
		})
	}
}
