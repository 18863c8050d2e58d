package federation

import (
	"strings"
	"testing"
	"time"

	"outpost/appliance/cot"
	"outpost/appliance/federation/fedproto"
)

func decode(t *testing.T, xml string) *cot.Event {
	t.Helper()
	ev, err := cot.Decode([]byte(xml))
	if err != nil {
		t.Fatal(err)
	}
	return ev
}

const saXML = `<event version="2.0" uid="U-1" type="a-f-G-U-C" how="m-g" time="2026-01-02T03:04:05.678Z" ` +
	`start="2026-01-02T03:04:05.678Z" stale="2026-01-02T03:10:05.678Z" caveat="FOUO">` +
	`<point lat="1.5" lon="-2.25" hae="30" ce="9.9" le="9999999"/><detail>` +
	`<contact callsign="ONE" endpoint="*:-1:stcp"/><__group name="Cyan" role="Team Member"/>` +
	`<status battery="77"/><track speed="3.5" course="270"/><remarks>a &amp; b</remarks></detail></event>`

// An event survives the round trip; <track> travels in speed and course
// only, the rest of <detail> in other.
func TestConvertRoundTrip(t *testing.T) {
	ev := decode(t, saXML)
	g := toGeoEvent(ev, "", "")
	if g.GetSendTime() != ev.Time.UnixMilli() || g.GetStaleTime() != ev.Stale.UnixMilli() || g.GetCoordSource() != "m-g" ||
		g.GetSpeed() != 3.5 || g.GetCourse() != 270 || g.GetScreenName() != "ONE" || g.GetGroupName() != "Cyan" ||
		g.GetBattery() != 77 || g.GetCaveat() != "FOUO" || g.GetLe() != 9999999 {
		t.Fatalf("GeoEvent %v", g)
	}
	if strings.Contains(g.GetOther(), "<track") || !strings.HasPrefix(g.GetOther(), "<detail>") || !strings.Contains(g.GetOther(), "a &amp; b") {
		t.Fatalf("other %q", g.GetOther())
	}
	back, err := fromGeoEvent(g)
	if err != nil {
		t.Fatal(err)
	}
	if back.UID != ev.UID || !back.Time.Equal(ev.Time) || !back.Stale.Equal(ev.Stale) || back.Point != ev.Point ||
		back.Caveat != "FOUO" || back.Detail.Track == nil || *back.Detail.Track != *ev.Detail.Track ||
		back.Detail.Contact == nil || back.Detail.Contact.Callsign != "ONE" || !back.IsSA() {
		t.Fatalf("back %+v %s", back, back.Detail.XML)
	}
	if eventKey(back) != eventKey(ev) {
		t.Fatal("the key changed over the round trip")
	}
}

// Destinations cross in ptpCallsigns, ptpUids and missionNames and come
// back as <marti><dest>, escaped.
func TestConvertDestinations(t *testing.T) {
	ev := decode(t, saXML)
	g := toGeoEvent(ev, `BRAVO"<x>`, "B-1")
	if len(g.GetPtpCallsigns()) != 1 || len(g.GetPtpUids()) != 1 {
		t.Fatalf("ptp %v %v", g.GetPtpCallsigns(), g.GetPtpUids())
	}
	g.MissionNames = []string{"m1"}
	back, err := fromGeoEvent(g)
	if err != nil {
		t.Fatal(err)
	}
	want := []cot.Dest{{Callsign: `BRAVO"<x>`}, {UID: "B-1"}, {Mission: "m1"}}
	if back.Detail.Marti == nil || len(back.Detail.Marti.Dests) != 3 {
		t.Fatalf("marti %+v", back.Detail.Marti)
	}
	for i, d := range want {
		if back.Detail.Marti.Dests[i] != d {
			t.Errorf("dest %d: %+v, want %+v", i, back.Detail.Marti.Dests[i], d)
		}
	}
	g.PtpUids = make([]string, maxDests)
	if _, err := fromGeoEvent(g); err == nil {
		t.Fatal("too many destinations accepted")
	}
}

// What does not make one valid event is refused: a broken or foreign
// other, an attempt to close the event early, a missing uid.
func TestConvertRefuses(t *testing.T) {
	now := time.Now().UnixMilli()
	base := func(other string) *fedproto.GeoEvent {
		return &fedproto.GeoEvent{Uid: "X", Type: "a-f-G", SendTime: now, StartTime: now, StaleTime: now + 1000, Other: other}
	}
	for name, g := range map[string]*fedproto.GeoEvent{
		"unclosed":      base("<detail><remarks>x</detail>"),
		"not detail":    base("<remarks/>"),
		"after empty":   base("<detail/><x/>"),
		"no end":        base("<detail>"),
		"escape event":  base(`<detail></detail></event><event version="2.0" uid="Y" type="a" time="x"><detail></detail>`),
		"no uid":        {Type: "a-f-G", SendTime: now, StartTime: now, StaleTime: now + 1000},
		"control chars": base("<detail><remarks>\x01</remarks></detail>"),
	} {
		if ev, err := fromGeoEvent(g); err == nil {
			t.Errorf("%s: accepted as %+v", name, ev)
		}
	}
	if _, err := fromGeoEvent(nil); err == nil {
		t.Error("nil accepted")
	}
	for _, other := range []string{"", "<detail/>", " <detail></detail> "} {
		if _, err := fromGeoEvent(base(other)); err != nil {
			t.Errorf("%q refused: %v", other, err)
		}
	}
}

// The memory of received events: a copy is refused within the window,
// forgotten after two, and what was added can be read back.
func TestRecent(t *testing.T) {
	r := newRecent(time.Minute, 2)
	t0 := time.Unix(1000, 0)
	o := &origin{hops: 2}
	if !r.add(1, o, t0) || r.add(1, &origin{}, t0) {
		t.Fatal("add")
	}
	if r.get(1, t0) != o || r.get(2, t0) != nil {
		t.Fatal("get")
	}
	r.add(2, &origin{}, t0)
	r.add(3, &origin{}, t0) // full: a new generation; 1 is still remembered in the previous one
	if r.get(1, t0) != o || r.add(1, &origin{}, t0) {
		t.Fatal("forgot too early")
	}
	if r.get(1, t0.Add(3*time.Minute)) != nil {
		t.Fatal("remembered after two windows")
	}
}
