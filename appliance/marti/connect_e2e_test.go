package marti_test

import (
	"encoding/json"
	"net/http"
	"strings"
	"testing"
	"time"

	"outpost/appliance/cot"
	"outpost/appliance/takclient"
	"outpost/internal/testkit"
)

type endpointList struct {
	Version, Type, NodeID string
	Data                  []map[string]string
}

func (e *env) endpoints(t *testing.T, listener, query string) endpointList {
	t.Helper()
	resp := e.do(t, listener, "GET", "/Marti/api/clientEndPoints"+query, nil)
	if resp.Status != 200 {
		t.Fatalf("clientEndPoints: %d %s", resp.Status, resp.Body)
	}
	var l endpointList
	resp.JSON(t, &l)
	return l
}

func findEndpoint(l endpointList, uid string) map[string]string {
	for _, it := range l.Data {
		if it["uid"] == uid {
			return it
		}
	}
	return nil
}

// TestConnectRoutes: what ATAK, WinTAK and iTAK call on connect, on both
// listeners: version, version/config, clientEndPoints (connected and
// disconnected clients, secago), contacts, groups, the device profile and
// the latest event of a uid.
func TestConnectRoutes(t *testing.T) {
	e := start(t, nil)
	tcp := e.DialTCP(t)
	tcp.Send(takclient.SA("ANDROID-TCP", "ALPHA", 59.33, 18.06))
	bob := e.DialTLS(t, e.Issue(t, "bob"))
	bob.Send(takclient.SA("ANDROID-BOB", "BRAVO", 59.34, 18.07))
	testkit.WaitFor(t, "both clients identified", func() bool { return len(e.Broker().Clients()) == 2 })

	for _, l := range both {
		resp := e.do(t, l, "GET", "/Marti/api/version", nil)
		if resp.Status != 200 || !strings.Contains(string(resp.Body), "TAK Server") || !strings.HasPrefix(resp.Header.Get("Content-Type"), "text/plain") {
			t.Fatalf("%s version: %d %q", l, resp.Status, resp.Body)
		}
		resp = e.do(t, l, "GET", "/Marti/api/version/config", nil)
		var vc struct {
			Version, Type, NodeID string
			Data                  map[string]string
		}
		resp.JSON(t, &vc)
		if vc.Version != "3" || vc.Type != "ServerConfig" || vc.NodeID == "" || vc.Data["api"] != "3" || vc.Data["hostname"] != "127.0.0.1" || vc.Data["version"] == "" {
			t.Fatalf("%s version/config: %s", l, resp.Body)
		}

		eps := e.endpoints(t, l, "")
		if eps.Type != "com.bbn.marti.remote.ClientEndpoint" || eps.Version != "3" || eps.NodeID != vc.NodeID {
			t.Fatalf("%s clientEndPoints envelope: %+v", l, eps)
		}
		a, b := findEndpoint(eps, "ANDROID-TCP"), findEndpoint(eps, "ANDROID-BOB")
		if a == nil || a["callsign"] != "ALPHA" || a["lastStatus"] != "Connected" || a["username"] != "" {
			t.Fatalf("%s TCP client: %v", l, a)
		}
		if b == nil || b["callsign"] != "BRAVO" || b["username"] != "bob" || b["lastStatus"] != "Connected" {
			t.Fatalf("%s TLS client: %v", l, b)
		}
		for _, it := range eps.Data {
			if _, err := time.Parse("2006-01-02T15:04:05.000Z", it["lastEventTime"]); err != nil || len(it) != 5 {
				t.Fatalf("%s incomplete item: %v", l, it)
			}
		}

		resp = e.do(t, l, "GET", "/Marti/api/contacts/all", nil)
		var contacts []map[string]any
		resp.JSON(t, &contacts)
		if len(contacts) != 2 {
			t.Fatalf("%s contacts: %s", l, resp.Body)
		}
		for _, c := range contacts {
			if c["team"] != "Cyan" || c["role"] != "Team Member" || c["callsign"] == "" || c["filterGroups"] == nil {
				t.Fatalf("%s contact: %v", l, c)
			}
		}

		resp = e.do(t, l, "GET", "/Marti/api/groups/all", nil)
		var groups struct {
			Version, Type, NodeID string
			Data                  []struct {
				Name, Direction, Created, Type string
				Bitpos                         int
				Active                         bool
			}
		}
		resp.JSON(t, &groups)
		if groups.Version != "3" || groups.Type != "com.bbn.marti.remote.groups.Group" || len(groups.Data) != 1 {
			t.Fatalf("%s groups: %s", l, resp.Body)
		}
		g := groups.Data[0]
		if g.Name != "__ANON__" || g.Direction != "OUT" || g.Type != "SYSTEM" || g.Bitpos != 2 || !g.Active {
			t.Fatalf("%s group: %+v", l, g)
		}
		if _, err := time.Parse(time.DateOnly, g.Created); err != nil {
			t.Fatalf("%s group created %q", l, g.Created)
		}

		resp = e.do(t, l, "GET", "/Marti/api/device/profile/connection?syncSecago=0&clientUid=ANDROID-TCP", nil)
		if resp.Status != http.StatusNoContent || len(resp.Body) != 0 {
			t.Fatalf("%s device profile: %d %q", l, resp.Status, resp.Body)
		}
	}

	// The latest event of a uid comes from the history (written after
	// routing, asynchronously).
	var xmlBody []byte
	testkit.WaitFor(t, "the SA in the history", func() bool {
		resp := e.do(t, both[0], "GET", "/Marti/api/cot/xml/ANDROID-TCP", nil)
		xmlBody = resp.Body
		return resp.Status == 200
	})
	for _, l := range both {
		resp := e.do(t, l, "GET", "/Marti/api/cot/xml/ANDROID-TCP", nil)
		ev, err := cot.Decode(resp.Body)
		if err != nil || ev.UID != "ANDROID-TCP" || ev.Type != "a-f-G-U-C" || !strings.HasPrefix(resp.Header.Get("Content-Type"), "application/xml") {
			t.Fatalf("%s cot/xml: %v %q", l, err, xmlBody)
		}
		resp = e.do(t, l, "GET", "/Marti/api/cot/xml/NOBODY", nil)
		if resp.Status != 404 || !strings.Contains(resp.Message(), `uid: no event of "NOBODY"`) {
			t.Fatalf("%s unknown uid: %d %s", l, resp.Status, resp.Body)
		}
	}

	// A client that leaves is listed as Disconnected, once; secago filters
	// by the time of its last event or departure.
	tcp.Close()
	testkit.WaitFor(t, "the TCP client listed as disconnected", func() bool {
		a := findEndpoint(e.endpoints(t, both[0], ""), "ANDROID-TCP")
		return a != nil && a["lastStatus"] == "Disconnected"
	})
	for _, l := range both {
		eps := e.endpoints(t, l, "?secago=3600")
		n := 0
		for _, it := range eps.Data {
			if it["uid"] == "ANDROID-TCP" {
				n++
				if it["callsign"] != "ALPHA" || it["lastStatus"] != "Disconnected" {
					t.Fatalf("%s departed client: %v", l, it)
				}
			}
		}
		if n != 1 || findEndpoint(eps, "ANDROID-BOB") == nil {
			t.Fatalf("%s secago=3600: %+v", l, eps.Data)
		}
	}
	testkit.WaitFor(t, "secago=1 leaving out a departure older than a second", func() bool {
		return findEndpoint(e.endpoints(t, both[1], "?secAgo=1"), "ANDROID-TCP") == nil
	})
	if findEndpoint(e.endpoints(t, both[1], "?secago=3600"), "ANDROID-TCP") == nil {
		t.Fatal("the departure vanished from the long window")
	}
	// Reconnected: Connected again, listed once.
	again := e.DialTCP(t)
	again.Send(takclient.SA("ANDROID-TCP", "ALPHA", 59.33, 18.06))
	testkit.WaitFor(t, "the client connected again", func() bool {
		a := findEndpoint(e.endpoints(t, both[0], ""), "ANDROID-TCP")
		return a != nil && a["lastStatus"] == "Connected"
	})
	n := 0
	for _, it := range e.endpoints(t, both[0], "").Data {
		if it["uid"] == "ANDROID-TCP" {
			n++
		}
	}
	if n != 1 {
		t.Fatalf("a reconnected client is listed %d times", n)
	}
}

// TestEmptyLists: with nobody connected, lists are empty arrays, never null.
func TestEmptyLists(t *testing.T) {
	e := start(t, nil)
	for _, path := range []string{"/Marti/api/clientEndPoints", "/Marti/api/contacts/all"} {
		resp := e.do(t, both[0], "GET", path, nil)
		var v any
		resp.JSON(t, &v)
		if strings.Contains(string(resp.Body), "null") {
			t.Fatalf("%s: %s", path, resp.Body)
		}
		b, _ := json.Marshal(v)
		if !strings.Contains(string(b), "[]") {
			t.Fatalf("%s: no empty array in %s", path, resp.Body)
		}
	}
}
