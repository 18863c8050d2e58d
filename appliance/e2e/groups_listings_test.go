package e2e

// What the client API (8443 with each user's certificate, 8080 anonymous)
// and the management API list when groups are configured, and everything
// when they are not (access.md "Groups"), on the real binary: the layout
// and the helpers are in groups_test.go.

import (
	"net/http"
	"net/url"
	"slices"
	"sort"
	"strings"
	"testing"

	"outpost/appliance/cot"
	"outpost/internal/testkit"
)

// caller is one client of the client API: a user's certificate on 8443, or
// no credential on 8080 (hc nil).
type caller struct {
	name string
	hc   *http.Client
	base string
}

// martiUIDs reads the uids of /Marti/api/clientEndPoints and
// /Marti/api/contacts/all, sorted, checking that the first lists names its
// user where it has one.
func martiUIDs(t *testing.T, c caller) (endpoints, contacts []string) {
	t.Helper()
	var eps struct {
		Data []struct {
			UID        string `json:"uid"`
			Callsign   string `json:"callsign"`
			Username   string `json:"username"`
			LastStatus string `json:"lastStatus"`
		} `json:"data"`
	}
	getJSON(t, c.hc, c.base+"/Marti/api/clientEndPoints", &eps)
	endpoints = []string{}
	for _, e := range eps.Data {
		endpoints = append(endpoints, e.UID)
		if e.LastStatus != "Connected" {
			t.Errorf("%s's clientEndPoints: %s is %q", c.name, e.UID, e.LastStatus)
		}
		if own := strings.ToUpper(c.name) + "-1"; e.UID == own && e.Username != c.name {
			t.Errorf("%s's clientEndPoints: its own uid %s has username %q", c.name, e.UID, e.Username)
		}
	}
	var cs []struct {
		UID      string `json:"uid"`
		Callsign string `json:"callsign"`
	}
	getJSON(t, c.hc, c.base+"/Marti/api/contacts/all", &cs)
	contacts = []string{}
	for _, x := range cs {
		contacts = append(contacts, x.UID)
	}
	sort.Strings(endpoints)
	sort.Strings(contacts)
	return endpoints, contacts
}

// upload stores a file through POST /Marti/sync/upload for creatorUid and
// returns its hash.
func upload(t *testing.T, c caller, name, creatorUID, content string) string {
	t.Helper()
	r := testkit.Do(t, c.hc, "POST", c.base+"/Marti/sync/upload?filename="+url.QueryEscape(name)+"&creatorUid="+creatorUID,
		content, "Content-Type", "text/plain")
	var rec struct {
		Hash string `json:"Hash"`
		Name string `json:"Name"`
	}
	if r.Status != 200 {
		t.Fatalf("%s uploading %s: %d %s", c.name, name, r.Status, r.Body)
	}
	r.JSON(t, &rec)
	if rec.Hash == "" || rec.Name != name {
		t.Fatalf("%s's upload answered %s", c.name, r.Body)
	}
	return rec.Hash
}

// searchNames lists, sorted, the names /Marti/sync/search shows c.
func searchNames(t *testing.T, c caller) []string {
	t.Helper()
	var res struct {
		ResultCount int `json:"resultCount"`
		Results     []struct {
			Name string `json:"Name"`
		} `json:"results"`
	}
	getJSON(t, c.hc, c.base+"/Marti/sync/search", &res)
	out := []string{}
	for _, r := range res.Results {
		out = append(out, r.Name)
	}
	if res.ResultCount != len(out) {
		t.Errorf("%s's search: resultCount %d for %d results", c.name, res.ResultCount, len(out))
	}
	sort.Strings(out)
	return out
}

// mgmtUIDs reads the uids of the management API's /Clients and the
// clients and the items among items of /api/map, with token.
func (s *groupsServer) mgmtUIDs(t *testing.T, token string, items ...string) (clients, mapClients, mapItems []string) {
	t.Helper()
	var cl []struct {
		UID string `json:"uid"`
	}
	s.api(t, token, "GET", "/Clients", nil, 200).JSON(t, &cl)
	clients = []string{}
	for _, c := range cl {
		clients = append(clients, c.UID)
	}
	var m struct {
		Clients []struct {
			UID string `json:"uid"`
		} `json:"clients"`
		Items []struct {
			UID string `json:"uid"`
		} `json:"items"`
	}
	s.api(t, token, "GET", "/api/map", nil, 200).JSON(t, &m)
	mapClients, mapItems = []string{}, []string{}
	for _, c := range m.Clients {
		mapClients = append(mapClients, c.UID)
	}
	for _, it := range m.Items {
		if slices.Contains(items, it.UID) {
			mapItems = append(mapItems, it.UID)
		}
	}
	sort.Strings(clients)
	sort.Strings(mapClients)
	sort.Strings(mapItems)
	return clients, mapClients, mapItems
}

// TestGroupsClientAPI: with the grouped layout connected over CoT (and one
// anonymous client), each user's certificate on 8443 and an anonymous
// client on 8080 see their own groups (direction, active, bit position,
// type) in /Marti/api/groups/all and /user, the clients their OUT groups
// see in clientEndPoints and contacts/all, the data packages and missions
// of their groups (others' are 404, as missing ones), and the mission's
// creation notice reaches only the mission's groups over CoT. The
// management API's /Clients and /api/map show a user's token what its
// groups see and an administrator's everything.
func TestGroupsClientAPI(t *testing.T) {
	s := startGroupsServer(t)
	users, bits := s.createGroupedUsers(t)
	red, blue := bits["Red"], bits["Blue"]
	ann, bob, cy, dee := s.dialCoT(t, "ann", users["ann"]), s.dialCoT(t, "bob", users["bob"]),
		s.dialCoT(t, "cy", users["cy"]), s.dialCoT(t, "dee", users["dee"])
	anon := s.dialCoT(t, "anon1", nil)
	peers := []*peer{ann, bob, cy, dee, anon}
	markers := map[string]string{}
	for i, p := range peers {
		m := marker(p, 30+float64(i))
		p.send(t, m)
		p.sendSA(t, float64(10+i))
		markers[p.name] = m.UID
	}
	s.published(t, ann.uid, bob.uid, cy.uid, dee.uid, anon.uid)

	callers := map[string]caller{"anonymous": {"anonymous", nil, s.http}}
	for n, u := range users {
		callers[n] = caller{n, u.hc, s.https}
	}

	// Groups as ATAK reads them: OUT items, both directions with useCache.
	for _, c := range []struct {
		name          string
		plain, cached []string
	}{
		{"ann", []string{groupItem("Red", "OUT", red, true)}, []string{groupItem("Red", "OUT", red, true), groupItem("Red", "IN", red, true)}},
		{"bob", []string{groupItem("Blue", "OUT", blue, true)}, []string{groupItem("Blue", "OUT", blue, true), groupItem("Blue", "IN", blue, true)}},
		{"cy", []string{groupItem("Blue", "OUT", blue, true)}, []string{groupItem("Blue", "OUT", blue, true), groupItem("Red", "IN", red, true)}},
		{"dee", []string{groupItem("Red", "OUT", red, true), groupItem("Blue", "OUT", blue, true)},
			[]string{groupItem("Red", "OUT", red, true), groupItem("Red", "IN", red, true), groupItem("Blue", "OUT", blue, true), groupItem("Blue", "IN", blue, true)}},
		{"anonymous", []string{groupItem("__ANON__", "OUT", 2, true)}, []string{groupItem("__ANON__", "OUT", 2, true), groupItem("__ANON__", "IN", 2, true)}},
	} {
		cl := callers[c.name]
		var list martiGroups
		getJSON(t, cl.hc, cl.base+"/Marti/api/groups/all", &list)
		list.check(t, c.name+"'s groups/all", c.plain)
		getJSON(t, cl.hc, cl.base+"/Marti/api/groups/all?useCache=true", &list)
		list.check(t, c.name+"'s groups/all?useCache=true", c.cached)
		var user struct {
			Type string `json:"type"`
			Data struct {
				Username string       `json:"username"`
				Groups   []martiGroup `json:"groups"`
			} `json:"data"`
		}
		getJSON(t, cl.hc, cl.base+"/Marti/api/groups/user", &user)
		if wantName := strings.TrimPrefix(c.name, "anonymous"); user.Type != "com.bbn.marti.remote.groups.User" || user.Data.Username != wantName {
			t.Errorf("%s's groups/user: type %q username %q", c.name, user.Type, user.Data.Username)
		}
		martiGroups{Version: "3", Type: list.Type, Data: user.Data.Groups}.check(t, c.name+"'s groups/user", c.cached)
		var cache struct {
			Data bool `json:"data"`
		}
		getJSON(t, cl.hc, cl.base+"/Marti/api/groups/groupCacheEnabled", &cache)
		if !cache.Data {
			t.Errorf("%s: groupCacheEnabled is false", c.name)
		}
	}

	// The clients each caller's OUT groups see (a user sees itself when
	// its IN and OUT groups meet).
	for name, want := range map[string][]string{
		"ann": {"ANN-1", "CY-1", "DEE-1"}, "bob": {"BOB-1", "DEE-1"}, "cy": {"BOB-1", "DEE-1"},
		"dee": {"ANN-1", "BOB-1", "CY-1", "DEE-1"}, "anonymous": {"ANON1-1"},
	} {
		eps, contacts := martiUIDs(t, callers[name])
		if !slices.Equal(eps, want) || !slices.Equal(contacts, want) {
			t.Errorf("%s sees clientEndPoints %v and contacts %v, want %v", name, eps, contacts, want)
		}
	}

	// The latest event of a uid, from the history: kept with its sender's
	// IN groups (the history writes it a moment after it is routed).
	testkit.WaitFor(t, "ann's position in the history", func() bool {
		return testkit.Do(t, callers["dee"].hc, "GET", s.https+"/Marti/api/cot/xml/ANN-1", nil).Status == 200
	})
	for reader, want := range map[string]int{"ann": 200, "bob": 404, "cy": 404, "anonymous": 404} {
		c := callers[reader]
		if r := testkit.Do(t, c.hc, "GET", c.base+"/Marti/api/cot/xml/ANN-1", nil); r.Status != want {
			t.Errorf("%s reading ann's latest event: %d %.100s, want %d", reader, r.Status, r.Body, want)
		}
	}

	// Data packages: shared with the uploader's IN groups.
	files := map[string]string{"ann": "red-plan.txt", "bob": "blue-plan.txt", "anonymous": "open-plan.txt"}
	hashes := map[string]string{}
	for who, name := range files {
		creator := strings.ToUpper(who) + "-1"
		if who == "anonymous" {
			creator = "ANON-UPLOADER"
		}
		hashes[who] = upload(t, callers[who], name, creator, "the plan of "+who)
	}
	canRead := map[string][]string{ // reader: uploaders whose files it sees
		"ann": {"ann"}, "bob": {"bob"}, "cy": {"bob"}, "dee": {"ann", "bob"}, "anonymous": {"anonymous"},
	}
	for reader, from := range canRead {
		c := callers[reader]
		want := []string{}
		for _, f := range from {
			want = append(want, files[f])
		}
		sort.Strings(want)
		if got := searchNames(t, c); !slices.Equal(got, want) {
			t.Errorf("%s's search lists %v, want %v", reader, got, want)
		}
		for uploader, hash := range hashes {
			r := testkit.Do(t, c.hc, "GET", c.base+"/Marti/sync/content?hash="+hash, nil)
			switch {
			case slices.Contains(from, uploader) && (r.Status != 200 || string(r.Body) != "the plan of "+uploader):
				t.Errorf("%s downloading %s's file: %d %.100s", reader, uploader, r.Status, r.Body)
			case !slices.Contains(from, uploader) && r.Status != 404:
				t.Errorf("%s downloading %s's file: %d, want 404", reader, uploader, r.Status)
			}
		}
	}

	// A mission ann creates is in Red: visible to Red's readers only, and
	// its creation notice goes to Red over CoT.
	r := testkit.Do(t, callers["ann"].hc, "PUT", s.https+"/Marti/api/missions/red-ops?creatorUid=ANN-1&description=red+only", nil)
	var created struct {
		Data []struct {
			Name   string   `json:"name"`
			Groups []string `json:"groups"`
		} `json:"data"`
	}
	if r.Status != 201 {
		t.Fatalf("ann creating a mission: %d %s", r.Status, r.Body)
	}
	r.JSON(t, &created)
	if len(created.Data) != 1 || !slices.Equal(created.Data[0].Groups, []string{"Red"}) {
		t.Fatalf("ann's mission: %s", r.Body)
	}
	for reader, visible := range map[string]bool{"ann": true, "dee": true, "bob": false, "cy": false, "anonymous": false} {
		c := callers[reader]
		want := 404
		if visible {
			want = 200
		}
		if r := testkit.Do(t, c.hc, "GET", c.base+"/Marti/api/missions/red-ops", nil); r.Status != want {
			t.Errorf("%s reading ann's mission: %d %.100s, want %d", reader, r.Status, r.Body, want)
		}
		var list struct {
			Data []struct {
				Name string `json:"name"`
			} `json:"data"`
		}
		getJSON(t, c.hc, c.base+"/Marti/api/missions", &list)
		listed := slices.ContainsFunc(list.Data, func(m struct {
			Name string `json:"name"`
		}) bool {
			return m.Name == "red-ops"
		})
		if listed != visible {
			t.Errorf("%s's mission list has ann's mission: %v, want %v", reader, listed, visible)
		}
	}
	notice := func(ev *cot.Event) bool {
		return ev.Type == "t-x-m-n" && strings.Contains(string(ev.Detail.XML), "red-ops")
	}
	got := s.fence(t, peers...)
	for _, p := range peers {
		heard := containsEvent(got[p.name], notice)
		if want := p == ann || p == dee; heard != want {
			t.Errorf("%s received the creation notice of ann's mission: %v, want %v", p.name, heard, want)
		}
	}

	// The management API: a user's token shows what its groups see, the
	// administrator's everything. The history keeps the markers a moment
	// after they are routed.
	all := []string{}
	for _, m := range markers {
		all = append(all, m)
	}
	sort.Strings(all)
	testkit.WaitFor(t, "every marker on the administrator's map", func() bool {
		_, _, items := s.mgmtUIDs(t, s.admin, all...)
		return slices.Equal(items, all)
	})
	everyone := []string{"ANN-1", "ANON1-1", "BOB-1", "CY-1", "DEE-1"}
	for who, want := range map[string]struct{ clients, markers []string }{
		"admin": {everyone, all},
		"ann":   {[]string{"ANN-1", "CY-1", "DEE-1"}, []string{markers["ann"], markers["cy"], markers["dee"]}},
		"bob":   {[]string{"BOB-1", "DEE-1"}, []string{markers["bob"], markers["dee"]}},
		"cy":    {[]string{"BOB-1", "DEE-1"}, []string{markers["bob"], markers["dee"]}},
	} {
		token := s.admin
		if u := users[who]; u != nil {
			token = u.token
		}
		sort.Strings(want.markers)
		clients, mapClients, items := s.mgmtUIDs(t, token, all...)
		if !slices.Equal(clients, want.clients) || !slices.Equal(mapClients, want.clients) || !slices.Equal(items, want.markers) {
			t.Errorf("%s's token: /Clients %v, /api/map clients %v and markers %v; want clients %v and markers %v",
				who, clients, mapClients, items, want.clients, want.markers)
		}
	}
}

// TestGroupsUnconfigured: with no group created, certificate users (8089,
// 8443) and anonymous clients (8087, 8080) are all in __ANON__ both ways
// and everyone sees everyone, as on a server without groups: positions,
// the join replay, chat, client lists, data packages and missions.
func TestGroupsUnconfigured(t *testing.T) {
	s := startGroupsServer(t)
	users := s.createUsers(t, map[string]string{"ann": "", "bob": ""})
	ann, anon := s.dialCoT(t, "ann", users["ann"]), s.dialCoT(t, "anon1", nil)
	ann.sendSA(t, 10)
	anon.sendSA(t, 11)
	s.published(t, ann.uid, anon.uid)
	bob := s.dialCoT(t, "bob", users["bob"]) // joins last: the replay brings both
	bob.sendSA(t, 12)
	s.published(t, bob.uid)
	peers := []*peer{ann, bob, anon}
	chats := map[string]string{}
	for _, p := range peers {
		c := geoChat(p, "hello from "+p.name)
		p.send(t, c)
		chats[p.name] = c.UID
	}
	bob.await(t, "ann's chat", byUID(chats["ann"]))
	ann.await(t, "bob's chat", byUID(chats["bob"]))
	ann.await(t, "the anonymous chat", byUID(chats["anon1"]))
	got := s.fence(t, peers...)
	others := map[string][]string{"ann": {"bob", "anon1"}, "bob": {"ann", "anon1"}, "anon1": {"ann", "bob"}}
	for _, p := range peers {
		wantAmong(t, "position reports", p, got[p.name], uidsOf(peers...), others[p.name])
		wantAmong(t, "chat", p, got[p.name], chats, others[p.name])
	}

	var groups struct {
		Groups []struct {
			Name   string `json:"name"`
			Bitpos int    `json:"bitpos"`
		} `json:"groups"`
	}
	s.api(t, s.admin, "GET", "/api/groups", nil, 200).JSON(t, &groups)
	if len(groups.Groups) != 1 || groups.Groups[0].Name != "__ANON__" || groups.Groups[0].Bitpos != 2 {
		t.Errorf("groups: %+v, want __ANON__ alone on bit 2", groups.Groups)
	}
	callers := []caller{{"ann", users["ann"].hc, s.https}, {"bob", users["bob"].hc, s.https}, {"anonymous", nil, s.http}}
	everyone := []string{"ANN-1", "ANON1-1", "BOB-1"}
	for _, c := range callers {
		var list martiGroups
		getJSON(t, c.hc, c.base+"/Marti/api/groups/all", &list)
		list.check(t, c.name+"'s groups/all", []string{groupItem("__ANON__", "OUT", 2, true)})
		eps, contacts := martiUIDs(t, c)
		if !slices.Equal(eps, everyone) || !slices.Equal(contacts, everyone) {
			t.Errorf("%s sees clientEndPoints %v and contacts %v, want %v", c.name, eps, contacts, everyone)
		}
	}
	hash := upload(t, callers[0], "ann-plan.txt", "ANN-1", "ann's plan")
	if r := testkit.Do(t, callers[0].hc, "PUT", s.https+"/Marti/api/missions/open-ops?creatorUid=ANN-1", nil); r.Status != 201 {
		t.Fatalf("ann creating a mission: %d %s", r.Status, r.Body)
	}
	for _, c := range callers {
		if got := searchNames(t, c); !slices.Equal(got, []string{"ann-plan.txt"}) {
			t.Errorf("%s's search lists %v", c.name, got)
		}
		if r := testkit.Do(t, c.hc, "GET", c.base+"/Marti/sync/content?hash="+hash, nil); r.Status != 200 || string(r.Body) != "ann's plan" {
			t.Errorf("%s downloading ann's file: %d %.100s", c.name, r.Status, r.Body)
		}
		if r := testkit.Do(t, c.hc, "GET", c.base+"/Marti/api/missions/open-ops", nil); r.Status != 200 {
			t.Errorf("%s reading ann's mission: %d %.100s", c.name, r.Status, r.Body)
		}
	}
	if clients, _, _ := s.mgmtUIDs(t, users["bob"].token); !slices.Equal(clients, everyone) {
		t.Errorf("bob's token: /Clients %v, want %v", clients, everyone)
	}
}
