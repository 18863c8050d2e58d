package marti_test

import (
	"net/http"
	"strings"
	"testing"

	"outpost/appliance/cot"
	"outpost/appliance/netx"
	"outpost/appliance/takclient"
	"outpost/internal/testkit"
)

type layerOut struct {
	Name          string     `json:"name"`
	Type          string     `json:"type"`
	UID           string     `json:"uid"`
	ParentUID     string     `json:"parentUid"`
	MissionLayers []layerOut `json:"mission_layers"`
	UIDs          []struct {
		Data string `json:"data"`
	} `json:"uids"`
	Contents []struct {
		Data struct {
			Hash string `json:"hash"`
		} `json:"data"`
	} `json:"contents"`
}

func layerNames(l []layerOut) string {
	var out []string
	for _, x := range l {
		out = append(out, x.Name)
	}
	return strings.Join(out, ",")
}

// TestMissionLayers drives the layer routes on 8080 and on 8443 (the
// certificate's own uid): create (top level and under a parent, placed
// after a sibling), list and get with the contents ITEM layers hold, a
// rename, a position change, moving a uid and a file between layers,
// deleting a layer (its contents leave the mission, recorded as
// REMOVE_CONTENT); and the refusals, each changing nothing.
func TestMissionLayers(t *testing.T) {
	e := start(t, nil)
	for _, l := range []string{netx.ListenerHTTP, netx.ListenerHTTPS} {
		t.Run(l, func(t *testing.T) {
			who := "ANDROID-L"
			if l == netx.ListenerHTTPS {
				who = "sub-tls"
				e.DialTLS(t, e.cert).Send(saOf(who))
				waitBound(t, e, who)
			}
			name := "layers-" + l
			m := "/Marti/api/missions/" + name
			e.call(t, l, "PUT", m+"?creatorUid="+who, nil, 201, nil)
			file := e.uploadFile(t, l, name+".txt", who, []byte("file of "+name))
			e.call(t, l, "PUT", m+"/contents?creatorUid="+who, map[string]any{"hashes": []string{file.Hash}, "uids": []string{"marker-1", "marker-2"}}, 200, nil)

			var a, b, c, items layerOut
			e.call(t, l, "PUT", m+"/layers?name=Alpha&type=UID&uid=A&creatorUid="+who, nil, 200, &a)
			e.call(t, l, "PUT", m+"/layers?name=Bravo&type=UID&uid=B&afterUid=A&creatorUid="+who, nil, 200, &b)
			e.call(t, l, "PUT", m+"/layers?name=Files&type=CONTENTS&afterUid=B&creatorUid="+who, nil, 200, &c)
			if a.UID != "A" || b.Type != "UID" || c.UID == "" || c.Type != "CONTENTS" {
				t.Fatalf("created %+v %+v %+v", a, b, c)
			}
			e.call(t, l, "PUT", m+"/layers?name=marker-1&type=ITEM&uid=marker-1&parentUid=A&creatorUid="+who, nil, 200, &items)
			e.call(t, l, "PUT", m+"/layers?name=marker-2&type=ITEM&uid=marker-2&parentUid=A&afterUid=marker-1&creatorUid="+who, nil, 200, nil)
			e.call(t, l, "PUT", m+"/layers?name=file&type=ITEM&uid="+file.Hash+"&parentUid="+c.UID+"&creatorUid="+who, nil, 200, nil)
			e.call(t, l, "PUT", m+"/layers?name=Sub&type=GROUP&uid=S&parentUid=B&creatorUid="+who, nil, 200, nil)

			var list []layerOut
			env := e.call(t, l, "GET", m+"/layers", nil, 200, &list)
			if env.Type != "MissionLayer" || layerNames(list) != "Alpha,Bravo,Files" {
				t.Fatalf("layers %s: %+v", env.Type, list)
			}
			if len(list[0].UIDs) != 2 || list[0].UIDs[0].Data != "marker-1" || len(list[0].MissionLayers) != 0 ||
				len(list[2].Contents) != 1 || list[2].Contents[0].Data.Hash != file.Hash ||
				len(list[1].MissionLayers) != 1 || list[1].MissionLayers[0].ParentUID != "B" {
				t.Fatalf("hydrated layers: %+v", list)
			}

			// Rename, then put Files first.
			var got layerOut
			e.call(t, l, "PUT", m+"/layers/A/name?name=Alpha%20Team&creatorUid="+who, nil, 200, &got)
			e.call(t, l, "PUT", m+"/layers/"+c.UID+"/position?creatorUid="+who, nil, 200, nil)
			e.call(t, l, "GET", m+"/layers", nil, 200, &list)
			if layerNames(list) != "Files,Alpha Team,Bravo" {
				t.Fatalf("after rename and position: %s", layerNames(list))
			}

			// marker-2 moves from Alpha to Bravo.
			var moved []layerOut
			e.call(t, l, "PUT", m+"/layers/parent?layerUid=marker-2&parentUid=B&creatorUid="+who, nil, 200, &moved)
			e.call(t, l, "GET", m+"/layers/B", nil, 200, &got)
			if len(got.UIDs) != 1 || got.UIDs[0].Data != "marker-2" {
				t.Fatalf("Bravo after the move: %+v", got)
			}

			// Refusals change nothing.
			refused := []struct {
				method, path string
				status       int
				msg          string
			}{
				{"GET", m + "/layers/nope", 404, `has no layer "nope"`},
				{"GET", "/Marti/api/missions/none/layers", 404, "no mission"},
				{"PUT", m + "/layers?name=X&type=UID", 400, "creatorUid: required"},
				{"PUT", m + "/layers?name=X&type=FOLDER&creatorUid=" + who, 400, "type: must be GROUP"},
				{"PUT", m + "/layers?type=UID&creatorUid=" + who, 400, "name: required"},
				{"PUT", m + "/layers?name=X&type=UID&parentUid=ghost&creatorUid=" + who, 404, `no layer "ghost"`},
				{"PUT", m + "/layers?name=X&type=UID&parentUid=marker-1&creatorUid=" + who, 400, "is an ITEM"},
				{"PUT", m + "/layers/parent?layerUid=B&parentUid=S&creatorUid=" + who, 400, `is under layer "B"`},
				{"PUT", m + "/layers/parent?layerUid=A,ghost&parentUid=B&creatorUid=" + who, 404, `no layer "ghost"`},
				{"PUT", m + "/layers/A/name?creatorUid=" + who, 400, "name: required"},
				{"PUT", m + "/layers/A/position?afterUid=ghost&creatorUid=" + who, 404, `no layer "ghost"`},
				{"DELETE", m + "/layers?uid=A,ghost&creatorUid=" + who, 404, `no layer "ghost"`},
				{"DELETE", m + "/layers?creatorUid=" + who, 400, "uid: required"},
				{"PUT", m + "/layers?name=" + strings.Repeat("x", 300) + "&type=UID&creatorUid=" + who, 400, "name"},
				{"PUT", m + "/layers?name=a%01b&type=UID&creatorUid=" + who, 400, "name"},
			}
			for _, x := range refused {
				wantRefusal(t, x.method+" "+x.path, e.do(t, l, x.method, x.path, nil), x.status, x.msg)
			}
			e.call(t, l, "GET", m+"/layers", nil, 200, &list)
			if layerNames(list) != "Files,Alpha Team,Bravo" || len(list[1].UIDs) != 1 || len(list[2].MissionLayers) != 1 {
				t.Fatalf("a refusal changed the layers: %+v", list)
			}

			// Deleting Bravo takes Sub with it and marker-2 out of the mission.
			e.call(t, l, "DELETE", m+"/layers?uid=B&creatorUid="+who, nil, 200, &moved)
			e.call(t, l, "GET", m+"/layers", nil, 200, &list)
			if layerNames(list) != "Files,Alpha Team" {
				t.Fatalf("after delete: %+v", list)
			}
			for _, u := range e.mission(t, l, name).UIDs {
				if u.Data == "marker-2" {
					t.Fatal("marker-2 is still in the mission")
				}
			}
			cs := e.changes(t, l, name)
			if last := cs[len(cs)-1]; last.Type != "REMOVE_CONTENT" || last.ContentUID != "marker-2" {
				t.Fatalf("last change %+v", last)
			}
		})
	}
}

// TestMissionLayersAccess: a read-only subscriber may read the layers but
// not change them (403), a Blue member does not see a Red mission's layers
// (404, as a missing mission), and on 8443 a creatorUid of another
// identity is refused; nothing is written on a refusal.
func TestMissionLayersAccess(t *testing.T) {
	e := start(t, nil)
	red, blue := e.member(t, "reddy", "Red"), e.member(t, "bluey", "Blue")
	const m = "/Marti/api/missions/redm"
	if r := e.as(t, red, "PUT", m+"?creatorUid=RED-1&defaultRole=MISSION_READONLY_SUBSCRIBER", nil); r.Status != 201 {
		t.Fatalf("create: %d %s", r.Status, r.Body)
	}
	if r := e.as(t, red, "PUT", m+"/layers?name=Alpha&type=GROUP&uid=A&creatorUid=RED-1", nil); r.Status != 200 {
		t.Fatalf("owner's layer: %d %s", r.Status, r.Body)
	}
	if r := e.as(t, red, "PUT", m+"/layers?name=Reader&type=GROUP&creatorUid=RED-2", nil); r.Status != http.StatusForbidden {
		t.Fatalf("read-only subscriber's layer: %d %s", r.Status, r.Body)
	}
	if r := e.as(t, red, "GET", m+"/layers", nil); r.Status != 200 || !strings.Contains(string(r.Body), `"Alpha"`) {
		t.Fatalf("red reads: %d %s", r.Status, r.Body)
	}
	for _, x := range []struct{ method, path string }{{"GET", m + "/layers"}, {"GET", m + "/layers/A"},
		{"PUT", m + "/layers?name=B&type=GROUP&creatorUid=BLUE-1"}, {"DELETE", m + "/layers?uid=A&creatorUid=BLUE-1"},
		{"PUT", m + "/layers/A/name?name=Mine&creatorUid=BLUE-1"}} {
		if r := e.as(t, blue, x.method, x.path, nil); r.Status != 404 {
			t.Errorf("blue %s %s: %d %s", x.method, x.path, r.Status, r.Body)
		}
		if r := e.do(t, netx.ListenerHTTP, x.method, x.path, nil); r.Status != 404 {
			t.Errorf("anonymous %s %s: %d %s", x.method, x.path, r.Status, r.Body)
		}
	}
	e.DialTLS(t, blue.cert).Send(saOf("BLUE-1"))
	waitBound(t, e, "BLUE-1")
	if r := e.as(t, red, "PUT", m+"/layers/A/name?name=Stolen&creatorUid=BLUE-1", nil); r.Status != 403 {
		t.Errorf("red acting for blue's uid: %d %s", r.Status, r.Body)
	}
	var l []layerOut
	e.envelopeAs(t, red.hc, netx.ListenerHTTPS, m+"/layers", &l)
	if len(l) != 1 || l[0].Name != "Alpha" {
		t.Fatalf("a refusal changed the layers: %+v", l)
	}
}

func saOf(uid string) *cot.Event { return takclient.SA(uid, strings.ToUpper(uid), 59.5, 18.5) }

// waitBound waits until uid is bound to a certificate identity.
func waitBound(t *testing.T, e *env, uid string) {
	t.Helper()
	testkit.WaitFor(t, uid+" bound", func() bool { _, ok := e.Broker().UIDOwner(uid); return ok })
}

// TestMissionLayersByGUID drives the layer routes by the mission's guid on
// both listeners (the official server's /missions/guid/{guid}/layers...):
// create, list, get, rename, position, move and delete, each answering as
// its name route; an unknown guid is 404, a guid that is not a UUID 400,
// an unknown layer 404, and none of the refusals writes anything.
func TestMissionLayersByGUID(t *testing.T) {
	e := start(t, nil)
	for _, l := range []string{netx.ListenerHTTP, netx.ListenerHTTPS} {
		t.Run(l, func(t *testing.T) {
			who := "ANDROID-G"
			if l == netx.ListenerHTTPS {
				who = "guid-tls"
				e.DialTLS(t, e.cert).Send(saOf(who))
				waitBound(t, e, who)
			}
			name := "glayers-" + l
			e.call(t, l, "PUT", "/Marti/api/missions/"+name+"?creatorUid="+who, nil, 201, nil)
			e.call(t, l, "PUT", "/Marti/api/missions/"+name+"/contents?creatorUid="+who, map[string]any{"uids": []string{"g-marker"}}, 200, nil)
			g := "/Marti/api/missions/guid/" + e.mission(t, l, name).GUID

			var a, b layerOut
			e.call(t, l, "PUT", g+"/layers?name=Alpha&type=UID&uid=A&creatorUid="+who, nil, 200, &a)
			e.call(t, l, "PUT", g+"/layers?name=Bravo&type=UID&uid=B&afterUid=A&creatorUid="+who, nil, 200, &b)
			e.call(t, l, "PUT", g+"/layers?name=g-marker&type=ITEM&uid=g-marker&parentUid=A&creatorUid="+who, nil, 200, nil)
			if a.UID != "A" || b.UID != "B" {
				t.Fatalf("created %+v %+v", a, b)
			}
			var list []layerOut
			if env := e.call(t, l, "GET", g+"/layers", nil, 200, &list); env.Type != "MissionLayer" || layerNames(list) != "Alpha,Bravo" ||
				len(list[0].UIDs) != 1 || list[0].UIDs[0].Data != "g-marker" {
				t.Fatalf("layers by guid: %+v", list)
			}
			var byName []layerOut
			e.call(t, l, "GET", "/Marti/api/missions/"+name+"/layers", nil, 200, &byName)
			if layerNames(byName) != layerNames(list) {
				t.Fatalf("by name %s, by guid %s", layerNames(byName), layerNames(list))
			}
			var got layerOut
			e.call(t, l, "PUT", g+"/layers/A/name?name=Alpha%20Team&creatorUid="+who, nil, 200, &got)
			e.call(t, l, "PUT", g+"/layers/B/position?creatorUid="+who, nil, 200, nil)
			e.call(t, l, "PUT", g+"/layers/parent?layerUid=g-marker&parentUid=B&creatorUid="+who, nil, 200, nil)
			e.call(t, l, "GET", g+"/layers/B", nil, 200, &got)
			if got.Name != "Bravo" || len(got.UIDs) != 1 || got.UIDs[0].Data != "g-marker" {
				t.Fatalf("Bravo after the move: %+v", got)
			}
			e.call(t, l, "GET", g+"/layers", nil, 200, &list)
			if layerNames(list) != "Bravo,Alpha Team" {
				t.Fatalf("after rename and position: %s", layerNames(list))
			}

			unknown := "/Marti/api/missions/guid/00000000-0000-4000-8000-000000000000"
			refused := []struct {
				method, path string
				status       int
				msg          string
			}{
				{"GET", unknown + "/layers", 404, "no mission"},
				{"PUT", unknown + "/layers?name=X&type=UID&creatorUid=" + who, 404, "no mission"},
				{"DELETE", unknown + "/layers?uid=A&creatorUid=" + who, 404, "no mission"},
				{"GET", "/Marti/api/missions/guid/not-a-uuid/layers", 400, "guid: must be a UUID"},
				{"GET", g + "/layers/nope", 404, `has no layer "nope"`},
				{"PUT", g + "/layers/nope/name?name=Y&creatorUid=" + who, 404, `"nope"`},
				{"PUT", g + "/layers?name=X&type=FOLDER&creatorUid=" + who, 400, "type: must be GROUP"},
				{"PUT", g + "/layers?name=X&type=UID", 400, "creatorUid: required"},
				{"DELETE", g + "/layers?uid=A,ghost&creatorUid=" + who, 404, `no layer "ghost"`},
			}
			for _, x := range refused {
				wantRefusal(t, x.method+" "+x.path, e.do(t, l, x.method, x.path, nil), x.status, x.msg)
			}
			e.call(t, l, "GET", g+"/layers", nil, 200, &list)
			if layerNames(list) != "Bravo,Alpha Team" || len(list[0].UIDs) != 1 {
				t.Fatalf("a refusal changed the layers: %+v", list)
			}
			e.call(t, l, "DELETE", g+"/layers?uid=B&creatorUid="+who, nil, 200, nil)
			e.call(t, l, "GET", g+"/layers", nil, 200, &list)
			if layerNames(list) != "Alpha Team" || len(e.mission(t, l, name).UIDs) != 0 {
				t.Fatalf("after delete: %+v", list)
			}
		})
	}
}
