package e2e

// What reaches whom over CoT when groups are configured (access.md
// "Groups"), on the real binary: the layout and the helpers are in
// groups_test.go.

import (
	"net/http"
	"testing"

	"outpost/appliance/cot"
	"outpost/internal/testkit"
)

// uidsOf maps each peer's name to its position report uid.
func uidsOf(peers ...*peer) map[string]string {
	m := map[string]string{}
	for _, p := range peers {
		m[p.name] = p.uid
	}
	return m
}

// saAt matches p's position report at latitude lat.
func saAt(p *peer, lat float64) func(*cot.Event) bool {
	return func(ev *cot.Event) bool { return ev.UID == p.uid && ev.Type == "a-f-G-U-C" && ev.Point.Lat == lat }
}

// TestGroupsDeliveryOverCoT: four certificate users over 8089 and two
// anonymous clients over 8087. Position reports, the latest positions
// replayed to a client that joins, a chat to All Chat Rooms and a marker
// from everyone each reach exactly the receivers whose OUT groups meet the
// sender's IN groups; a chat addressed to callsigns reaches only the named
// receivers the sender's groups reach; a departure goes where the leaver's
// position went, and only those receivers' client lists keep it;
// anonymous clients and grouped users never see each other.
func TestGroupsDeliveryOverCoT(t *testing.T) {
	s := startGroupsServer(t)
	users, _ := s.createGroupedUsers(t)

	// The grouped users first, then two anonymous clients (their joins
	// replay no grouped position), then dee (its join replays everyone
	// else's latest position its OUT groups see, and no anonymous one).
	ann, bob, cy := s.dialCoT(t, "ann", users["ann"]), s.dialCoT(t, "bob", users["bob"]), s.dialCoT(t, "cy", users["cy"])
	for i, p := range []*peer{ann, bob, cy} {
		p.sendSA(t, float64(10+i))
	}
	s.published(t, ann.uid, bob.uid, cy.uid)
	anon1 := s.dialCoT(t, "anon1", nil)
	anon1.sendSA(t, 13)
	s.published(t, anon1.uid)
	anon2 := s.dialCoT(t, "anon2", nil)
	anon2.sendSA(t, 14)
	s.published(t, anon2.uid)
	dee := s.dialCoT(t, "dee", users["dee"])
	dee.sendSA(t, 15)
	s.published(t, dee.uid)
	peers := []*peer{ann, bob, cy, dee, anon1, anon2}
	got := s.fence(t, peers...)
	for _, p := range peers {
		wantAmong(t, "position reports", p, got[p.name], uidsOf(peers...), sees[p.name])
	}

	// A chat to All Chat Rooms and a marker from everyone.
	chats, markers := map[string]string{}, map[string]string{}
	for i, p := range peers {
		c, m := geoChat(p, "hello from "+p.name), marker(p, 30+float64(i))
		p.send(t, c)
		p.send(t, m)
		chats[p.name], markers[p.name] = c.UID, m.UID
	}
	// Each sender's marker reached a receiver that sees it, so its chat and
	// marker were routed before the fence.
	witness := map[string]*peer{"ann": dee, "bob": dee, "cy": dee, "dee": ann, "anon1": anon2, "anon2": anon1}
	for _, p := range peers {
		witness[p.name].await(t, p.name+"'s marker", byUID(markers[p.name]))
	}
	got = s.fence(t, peers...)
	for _, p := range peers {
		wantAmong(t, "chat to All Chat Rooms", p, got[p.name], chats, sees[p.name])
		wantAmong(t, "markers", p, got[p.name], markers, sees[p.name])
	}

	// Directed chats name one receiver the sender's groups reach and one
	// they do not: <dest callsign> never crosses groups, and no one else
	// gets a directed message.
	directed := map[string]string{}
	for _, d := range []struct {
		from   *peer
		to     []string
		reader *peer
	}{
		{ann, []string{bob.callsign, dee.callsign}, dee},
		{bob, []string{ann.callsign, cy.callsign}, cy},
		{anon1, []string{dee.callsign, anon2.callsign}, anon2},
	} {
		c := geoChat(d.from, "only for "+d.to[0]+" and "+d.to[1], d.to...)
		d.from.send(t, c)
		ev := d.reader.await(t, d.from.name+"'s directed chat", byUID(c.UID))
		if ev.Detail.Marti != nil {
			t.Errorf("%s's directed chat reached %s with its <marti> addressing: %s", d.from.name, d.reader.name, ev.Detail.XML)
		}
		directed[d.from.name] = c.UID
	}
	got = s.fence(t, peers...)
	wantDirected := map[string][]string{"dee": {"ann"}, "cy": {"bob"}, "anon2": {"anon1"}}
	for _, p := range peers {
		wantAmong(t, "directed chat", p, got[p.name], directed, wantDirected[p.name])
	}

	// bob leaves: its departure goes where its position went (cy, dee),
	// and only their client lists show it disconnected.
	bob.c.Close()
	departed := func(ev *cot.Event) bool {
		return ev.Type == "t-x-d-d" && len(ev.Detail.Links) == 1 && ev.Detail.Links[0].UID == bob.uid
	}
	dee.await(t, "bob's departure", departed)
	rest := []*peer{ann, cy, dee, anon1, anon2}
	got = s.fence(t, rest...)
	for _, p := range rest {
		if heard, want := containsEvent(got[p.name], departed), p == cy || p == dee; heard != want {
			t.Errorf("%s received bob's departure: %v, want %v", p.name, heard, want)
		}
	}
	for _, c := range []struct {
		name   string
		hc     *http.Client
		base   string
		listed bool
	}{{"dee", users["dee"].hc, s.https, true}, {"cy", users["cy"].hc, s.https, true}, {"ann", users["ann"].hc, s.https, false}, {"anonymous", nil, s.http, false}} {
		var eps struct {
			Data []struct {
				UID        string `json:"uid"`
				LastStatus string `json:"lastStatus"`
			} `json:"data"`
		}
		getJSON(t, c.hc, c.base+"/Marti/api/clientEndPoints", &eps)
		status := ""
		for _, e := range eps.Data {
			if e.UID == bob.uid {
				status = e.LastStatus
			}
		}
		if want := map[bool]string{true: "Disconnected", false: ""}[c.listed]; status != want {
			t.Errorf("%s's clientEndPoints list bob as %q, want %q", c.name, status, want)
		}
	}
}

// TestGroupsChannelToggle: ATAK's channel switch, PUT
// /Marti/api/groups/active over 8443 with the list GET groups/all gave,
// applies at once to the user's open CoT connection. With Blue off, dee
// neither hears Blue nor reaches it; with Blue on again it receives at once
// the latest position of those it sees again (bob moved meanwhile), they
// receive its own, and Blue's chat reaches it again.
func TestGroupsChannelToggle(t *testing.T) {
	s := startGroupsServer(t)
	users, bits := s.createGroupedUsers(t)
	ann, bob, cy, dee := s.dialCoT(t, "ann", users["ann"]), s.dialCoT(t, "bob", users["bob"]),
		s.dialCoT(t, "cy", users["cy"]), s.dialCoT(t, "dee", users["dee"])
	peers := []*peer{ann, bob, cy, dee}
	for i, p := range peers {
		p.sendSA(t, float64(10+i))
	}
	s.published(t, ann.uid, bob.uid, cy.uid, dee.uid)
	got := s.fence(t, peers...)
	for _, p := range peers {
		wantAmong(t, "position reports before the switch", p, got[p.name], uidsOf(peers...), sees[p.name])
	}

	deeAPI := users["dee"].hc
	switchBlue := func(on bool) {
		t.Helper()
		var list martiGroups
		getJSON(t, deeAPI, s.https+"/Marti/api/groups/all?useCache=true", &list)
		n := 0
		for i := range list.Data {
			if list.Data[i].Name == "Blue" {
				list.Data[i].Active = on
				n++
			}
		}
		if n != 2 {
			t.Fatalf("dee's groups list Blue %d times, want IN and OUT: %+v", n, list.Data)
		}
		if r := testkit.Do(t, deeAPI, "PUT", s.https+"/Marti/api/groups/active?clientUid="+dee.uid, list.Data); r.Status != 200 {
			t.Fatalf("PUT groups/active: %d %s", r.Status, r.Body)
		}
		getJSON(t, deeAPI, s.https+"/Marti/api/groups/all?useCache=true", &list)
		want := []string{
			groupItem("Blue", "IN", bits["Blue"], on), groupItem("Blue", "OUT", bits["Blue"], on),
			groupItem("Red", "IN", bits["Red"], true), groupItem("Red", "OUT", bits["Red"], true),
		}
		list.check(t, "dee's groups after the switch", want)
	}

	switchBlue(false)
	// Blue off: bob's chat and new position do not reach dee; dee's chat
	// and new position reach Red (ann) but not Blue (bob, cy).
	bobChat, deeChat := geoChat(bob, "blue only"), geoChat(dee, "red only")
	bob.send(t, bobChat)
	bob.sendSA(t, 42)
	dee.send(t, deeChat)
	dee.sendSA(t, 43)
	cy.await(t, "bob's new position", saAt(bob, 42))
	ann.await(t, "dee's new position", saAt(dee, 43))
	got = s.fence(t, peers...)
	wantAmong(t, "Blue switched off", dee, got["dee"], map[string]string{"bob": bobChat.UID, "bob SA": bob.uid}, nil)
	for _, p := range []*peer{bob, cy} {
		wantAmong(t, "Blue switched off", p, got[p.name], map[string]string{"dee": deeChat.UID, "dee SA": dee.uid}, nil)
	}
	wantAmong(t, "Blue switched off", ann, got["ann"], map[string]string{"dee": deeChat.UID}, []string{"dee"})

	switchBlue(true)
	// At once (before anything sent after the switch): the latest
	// positions newly seen, both ways.
	got = s.fence(t, peers...)
	for _, c := range []struct {
		p    *peer
		want func(*cot.Event) bool
		what string
	}{{dee, saAt(bob, 42), "bob's latest position"}, {bob, saAt(dee, 43), "dee's latest position"}, {cy, saAt(dee, 43), "dee's latest position"}} {
		if !containsEvent(got[c.p.name], c.want) {
			t.Errorf("Blue switched on: %s did not receive %s at once", c.p.name, c.what)
		}
	}
	bobChat = geoChat(bob, "blue again")
	bob.send(t, bobChat)
	dee.await(t, "bob's chat with Blue on again", byUID(bobChat.UID))
}

// TestGroupsMembershipChangeLive: an administrator moving ann from Red to
// Blue (PUT /api/users/{uid}/groups) applies at once to ann's open CoT
// connection and to those who see her now: ann receives bob's latest
// position, bob and cy receive ann's; from then on chat follows the new
// groups (cy's Red no longer reaches ann, bob's Blue does, ann reaches
// Blue).
func TestGroupsMembershipChangeLive(t *testing.T) {
	s := startGroupsServer(t)
	users, bits := s.createGroupedUsers(t)
	ann, bob, cy, dee := s.dialCoT(t, "ann", users["ann"]), s.dialCoT(t, "bob", users["bob"]),
		s.dialCoT(t, "cy", users["cy"]), s.dialCoT(t, "dee", users["dee"])
	peers := []*peer{ann, bob, cy, dee}
	for i, p := range peers {
		p.sendSA(t, float64(10+i))
	}
	s.published(t, ann.uid, bob.uid, cy.uid, dee.uid)
	got := s.fence(t, peers...)
	for _, p := range peers {
		wantAmong(t, "position reports before the change", p, got[p.name], uidsOf(peers...), sees[p.name])
	}

	s.api(t, s.admin, "PUT", "/api/users/"+users["ann"].id+"/groups", map[string]any{"groups": []map[string]string{
		{"name": "Blue", "direction": "BOTH"}}}, 200)
	got = s.fence(t, peers...)
	for _, c := range []struct{ to, from *peer }{{ann, bob}, {bob, ann}, {cy, ann}} {
		if !containsEvent(got[c.to.name], byUID(c.from.uid)) {
			t.Errorf("after ann's move: %s did not receive %s's latest position at once", c.to.name, c.from.name)
		}
	}
	if containsEvent(got["ann"], byUID(cy.uid)) {
		t.Error("after ann's move: ann received cy's position (cy sends to Red only)")
	}

	after := map[string][]string{"ann": {"bob", "dee"}, "bob": {"ann", "dee"}, "cy": {"ann", "bob", "dee"}, "dee": {"ann", "bob", "cy"}}
	chats := map[string]string{}
	for _, p := range peers {
		c := geoChat(p, "after the move")
		p.send(t, c)
		chats[p.name] = c.UID
	}
	for _, p := range []*peer{ann, bob, cy} {
		dee.await(t, p.name+"'s chat", byUID(chats[p.name]))
	}
	ann.await(t, "dee's chat", byUID(chats["dee"]))
	got = s.fence(t, peers...)
	for _, p := range peers {
		wantAmong(t, "chat after ann's move", p, got[p.name], chats, after[p.name])
	}

	// The client API and the management API show the new membership.
	var list martiGroups
	getJSON(t, users["ann"].hc, s.https+"/Marti/api/groups/all?useCache=true", &list)
	list.check(t, "ann's groups after the move", []string{groupItem("Blue", "IN", bits["Blue"], true), groupItem("Blue", "OUT", bits["Blue"], true)})
	var who struct {
		Name   string `json:"name"`
		Groups []struct {
			Name      string `json:"name"`
			Direction string `json:"direction"`
		} `json:"groups"`
	}
	s.api(t, users["ann"].token, "GET", "/api/whoami", nil, 200).JSON(t, &who)
	if who.Name != "ann" || len(who.Groups) != 1 || who.Groups[0].Name != "Blue" || who.Groups[0].Direction != "BOTH" {
		t.Errorf("ann's whoami after the move: %+v", who)
	}
}

// containsEvent reports whether an event of evs matches.
func containsEvent(evs []*cot.Event, match func(*cot.Event) bool) bool {
	for _, ev := range evs {
		if match(ev) {
			return true
		}
	}
	return false
}
