package mgmt_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"outpost/appliance/config"
	"outpost/appliance/cot"
	"outpost/appliance/takclient"
	"outpost/internal/testkit"
)

// TestEmergencies: each emergency type reaches a TCP and a TLS client as its
// own CoT type with ATAK's detail; active emergencies are listed, replayed
// to clients that connect later, re-broadcast, kept across a restart, and
// cancelled for everyone by deleteEmergency.
func TestEmergencies(t *testing.T) {
	dir := t.TempDir()
	mutate := func(c *config.Config) { c.DataDir = dir; c.EmergencyRepeatInterval = time.Second }
	e := newEnv(t, mutate)
	tcp, tls := e.clients(t)
	cases := []struct{ typ, code string }{
		{"911 Alert", "b-a-o-tbl"}, {"Ring The Bell", "b-a-o-pan"}, {"Geo-fence Breached", "b-a-g"}, {"In Contact", "b-a-o-opn"},
		{"in contact", "b-a-o-opn"}, // any case
	}
	raised := map[string]string{} // uid -> type words
	for i, c := range cases {
		lat, lon := 43.84+float64(i)*0.01, -66.11
		uid := e.post("POST", "/ManageEmergency/postEmergency", map[string]any{"emergencyType": c.typ, "latitude": lat,
			"longitude": lon, "name": "corvo", "remarks": "CALL 911 NOW"})
		if !strings.HasSuffix(uid, "-9-1-1") || len(uid) != 36+6 {
			t.Fatalf("uid %q, want <uuid>-9-1-1", uid)
		}
		raised[uid] = c.code
		for _, cl := range []*takclient.Client{tcp, tls} {
			ev := next(t, cl, uid, "")
			if ev.Type != c.code || ev.How != "h-e" || ev.Detail.Emergency == nil || ev.Detail.Emergency.Text != "corvo" ||
				ev.Detail.Emergency.Cancel || ev.Detail.Contact == nil || ev.Detail.Contact.Callsign != "corvo-Alert" ||
				!detail(ev, "<remarks>CALL 911 NOW</remarks>") || !near(ev.Point.Lat, lat, 1e-9) || ev.Point.Lon != lon {
				t.Fatalf("%s: %s", c.typ, ev.AppendXML(nil))
			}
			if !strings.EqualFold(ev.Detail.Emergency.Type, c.typ) {
				t.Errorf("emergency type %q, want %q", ev.Detail.Emergency.Type, c.typ)
			}
		}
	}
	list := e.emergencies()
	if len(list) != len(cases) {
		t.Fatalf("getEmergency lists %d, want %d: %v", len(list), len(cases), list)
	}
	for uid, code := range raised {
		it := list[uid]
		if it.Name != "corvo" || it.Lon != -66.11 || it.Type == "" || (code == "b-a-o-tbl") != (it.Type == "911 Alert") {
			t.Errorf("item %+v for %s", it, code)
		}
	}
	// Re-broadcast while active.
	for uid := range raised {
		next(t, tcp, uid, "")
		break
	}

	// A restart keeps them: listed, replayed.
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := e.app.Close(ctx); err != nil {
		t.Fatal(err)
	}
	e = newEnv(t, mutate)
	if got := e.emergencies(); len(got) != len(cases) {
		t.Fatalf("after a restart: %v", got)
	}
	tcp, tls = e.clients(t) // clients() reads the replay away: check it on a third one
	late := e.app.DialTCP(t)
	replay := uids(joined(t, late))
	for uid := range raised {
		if replay[uid] != 1 {
			t.Fatalf("after a restart a new client was replayed %v, want every active emergency", replay)
		}
	}

	// Cancel one: everyone receives the cancellation; it is gone.
	var victim string
	for uid, code := range raised {
		if code == "b-a-o-pan" {
			victim = uid
		}
	}
	if got := e.post("DELETE", "/ManageEmergency/deleteEmergency", map[string]any{"uid": victim}); got != victim {
		t.Fatalf("delete answered %q", got)
	}
	for _, cl := range []*takclient.Client{tcp, tls, late} {
		ev := next(t, cl, victim, "b-a-o-can")
		if ev.Detail.Emergency == nil || !ev.Detail.Emergency.Cancel || ev.Detail.Emergency.Text != "corvo" || !near(ev.Point.Lat, 43.85, 1e-9) {
			t.Fatalf("cancellation %s", ev.AppendXML(nil))
		}
	}
	if _, ok := e.emergencies()[victim]; ok {
		t.Fatal("a cancelled emergency is still listed")
	}
	late2 := e.app.DialTCP(t)
	if got := uids(joined(t, late2)); got[victim] != 0 || len(got) != len(cases)-1 {
		t.Fatalf("replay after a cancel: %v", got)
	}
	// The query form works too; unknown and already cancelled uids are 404.
	for uid := range raised {
		if uid != victim {
			e.post("DELETE", "/ManageEmergency/deleteEmergency?uid="+uid, nil)
		}
	}
	if got := e.emergencies(); len(got) != 0 {
		t.Fatalf("all cancelled, still listed: %v", got)
	}
	for _, uid := range []string{victim, "nope-9-1-1"} {
		r := e.do("DELETE", "/ManageEmergency/deleteEmergency", e.admin, map[string]any{"uid": uid})
		want(t, "cancel "+uid, r, 404)
		if !strings.HasPrefix(r.Message(), `uid: no active emergency with uid "`+uid+`"`) {
			t.Fatalf("cancel %s: %q", uid, r.Message())
		}
	}
	if len(e.app.Broker().Retained()) != 0 {
		t.Fatalf("cancelled emergencies still retained: %v", e.app.Broker().Retained())
	}
}

// alert is an emergency as ATAK raises one (the AlertTrouble capture's
// shape), optionally addressed to a callsign.
func alert(sender, typ, words, callsign string, lat, lon float64, to string) *cot.Event {
	now := time.Now().UTC()
	xml := `<contact callsign="` + callsign + `-Alert"/><emergency type="` + words + `">` + callsign + `</emergency>` +
		`<link relation="p-p" type="a-f-G-U-C" uid="` + sender + `"/><remarks>CALL 911 NOW</remarks>`
	if to != "" {
		xml += `<marti><dest callsign="` + to + `"/></marti>`
	}
	ev, err := cot.Decode((&cot.Event{Version: "2.0", UID: sender + "-9-1-1", Type: typ, How: "h-e", Time: now, Start: now,
		Stale: now.Add(10 * time.Second), Point: cot.Point{Lat: lat, Lon: lon, Hae: 162, Ce: cot.Unknown, Le: cot.Unknown},
		Detail: cot.Detail{XML: []byte(xml)}}).AppendXML(nil))
	if err != nil {
		panic(err)
	}
	return ev
}

// cancelAlert is ATAK's cancellation (the AlertCancel capture's shape).
func cancelAlert(sender, callsign string) *cot.Event {
	now := time.Now().UTC()
	return &cot.Event{Version: "2.0", UID: sender + "-9-1-1", Type: "b-a-o-can", How: "h-e", Time: now, Start: now,
		Stale: now.Add(10 * time.Second), Point: cot.Point{Lat: 55.75, Lon: 37.62, Hae: 162, Ce: cot.Unknown, Le: cot.Unknown},
		Detail: cot.Detail{XML: []byte(`<emergency cancel="true">` + callsign + `</emergency>`),
			Emergency: &cot.Emergency{Cancel: true, Text: callsign}}}
}

// TestClientEmergencies: emergencies clients raise over CoT are tracked:
// listed by getEmergency, replayed to clients that connect later (unless
// addressed to chosen recipients), removed by the client's cancellation,
// and cancellable through the API.
func TestClientEmergencies(t *testing.T) {
	e := newEnv(t, nil)
	ann := e.app.DialTLS(t, e.app.Issue(t, "ann"))
	bob := e.app.DialTCP(t)
	joined(t, ann)
	joined(t, bob)
	if err := ann.Send(takclient.SA("ANDROID-ann", "ann", 55.75, 37.62)); err != nil {
		t.Fatal(err)
	}
	if err := bob.Send(takclient.SA("ANDROID-bob", "bob", 55.76, 37.63)); err != nil {
		t.Fatal(err)
	}
	next(t, bob, "ANDROID-ann", "")
	if err := ann.Send(alert("ANDROID-ann", "b-a-o-tbl", "911 Alert", "ann", 55.7555821, 37.6270905, "")); err != nil {
		t.Fatal(err)
	}
	next(t, bob, "ANDROID-ann-9-1-1", "b-a-o-tbl") // relayed as ever
	testkit.WaitFor(t, "the client's emergency in getEmergency", func() bool {
		_, ok := e.emergencies()["ANDROID-ann-9-1-1"]
		return ok
	})
	it := e.emergencies()["ANDROID-ann-9-1-1"]
	if it.Name != "ann" || it.Type != "911 Alert" || it.Lat != 55.7555821 || it.Lon != 37.6270905 {
		t.Fatalf("listed as %+v", it)
	}
	// A client connecting later learns of it, current (not stale).
	late := e.app.DialTCP(t)
	var got *cot.Event
	for _, ev := range joined(t, late) {
		if ev.UID == "ANDROID-ann-9-1-1" {
			got = ev
		}
	}
	if got == nil || got.Type != "b-a-o-tbl" || got.Stale.Before(time.Now().Add(time.Hour)) || got.Detail.Emergency == nil {
		t.Fatalf("late client replay: %v", got)
	}

	// Addressed to one callsign: tracked, listed, never widened.
	if err := bob.Send(alert("ANDROID-bob", "b-a-o-opn", "In Contact", "bob", 55.76, 37.63, "ann")); err != nil {
		t.Fatal(err)
	}
	next(t, ann, "ANDROID-bob-9-1-1", "b-a-o-opn")
	testkit.WaitFor(t, "the directed emergency in getEmergency", func() bool {
		return e.emergencies()["ANDROID-bob-9-1-1"].Type == "In Contact"
	})
	late2 := e.app.DialTCP(t)
	if r := uids(joined(t, late2)); r["ANDROID-bob-9-1-1"] != 0 || r["ANDROID-ann-9-1-1"] != 1 {
		t.Fatalf("replay %v: the directed alert must not reach others", r)
	}

	// The client cancels: gone from the list and the replay.
	if err := ann.Send(cancelAlert("ANDROID-ann", "ann")); err != nil {
		t.Fatal(err)
	}
	next(t, bob, "ANDROID-ann-9-1-1", "b-a-o-can")
	testkit.WaitFor(t, "the cancelled emergency to leave the list", func() bool {
		_, ok := e.emergencies()["ANDROID-ann-9-1-1"]
		return !ok
	})
	late3 := e.app.DialTCP(t)
	if r := uids(joined(t, late3)); r["ANDROID-ann-9-1-1"] != 0 {
		t.Fatalf("a cancelled alert is still replayed: %v", r)
	}
	// The operator cancels bob's alert through the API: everyone is told.
	e.post("DELETE", "/ManageEmergency/deleteEmergency", map[string]any{"uid": "ANDROID-bob-9-1-1"})
	ev := next(t, ann, "ANDROID-bob-9-1-1", "b-a-o-can")
	if ev.Detail.Emergency == nil || !ev.Detail.Emergency.Cancel || ev.Detail.Emergency.Text != "bob" {
		t.Fatalf("API cancel of a client alert: %s", ev.AppendXML(nil))
	}
	next(t, bob, "ANDROID-bob-9-1-1", "b-a-o-can")
	if got := e.emergencies(); len(got) != 0 {
		t.Fatalf("still listed: %v", got)
	}
}
