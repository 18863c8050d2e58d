package marti_test

// The CoT history routes (docs/api-marti.md "CoT history") on both
// listeners: an SA read back at once after the relay routed it, windows,
// pages and cuts, the situation picture, group isolation and bad input.

import (
	"context"
	"errors"
	"fmt"
	"net/url"
	"strings"
	"testing"
	"time"

	"outpost/appliance/config"
	"outpost/appliance/cot"
	"outpost/appliance/netx"
	"outpost/appliance/store"
	"outpost/appliance/takclient"
	"outpost/internal/testkit"
)

// TestCoTReadBackAfterRelay: an SA sent over TCP is answered by
// cot/xml/{uid}, cot/xml/{uid}/all and cot/sa as soon as the relay has
// routed it (a second client received it), before the history writer's
// batch (up to a second later). With a history budget that stores nothing,
// the answers can only come from the broker's live state: they do, a new
// position replaces the old at once, and once the client has left nothing
// is known of it.
func TestCoTReadBackAfterRelay(t *testing.T) {
	for _, storing := range []bool{true, false} {
		t.Run(fmt.Sprintf("history stores=%v", storing), func(t *testing.T) {
			e := start(t, func(c *config.Config) {
				if !storing {
					c.HistoryClientBytes = 1 // every event over the client's budget: relayed, not stored
				}
			})
			sender, watcher := e.DialTCP(t), e.DialTCP(t)
			readBack := func(lat float64) {
				t.Helper()
				sender.Send(takclient.SA("FAST-1", "FAST", lat, -0.1))
				if _, err := watcher.WaitFor(func(ev *cot.Event) bool { return ev.UID == "FAST-1" && ev.Point.Lat == lat }, 10*time.Second); err != nil {
					t.Fatal(err)
				}
				want := fmt.Sprintf("[FAST-1:%v]", lat)
				for _, l := range both {
					r := e.do(t, l, "GET", "/Marti/api/cot/xml/FAST-1", nil)
					ev, err := cot.Decode(r.Body)
					if r.Status != 200 || err != nil || ev.UID != "FAST-1" || ev.Point.Lat != lat {
						t.Fatalf("%s cot/xml right after the relay: %d %v %s", l, r.Status, err, r.Body)
					}
					if got := readEvents(t, l+" all", e.do(t, l, "GET", "/Marti/api/cot/xml/FAST-1/all?secago=60&limit=1", nil)); got.String() != want {
						t.Errorf("%s all: %s, want %s", l, got, want)
					}
					if got := readEvents(t, l+" sa", e.do(t, l, "GET", "/Marti/api/cot/sa?secago=60", nil)); got.String() != want {
						t.Errorf("%s sa: %s, want %s", l, got, want)
					}
				}
			}
			readBack(51.5)
			readBack(51.6)
			if storing {
				return
			}
			if _, err := e.Store().Events().LatestEvent(context.Background(), "FAST-1", store.AllGroups); !errors.Is(err, store.ErrNotFound) {
				t.Fatalf("the history holds FAST-1 (%v): the answers did not need the live state", err)
			}
			sender.Close()
			testkit.WaitFor(t, "the sender gone", func() bool { return len(e.Broker().LiveEvents("FAST-1")) == 0 })
			for _, l := range both {
				wantRefusal(t, l+" after the sender left", e.do(t, l, "GET", "/Marti/api/cot/xml/FAST-1", nil), 404, `uid: no event of "FAST-1" in the history`)
				wantRefusal(t, l+" all after the sender left", e.do(t, l, "GET", "/Marti/api/cot/xml/FAST-1/all", nil), 404, `uid: no event of "FAST-1" in the history`)
			}
		})
	}
}

// TestCoTAllWindowsAndPages: cot/xml/{uid}/all answers a uid's stored
// events in the window, newest first, in pages of limit named by
// Outpost-Next-Events; an empty window is an empty <events>, an unknown
// uid 404.
func TestCoTAllWindowsAndPages(t *testing.T) {
	e := start(t, nil)
	now := time.Now().UTC()
	ago, iso := minutesAgo(now)
	var events []stored
	for i := 1; i <= 5; i++ {
		events = append(events, stored{uid: "TRACK", lat: float64(i), at: ago(60 - 10*i), groups: store.AnonGroup})
	}
	storeEvents(t, e, append(events, stored{uid: "OTHER", lat: 9, at: ago(5), groups: store.AnonGroup})...)
	const all = "/Marti/api/cot/xml/TRACK/all"
	windows := []struct{ query, want string }{
		{"", "[TRACK:5 TRACK:4 TRACK:3 TRACK:2 TRACK:1]"},
		{"?secago=1500", "[TRACK:5 TRACK:4]"},
		{"?secAgo=1500", "[TRACK:5 TRACK:4]"},
		{"?secago=0", "[TRACK:5 TRACK:4 TRACK:3 TRACK:2 TRACK:1]"}, // 0: no bound, as the official server
		{"?start=" + iso(45) + "&end=" + iso(15), "[TRACK:4 TRACK:3 TRACK:2]"},
		{"?end=" + iso(35), "[TRACK:2 TRACK:1]"},
		{"?secago=1500&start=" + iso(100), "[TRACK:5 TRACK:4]"}, // secago wins over start
		{"?secago=60", "[]"},
		{"?start=2020-01-01T00:00:00Z&end=2020-01-02T00:00:00Z", "[]"},
	}
	for _, l := range both {
		for _, w := range windows {
			if got := readEvents(t, l+" "+w.query, e.do(t, l, "GET", all+w.query, nil)); got.String() != w.want {
				t.Errorf("%s %s: %s, want %s", l, w.query, got, w.want)
			}
		}
		var pages []string
		path := all + "?limit=2"
		for range 5 {
			r := e.do(t, l, "GET", path, nil)
			pages = append(pages, readEvents(t, l+" page", r).String())
			next := r.Header.Get("Outpost-Next-Events")
			if next == "" {
				break
			}
			path = all + "?limit=2&before=" + url.QueryEscape(next)
		}
		if got := strings.Join(pages, " "); got != "[TRACK:5 TRACK:4] [TRACK:3 TRACK:2] [TRACK:1]" {
			t.Errorf("%s pages: %s", l, got)
		}
		wantRefusal(t, l+" unknown uid", e.do(t, l, "GET", "/Marti/api/cot/xml/NOBODY/all", nil), 404, `uid: no event of "NOBODY" in the history`)
	}
}

// TestCoTSAPicture: cot/sa answers the latest event of every uid in the
// window, of the picture's types, from the history and the live state (the
// newer for each uid), in a box when asked, and says when it cut its
// answer.
func TestCoTSAPicture(t *testing.T) {
	e := start(t, nil)
	now := time.Now().UTC()
	ago, iso := minutesAgo(now)
	anon := store.AnonGroup
	storeEvents(t, e,
		stored{uid: "A", lat: 10, at: ago(30), groups: anon},
		stored{uid: "A", lat: 11, at: ago(20), groups: anon},
		stored{uid: "OLD", lat: 12, at: ago(90), groups: anon},
		stored{uid: "DEL", lat: 13, typ: "t-x-d-d", at: ago(5), groups: anon},
		stored{uid: "CHAT", lat: 14, typ: "b-t-f", at: ago(10), groups: anon},
		stored{uid: "LIVE-1", lat: 15, at: ago(40), groups: anon}, // older than its live report
	)
	tcp := e.DialTCP(t)
	tcp.Send(takclient.SA("LIVE-1", "LIVE", 16, 1))
	relayed(t, e, "LIVE-1")
	checks := []struct{ query, want string }{
		{"?secago=3600", "[LIVE-1:16 CHAT:14 A:11]"},
		{"?start=" + iso(120) + "&end=" + iso(25), "[A:10 LIVE-1:15 OLD:12]"},
		{"?start=" + iso(35), "[LIVE-1:16 CHAT:14 A:11]"},
		{"?secago=3600&left=0&bottom=10.5&right=2&top=11.5", "[A:11]"},
		{"?secago=3600&left=2&bottom=-90&right=0&top=90", "[]"}, // across the antimeridian: not at lon 1
		{"?secago=60&left=0&bottom=10.5&right=2&top=11.5", "[]"},
	}
	for _, l := range both {
		for _, c := range checks {
			r := e.do(t, l, "GET", "/Marti/api/cot/sa"+c.query, nil)
			if got := readEvents(t, l+" sa"+c.query, r); got.String() != c.want || r.Header.Get("Outpost-Truncated") != "" {
				t.Errorf("%s sa%s: %s (truncated %q), want %s", l, c.query, got, r.Header.Get("Outpost-Truncated"), c.want)
			}
		}
	}

	// More uids than an answer holds: the newest, and the header.
	var many []stored
	for i := range 5001 {
		many = append(many, stored{uid: fmt.Sprintf("M-%04d", i), lat: 1, at: now.Add(-time.Minute + time.Duration(i)*time.Millisecond), groups: anon})
	}
	storeEvents(t, e, many...)
	for _, l := range both {
		r := e.do(t, l, "GET", "/Marti/api/cot/sa?secago=120", nil)
		got := readEvents(t, l+" cut", r)
		if r.Header.Get("Outpost-Truncated") != "true" || len(got) == 0 || len(got) > 5000 || len(r.Body) > 2<<20+4096 ||
			got[0] != "LIVE-1:16" || got[1] != "M-5000:1" {
			t.Errorf("%s cut answer: %d events, %d bytes, truncated %q, first %v", l, len(got), len(r.Body), r.Header.Get("Outpost-Truncated"), got[:min(2, len(got))])
		}
	}
}

// TestCoTHistoryGroups: each route shows a caller the events sent to its
// groups and no others, live and stored (access.md "Groups"): reddy (Red)
// and bluey (Blue) over 8443, alice (a certificate without a user:
// __ANON__) over 8443 and anonymous callers over 8080 (__ANON__). MOVER's
// user moved from Red to Blue: Red still reads its events from before.
func TestCoTHistoryGroups(t *testing.T) {
	e := start(t, nil)
	red, blue, reddy, bluey := teams(t, e)
	now := time.Now().UTC()
	storeEvents(t, e,
		stored{uid: "MOVER", lat: 1, at: now.Add(-30 * time.Minute), groups: red},
		stored{uid: "MOVER", lat: 2, at: now.Add(-20 * time.Minute), groups: blue},
	)
	clients := []*takclient.Client{e.DialTLS(t, reddy.cert), e.DialTLS(t, bluey.cert), e.DialTCP(t)}
	clients[0].Send(takclient.SA("RED-1", "RED", 3, 1))
	clients[1].Send(takclient.SA("BLUE-1", "BLUE", 4, 1))
	clients[2].Send(takclient.SA("ANON-1", "ANON", 5, 1))
	for _, uid := range []string{"RED-1", "BLUE-1", "ANON-1"} {
		relayed(t, e, uid)
	}
	type caller struct {
		name, listener string
		c              certHolder
	}
	callers := []caller{
		{"reddy", netx.ListenerHTTPS, reddy},
		{"bluey", netx.ListenerHTTPS, bluey},
		{"alice", netx.ListenerHTTPS, certHolder{hc: e.https}},
		{"anonymous", netx.ListenerHTTP, certHolder{}},
	}
	want := map[string]seenBy{
		"reddy":     {"RED-1:3 MOVER:1", "[MOVER:1]", "[RED-1:3 MOVER:1]"},
		"bluey":     {"BLUE-1:4 MOVER:2", "[MOVER:2]", "[BLUE-1:4 MOVER:2]"},
		"alice":     {"ANON-1:5", "", "[ANON-1:5]"},
		"anonymous": {"ANON-1:5", "", "[ANON-1:5]"},
	}
	check := func(when string) {
		t.Helper()
		for _, c := range callers {
			checkCaller(t, e, when, c.name, c.listener, c.c, want[c.name])
		}
	}
	check("live")
	// The clients leave once the history holds their reports: the same
	// answers, from the history alone.
	for _, uid := range []string{"RED-1", "BLUE-1", "ANON-1"} {
		testkit.WaitFor(t, uid+" stored", func() bool {
			_, err := e.Store().Events().LatestEvent(context.Background(), uid, store.AllGroups)
			return err == nil
		})
	}
	for _, c := range clients {
		c.Close()
	}
	testkit.WaitFor(t, "the clients gone", func() bool { return len(e.Broker().LiveEvents("")) == 0 })
	check("stored")
}

// seenBy is what one caller reads of the history: the latest event of each
// uid, MOVER's events ("": 404), the picture.
type seenBy struct{ latest, mover, picture string }

func checkCaller(t *testing.T, e *env, when, name, listener string, c certHolder, w seenBy) {
	t.Helper()
	var latest []string
	for _, uid := range []string{"RED-1", "BLUE-1", "ANON-1", "MOVER"} {
		r := e.doAs(t, c.hc, listener, "GET", "/Marti/api/cot/xml/"+uid, nil)
		switch r.Status {
		case 200:
			ev, err := cot.Decode(r.Body)
			if err != nil {
				t.Fatalf("%s %s %s: %v", when, name, uid, err)
			}
			latest = append(latest, fmt.Sprintf("%s:%v", ev.UID, ev.Point.Lat))
		case 404:
		default:
			t.Errorf("%s %s cot/xml/%s: %d %s", when, name, uid, r.Status, r.Body)
		}
	}
	if got := strings.Join(latest, " "); got != w.latest {
		t.Errorf("%s %s reads the latest events %q, want %q", when, name, got, w.latest)
	}
	r := e.doAs(t, c.hc, listener, "GET", "/Marti/api/cot/xml/MOVER/all", nil)
	if w.mover == "" {
		wantRefusal(t, when+" "+name+" MOVER's events", r, 404, `uid: no event of "MOVER"`)
	} else if got := readEvents(t, when+" "+name+" MOVER's events", r); got.String() != w.mover {
		t.Errorf("%s %s reads MOVER's events %s, want %s", when, name, got, w.mover)
	}
	if got := readEvents(t, when+" "+name+" picture", e.doAs(t, c.hc, listener, "GET", "/Marti/api/cot/sa?secago=3600", nil)); got.String() != w.picture {
		t.Errorf("%s %s reads the picture %s, want %s", when, name, got, w.picture)
	}
}

// TestCoTHistoryBadInput: every bad parameter is 400 naming it, on both
// listeners.
func TestCoTHistoryBadInput(t *testing.T) {
	e := start(t, nil)
	storeEvents(t, e, stored{uid: "U", lat: 1, at: time.Now().UTC(), groups: store.AnonGroup})
	const all, sa = "/Marti/api/cot/xml/U/all", "/Marti/api/cot/sa"
	day := func(h int) string { return time.Now().UTC().Add(time.Duration(h) * time.Hour).Format(time.RFC3339) }
	cases := []struct{ path, msg string }{
		{all + "?secago=-1", "secago: must be a whole number of seconds from 0 to 315360000"},
		{all + "?secago=abc", "secago: must be a whole number of seconds"},
		{all + "?secago=99999999999999999999", "secago: must be a whole number of seconds"},
		{all + "?secAgo=315360001", "secAgo: must be a whole number of seconds"},
		{all + "?start=yesterday", `start: must be an ISO 8601 time (2026-11-22T10:00:00.000Z), not "yesterday"`},
		{all + "?end=2026-13-45T00:00:00Z", "end: must be an ISO 8601 time"},
		{all + "?start=" + day(-1) + "&end=" + day(-2), "end: must be after the window's start"},
		{all + "?start=" + day(-1) + "&end=" + day(-1), "end: must be after the window's start"},
		{all + "?limit=0", "limit: must be a whole number from 1 to 5000"},
		{all + "?limit=5001", "limit: must be a whole number from 1 to 5000"},
		{all + "?before=nonsense", "before:"},
		{all + "?before=12_x", "before:"},
		{"/Marti/api/cot/xml/a%01b/all", "uid: contains a control character"},
		{"/Marti/api/cot/xml/" + strings.Repeat("u", 256) + "/all", "uid:"},
		{sa, "secago: a window is required"},
		{sa + "?secago=0", "secago: a window is required"},
		{sa + "?secago=-5", "secago: must be a whole number"},
		{sa + "?secago=86401", "secago: the window may span at most 24 hours"},
		{sa + "?start=" + day(-30), "start: the window may span at most 24 hours"},
		{sa + "?start=" + day(-30) + "&end=" + day(-1), "start: the window may span at most 24 hours"},
		{sa + "?start=" + day(1), "start: must be before end"},
		{sa + "?start=" + day(-2) + "&end=" + day(-3), "end: must be after the window's start"},
		{sa + "?end=" + day(-1), "secago: a window is required"},
		{sa + "?secago=60&left=1", "bottom: is required with the other edges"},
		{sa + "?secago=60&left=x&bottom=1&right=2&top=3", `left: must be a number of degrees, not "x"`},
		{sa + "?secago=60&left=0&bottom=1&right=2&top=NaN", "top: must be a number of degrees"},
		{sa + "?secago=60&left=0&bottom=5&right=2&top=1", "box: minimum latitude 5 is above maximum 1"},
		{sa + "?secago=60&left=0&bottom=1&right=200&top=2", "box: latitude must be within ±90, longitude within ±180"},
	}
	for _, l := range both {
		for _, c := range cases {
			wantRefusal(t, l+" "+c.path, e.do(t, l, "GET", c.path, nil), 400, c.msg)
		}
	}
	// Still there, unchanged.
	if got := readEvents(t, "U", e.do(t, both[0], "GET", all, nil)); got.String() != "[U:1]" {
		t.Errorf("U after the refusals: %s", got)
	}
}

// TestMissionCoTLive: a mission's cot lists a uid's position as soon as it
// is relayed, from the broker's live state, even when the history stores
// nothing of it (a client over its history budget), and the newer live
// position replaces the stored one.
func TestMissionCoTLive(t *testing.T) {
	e := start(t, func(c *config.Config) { c.HistoryClientBytes = 1 }) // relayed, never stored
	sender, watcher := e.DialTCP(t), e.DialTCP(t)
	for _, l := range both {
		p := "/Marti/api/missions/live-" + l
		e.call(t, l, "PUT", p+"?creatorUid=LEAD", nil, 201, nil)
		e.call(t, l, "PUT", p+"/contents?creatorUid=LEAD", map[string]any{"uids": []string{"LIVE-1"}}, 200, nil)
	}
	for _, lat := range []float64{40.1, 40.2} {
		sender.Send(takclient.SA("LIVE-1", "LIVE", lat, 3))
		if _, err := watcher.WaitFor(func(ev *cot.Event) bool { return ev.UID == "LIVE-1" && ev.Point.Lat == lat }, 10*time.Second); err != nil {
			t.Fatal(err)
		}
		want := fmt.Sprintf("[LIVE-1:%v]", lat)
		for _, l := range both {
			if got := readEvents(t, l+" mission cot", e.do(t, l, "GET", "/Marti/api/missions/live-"+l+"/cot", nil)); got.String() != want {
				t.Errorf("%s mission cot right after the relay: %s, want %s", l, got, want)
			}
		}
	}
	if _, err := e.Store().Events().LatestEvent(context.Background(), "LIVE-1", store.AllGroups); !errors.Is(err, store.ErrNotFound) {
		t.Fatalf("the history holds LIVE-1 (%v): the answers did not need the live state", err)
	}
}
