package marti_test

import (
	"net/url"
	"strings"
	"testing"

	"outpost/appliance/cot"
)

// TestMissionRoleChangeNotice: when the owner gives a subscriber another
// role (PUT .../role, by name and by guid, on both listeners), that
// subscriber's CoT client (TCP on 8087, TLS on 8089) receives the official
// server's role change event (t-x-m-r, <mission type="INVITE"> with the
// mission's name, guid and tool and the new <role> with its permissions);
// a subscriber whose role did not change receives nothing, and a refused
// change (not the owner, a bad role, an unknown subscriber) sends nothing.
func TestMissionRoleChangeNotice(t *testing.T) {
	e := start(t, nil)
	c := dialMissionClients(t, e)
	for _, l := range both {
		t.Run(l, func(t *testing.T) {
			name := "roles " + l
			p := "/Marti/api/missions/" + url.PathEscape(name)
			var ms []missionOut
			e.call(t, l, "PUT", p+"?creatorUid=owner-r", nil, 201, &ms)
			guid := ms[0].GUID
			for _, uid := range []string{"sub-tcp", "sub-tls", "other"} {
				e.call(t, via(l, uid), "PUT", p+"/subscription?uid="+uid, nil, 201, &struct{}{})
			}
			isRole := func(ev *cot.Event) bool { return ev.Type == "t-x-m-r" }
			notice := func(role string) func(*cot.Event) bool {
				return missionNotice("t-x-m-r", name, `type="INVITE"`, `guid="`+guid+`"`, `tool="public"`, `<role type="`+role+`">`)
			}

			e.call(t, l, "PUT", p+"/role?clientUid=sub-tcp&role=MISSION_READONLY_SUBSCRIBER&creatorUid=owner-r", nil, 200, nil)
			ev := expect(t, "role change (tcp)", notice("MISSION_READONLY_SUBSCRIBER"), c.subTCP)
			d := string(ev.Detail.XML)
			if !strings.Contains(d, `<permission type="MISSION_READ"/>`) || strings.Contains(d, `MISSION_WRITE`) || strings.Contains(d, "authorUid") {
				t.Fatalf("role change detail: %s", d)
			}
			if ev.How != "h-g-i-g-o" || !ev.Stale.After(ev.Time) {
				t.Fatalf("role change event: how %q time %v stale %v", ev.How, ev.Time, ev.Stale)
			}
			e.call(t, l, "PUT", "/Marti/api/missions/guid/"+guid+"/role?clientUid=sub-tls&role=MISSION_OWNER&creatorUid=owner-r", nil, 200, nil)
			ev = expect(t, "role change by guid (tls)", notice("MISSION_OWNER"), c.subTLS)
			if !strings.Contains(string(ev.Detail.XML), `<permission type="MISSION_SET_ROLE"/>`) {
				t.Fatalf("owner's permissions: %s", ev.Detail.XML)
			}

			// Refusals send nothing; the others heard nothing of the changes.
			for _, q := range []string{
				"clientUid=other&role=MISSION_OWNER&creatorUid=other",
				"clientUid=other&role=BOSS&creatorUid=owner-r",
				"clientUid=NOBODY&role=MISSION_OWNER&creatorUid=owner-r",
			} {
				if r := e.do(t, via(l, "other"), "PUT", p+"/role?"+q, nil); r.Status < 400 {
					t.Fatalf("PUT role?%s: %d %s", q, r.Status, r.Body)
				}
			}
			fence(t, c.sender, isRole, c.other)
			fence(t, c.sender, isRole, c.subTCP, c.subTLS)
		})
	}
}
