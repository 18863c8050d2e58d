package marti_test

import (
	"net/url"
	"strings"
	"testing"

	"outpost/appliance/cot"
	"outpost/appliance/netx"
	"outpost/appliance/takclient"
	"outpost/internal/testkit"
)

// missionClients are CoT clients on both CoT listeners: two that subscribe
// (TCP and TLS), one that never does, and one that sends fences. The TLS
// client holds alice's certificate, the one the HTTPS client holds: its uid
// sub-tls is alice's (access.md "Uids belong to identities"), so what is
// done for it goes through HTTPS (via).
type missionClients struct {
	subTCP, subTLS, other, sender *takclient.Client
}

// via is the listener a request acting for uid goes to: HTTPS for the TLS
// client's uid, which is bound to its certificate; l for the others.
func via(l, uid string) string {
	if uid == "sub-tls" {
		return netx.ListenerHTTPS
	}
	return l
}

func dialMissionClients(t *testing.T, e *env) missionClients {
	t.Helper()
	c := missionClients{subTCP: e.DialTCP(t), subTLS: e.DialTLS(t, e.cert), other: e.DialTCP(t), sender: e.DialTCP(t)}
	c.subTCP.Send(takclient.SA("sub-tcp", "SUBTCP", 59.1, 18.1))
	c.subTLS.Send(takclient.SA("sub-tls", "SUBTLS", 59.2, 18.2))
	c.other.Send(takclient.SA("other", "OTHER", 59.3, 18.3))
	c.sender.Send(takclient.SA("sender", "SENDER", 59.4, 18.4))
	testkit.WaitFor(t, "four clients identified", func() bool { return len(e.Broker().Clients()) == 4 })
	return c
}

// TestMissionLifecycle drives every mission route of api.md §4.4 on both
// listeners with CoT clients on both CoT listeners: create and update,
// list and get, subscribe (201, token) and unsubscribe (disconnectOnly
// keeps the token), contents by hash and uid, a mission package, log
// entries, external data, CoT sent to the mission, parent and children,
// invitations, the CoT list and the change history, and the notifications
// subscribed clients receive while the unsubscribed one does not.
func TestMissionLifecycle(t *testing.T) {
	e := start(t, nil)
	c := dialMissionClients(t, e)
	subs := []*takclient.Client{c.subTCP, c.subTLS}
	for _, l := range both {
		t.Run(l, func(t *testing.T) {
			name := "ops " + l // a space: names are path-escaped
			p := "/Marti/api/missions/" + url.PathEscape(name)
			notice := func(typ string, parts ...string) func(*cot.Event) bool {
				return missionNotice(typ, name, parts...)
			}
			anyChange := func(ev *cot.Event) bool { return strings.HasPrefix(ev.Type, "t-x-m-c") }

			// Create: 201, the creator's token; everyone hears of it.
			var ms []missionOut
			env := e.call(t, l, "PUT", p+"?creatorUid=owner-1&description=first&tool=public&group=__ANON__", nil, 201, &ms)
			if env.Type != "Mission" || len(ms) != 1 || ms[0].Token == "" || ms[0].CreatorUID != "owner-1" || ms[0].GUID == "" ||
				ms[0].Description != "first" || ms[0].DefaultRole.Type != "MISSION_SUBSCRIBER" || len(ms[0].Groups) != 1 {
				t.Fatalf("create: %+v", ms)
			}
			expect(t, "MissionCreatedNotification", notice("t-x-m-n", `type="CREATE"`, `authorUid="owner-1"`), c.subTCP, c.subTLS, c.other)

			// Update by the owner; refused to anyone else.
			ms = nil
			e.call(t, l, "PUT", p+"?creatorUid=owner-1&description=second", nil, 200, &ms)
			if ms[0].Description != "second" || ms[0].Token != "" {
				t.Fatalf("update: %+v", ms[0])
			}
			expect(t, "MissionCreatedNotification on update", notice("t-x-m-n", `type="CREATE"`), c.subTCP, c.other)
			e.call(t, l, "PUT", p+"?creatorUid=sub-tcp&description=hijack", nil, 403, nil)
			var list []missionOut
			e.call(t, l, "GET", "/Marti/api/missions", nil, 200, &list)
			found := false
			for _, m := range list {
				found = found || (m.Name == name && m.Description == "second")
			}
			if !found {
				t.Fatalf("list: %+v", list)
			}

			// Subscribe both CoT clients: 201 with a token each.
			tokens := map[string]string{}
			for _, uid := range []string{"sub-tcp", "sub-tls"} {
				var sub struct {
					Token, ClientUID string
					Role             struct{ Type string }
				}
				env := e.call(t, via(l, uid), "PUT", p+"/subscription?uid="+uid, nil, 201, &sub)
				if env.Type != "com.bbn.marti.sync.model.MissionSubscription" || sub.Token == "" || sub.ClientUID != uid || sub.Role.Type != "MISSION_SUBSCRIBER" {
					t.Fatalf("subscribe %s: %+v", uid, sub)
				}
				tokens[uid] = sub.Token
			}

			// Contents: a file by hash and a uid; one notification each.
			file := []byte("mission file on " + l)
			up := e.do(t, l, "POST", "/Marti/sync/upload?filename=notes-"+l+".txt&creatorUid=sub-tcp", file, "Content-Type", "text/plain")
			if up.Status != 200 {
				t.Fatalf("upload: %d %s", up.Status, up.Body)
			}
			hash := sha(file)
			env = e.call(t, l, "PUT", p+"/contents?creatorUid=sub-tcp", map[string]any{"hashes": []string{hash}, "uids": []string{"marker-" + l}}, 200, &ms)
			if env.Type != "Mission" || len(ms[0].Contents) != 1 || ms[0].Contents[0].Data.Hash != hash || ms[0].Contents[0].CreatorUID != "sub-tcp" ||
				len(ms[0].UIDs) != 1 || ms[0].UIDs[0].Data != "marker-"+l {
				t.Fatalf("contents: %+v", ms[0])
			}
			expect(t, "content notification (hash)", notice("t-x-m-c", "<hash>"+hash+"</hash>", "<type>ADD_CONTENT</type>"), subs...)
			expect(t, "content notification (uid)", notice("t-x-m-c", "<contentUid>marker-"+l+"</contentUid>"), subs...)
			fence(t, c.sender, anyChange, c.other)

			// Log entries: create 201, update, list with secago/start/end, delete.
			var entry struct {
				ID, Content, CreatorUID string
				MissionNames            []string
			}
			env = e.call(t, via(l, "sub-tls"), "POST", "/Marti/api/missions/logs/entries",
				map[string]any{"content": "contact at the bridge", "creatorUid": "sub-tls", "missionNames": []string{name}, "keywords": []string{"k"}}, 201, &entry)
			if env.Type != "com.bbn.marti.sync.model.LogEntry" || entry.ID == "" || entry.Content != "contact at the bridge" || len(entry.MissionNames) != 1 {
				t.Fatalf("log create: %+v", entry)
			}
			expect(t, "log notification", notice("t-x-m-c-l", `id="`+entry.ID+`"`), subs...)
			e.call(t, via(l, "sub-tls"), "PUT", "/Marti/api/missions/logs/entries",
				map[string]any{"mission_log_data": map[string]any{"id": entry.ID, "content": "bridge clear", "creatorUid": "sub-tls", "missionNames": []string{name}}}, 200, &entry)
			if entry.Content != "bridge clear" {
				t.Fatalf("log update: %+v", entry)
			}
			for q, want := range map[string]int{"": 1, "?secago=3600": 1, "?start=2000-01-01T00:00:00Z&end=2000-01-02T00:00:00.000Z": 0} {
				var logs []struct{ ID, Content string }
				e.call(t, l, "GET", p+"/log"+q, nil, 200, &logs)
				if len(logs) != want || (want == 1 && (logs[0].ID != entry.ID || logs[0].Content != "bridge clear")) {
					t.Fatalf("log %q: %+v, want %d", q, logs, want)
				}
			}
			var all []struct{ ID string }
			e.call(t, l, "GET", "/Marti/api/missions/all/logs", nil, 200, &all)
			if !containsID(all, entry.ID) {
				t.Fatalf("all logs: %+v", all)
			}
			// An anonymous client may not remove the entry of alice's uid;
			// alice may.
			e.call(t, netx.ListenerHTTP, "DELETE", "/Marti/api/missions/logs/entries/"+entry.ID, nil, 403, nil)
			e.call(t, via(l, "sub-tls"), "DELETE", "/Marti/api/missions/logs/entries/"+entry.ID, nil, 200, nil)
			var none []struct{ ID string }
			if e.call(t, l, "GET", p+"/log", nil, 200, &none); len(none) != 0 {
				t.Fatalf("log after delete: %+v", none)
			}

			// External data.
			e.call(t, via(l, "sub-tls"), "POST", p+"/externaldata?creatorUid=sub-tls", map[string]any{"uid": "ext-" + l, "name": "board", "tool": "web",
				"urlData": "https://example.org/d", "urlView": "https://example.org/v", "notes": "n"}, 200, &struct{}{})
			expect(t, "external data notification", notice("t-x-m-c-e", "<uid>ext-"+l+"</uid>"), subs...)

			// CoT sent to the mission reaches its subscribers only, and its
			// uid joins the mission.
			chatUID := "mchat-" + l
			c.subTLS.Send(takclient.Chat(chatUID, "to the mission", cot.Dest{Mission: name}))
			expect(t, "the mission's CoT", func(ev *cot.Event) bool { return ev.UID == chatUID }, c.subTCP)
			fence(t, c.sender, func(ev *cot.Event) bool { return ev.UID == chatUID }, c.other)
			testkit.WaitFor(t, "the CoT uid in the mission and its CoT list", func() bool {
				m := e.mission(t, l, name)
				cotList := e.do(t, l, "GET", p+"/cot", nil)
				return len(m.UIDs) == 2 && strings.Contains(string(cotList.Body), `uid="`+chatUID+`"`)
			})
			cotList := e.do(t, l, "GET", p+"/cot", nil)
			if !strings.HasPrefix(cotList.Header.Get("Content-Type"), "application/xml") || !strings.Contains(string(cotList.Body), "<events>") ||
				strings.Contains(string(cotList.Body), "<marti") {
				t.Fatalf("cot list: %s", cotList.Body)
			}

			// A new subscriber receives the mission's latest events.
			e.call(t, l, "PUT", p+"/subscription?uid=other", nil, 201, &struct{}{})
			expect(t, "the mission's events on subscribe", func(ev *cot.Event) bool { return ev.UID == chatUID }, c.other)
			e.call(t, l, "DELETE", p+"/subscription?uid=other", nil, 200, nil)

			// Subscription lists.
			var uids []string
			e.call(t, l, "GET", p+"/subscriptions", nil, 200, &uids)
			if strings.Join(uids, ",") != "owner-1,sub-tcp,sub-tls" {
				t.Fatalf("subscriptions: %v", uids)
			}
			var roles []struct {
				ClientUID, Token string
				Role             struct{ Type string }
			}
			e.call(t, l, "GET", p+"/subscriptions/roles", nil, 200, &roles)
			if len(roles) != 3 || roles[0].Role.Type != "MISSION_OWNER" || roles[1].Role.Type != "MISSION_SUBSCRIBER" || roles[0].Token != "" {
				t.Fatalf("roles: %+v", roles)
			}
			var allSubs []struct{ MissionName, ClientUID string }
			e.call(t, l, "GET", "/Marti/api/missions/all/subscriptions", nil, 200, &allSubs)
			n := 0
			for _, s := range allSubs {
				if s.MissionName == name {
					n++
				}
			}
			if n != 3 {
				t.Fatalf("all subscriptions: %+v", allSubs)
			}

			// disconnectOnly: no more notifications, the subscription kept.
			e.call(t, l, "DELETE", p+"/subscription?uid=sub-tcp&disconnectOnly=true", nil, 200, nil)
			e.call(t, via(l, "sub-tls"), "PUT", p+"/contents?creatorUid=sub-tls", map[string]any{"uids": []string{"marker2-" + l}}, 200, &ms)
			expect(t, "content notification to the one still subscribed", notice("t-x-m-c", "marker2-"+l), c.subTLS)
			fence(t, c.sender, anyChange, c.subTCP)
			var again struct{ Token string }
			e.call(t, l, "PUT", p+"/subscription?uid=sub-tcp", nil, 201, &again)
			if again.Token != tokens["sub-tcp"] {
				t.Fatalf("disconnectOnly lost the subscription: token %q, was %q", again.Token, tokens["sub-tcp"])
			}
			e.call(t, l, "DELETE", p+"/subscription?uid=sub-tcp", nil, 200, nil)
			e.call(t, l, "PUT", p+"/subscription?uid=sub-tcp", nil, 201, &again)
			if again.Token == tokens["sub-tcp"] {
				t.Fatalf("unsubscribe kept the token")
			}

			// Parent and children.
			child := "child " + l
			cp := "/Marti/api/missions/" + url.PathEscape(child)
			e.call(t, l, "PUT", cp+"?creatorUid=owner-1", nil, 201, &ms)
			e.call(t, l, "PUT", cp+"/parent/"+url.PathEscape(name)+"?creatorUid=owner-1", nil, 200, nil)
			var kids []missionOut
			if e.call(t, l, "GET", p+"/children", nil, 200, &kids); len(kids) != 1 || kids[0].Name != child {
				t.Fatalf("children: %+v", kids)
			}
			if e.call(t, l, "GET", cp+"/parent", nil, 200, &ms); ms[0].Name != name {
				t.Fatalf("parent: %+v", ms)
			}
			e.call(t, l, "PUT", p+"/parent/"+url.PathEscape(child)+"?creatorUid=owner-1", nil, 400, nil) // a cycle
			e.call(t, l, "DELETE", cp+"/parent?creatorUid=owner-1", nil, 200, nil)
			e.call(t, l, "GET", cp+"/parent", nil, 404, nil)

			// Invitations: the PUT and POST forms reach the invitee.
			var invs []struct {
				MissionName, Invitee, Type, Token string
				Role                              struct{ Type string }
			}
			e.call(t, l, "PUT", p+"/invite/clientUid/other?creatorUid=owner-1&role=MISSION_READONLY_SUBSCRIBER", nil, 200, &invs)
			if len(invs) != 1 || invs[0].Token == "" || invs[0].Role.Type != "MISSION_READONLY_SUBSCRIBER" {
				t.Fatalf("invite: %+v", invs)
			}
			ev := expect(t, "invitation", notice("t-x-m-i", `type="INVITE"`, `token="`+invs[0].Token+`"`, `type="MISSION_READONLY_SUBSCRIBER"`), c.other)
			if !strings.Contains(string(ev.Detail.XML), `<permission type="MISSION_READ"/>`) {
				t.Fatalf("invitation permissions: %s", ev.Detail.XML)
			}
			e.call(t, l, "POST", p+"/invite?creatorUid=owner-1", map[string]any{"invitee": "sub-tls", "role": map[string]string{"type": "MISSION_SUBSCRIBER"}}, 200, &invs)
			expect(t, "invitation (POST)", notice("t-x-m-i", `type="MISSION_SUBSCRIBER"`), c.subTLS)

			// A mission package uploaded into the mission.
			pkg := missionPackage(t, "pkg-"+l)
			resp := e.do(t, via(l, "sub-tls"), "PUT", p+"/contents/missionpackage?filename=pkg-"+l+".zip&creatorUid=sub-tls", pkg, "Content-Type", "application/zip")
			if resp.Status != 200 {
				t.Fatalf("missionpackage: %d %s", resp.Status, resp.Body)
			}
			expect(t, "missionpackage notification", notice("t-x-m-c", "<hash>"+sha(pkg)+"</hash>"), subs...)
			m := e.mission(t, l, name)
			if len(m.Contents) != 2 || m.Contents[1].Data.Filename != "pkg-"+l+".zip" || len(m.ExternalData) != 1 || len(m.Subscriptions) != 3 || m.Subscriptions[0].Token != "" {
				t.Fatalf("mission after package: %+v", m)
			}

			// Removal by hash and by uid.
			e.call(t, l, "DELETE", p+"/contents?hash="+hash+"&creatorUid=owner-1", nil, 200, &ms)
			e.call(t, l, "DELETE", p+"/contents?uid=marker-"+l+"&creatorUid=owner-1", nil, 200, &ms)
			if len(ms[0].Contents) != 1 || len(ms[0].UIDs) != 2 {
				t.Fatalf("after removal: %+v", ms[0])
			}

			// The change history has every change.
			var kinds []string
			for _, ch := range e.changes(t, l, name) {
				k := ch.Type
				switch {
				case ch.ContentResource != nil:
					k += ":file"
				case ch.ContentUID != "":
					k += ":uid:" + ch.ContentUID
				case ch.LogEntry != nil:
					k += ":log"
				case ch.ExternalData != nil:
					k += ":external"
				}
				if ch.MissionName != name {
					t.Fatalf("change of another mission: %+v", ch)
				}
				kinds = append(kinds, k)
			}
			want := strings.Join([]string{"CREATE_MISSION", "ADD_CONTENT:file", "ADD_CONTENT:uid:marker-" + l, "ADD_CONTENT:log", "ADD_CONTENT:log",
				"REMOVE_CONTENT:log", "ADD_CONTENT:external", "ADD_CONTENT:uid:" + chatUID, "ADD_CONTENT:uid:marker2-" + l, "ADD_CONTENT:file",
				"REMOVE_CONTENT:file", "REMOVE_CONTENT:uid:marker-" + l}, ",")
			if got := strings.Join(kinds, ","); got != want {
				t.Fatalf("changes:\n got %s\nwant %s", got, want)
			}
		})
	}

	// Invitations by listener: none over HTTP (no client identity), the
	// client's own over HTTPS.
	var invs []struct{ MissionName string }
	e.call(t, netx.ListenerHTTP, "GET", "/Marti/api/missions/invitations?clientUid=other", nil, 200, &invs)
	if len(invs) != 0 {
		t.Fatalf("HTTP invitations: %+v", invs)
	}
	e.call(t, netx.ListenerHTTPS, "GET", "/Marti/api/missions/invitations?clientUid=other", nil, 200, &invs)
	if len(invs) != 2 {
		t.Fatalf("HTTPS invitations: %+v", invs)
	}
	e.call(t, netx.ListenerHTTPS, "GET", "/Marti/api/missions/invitations", nil, 400, nil)
}

func containsID(l []struct{ ID string }, id string) bool {
	for _, x := range l {
		if x.ID == id {
			return true
		}
	}
	return false
}
