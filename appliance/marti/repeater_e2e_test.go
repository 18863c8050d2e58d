package marti_test

import (
	"strings"
	"testing"
	"time"

	"outpost/appliance/cot"
	"outpost/appliance/netx"
	"outpost/internal/testkit"
)

type repeatable struct {
	UID, RepeatType, CoTType, DateTimeActivated, XML, Callsign string
}

// clientAlert is ATAK's 911 Alert from sender (stale in ten minutes).
func clientAlert(t *testing.T, sender string) *cot.Event {
	t.Helper()
	now := time.Now().UTC()
	ev, err := cot.Decode((&cot.Event{Version: "2.0", UID: sender + "-9-1-1", Type: "b-a-o-tbl", How: "h-e", Time: now, Start: now,
		Stale: now.Add(10 * time.Minute), Point: cot.Point{Lat: 59.3, Lon: 18.1, Hae: 20, Ce: cot.Unknown, Le: cot.Unknown},
		Detail: cot.Detail{XML: []byte(`<contact callsign="RPT-Alert"/><emergency type="911 Alert">RPT</emergency>` +
			`<link relation="p-p" type="a-f-G-U-C" uid="` + sender + `"/>`)}}).AppendXML(nil))
	if err != nil {
		t.Fatal(err)
	}
	return ev
}

// TestRepeater drives the official server's repeater API on both
// listeners: a 911 Alert a client raised over CoT is listed (uid,
// repeatType "911", cotType, callsign, its XML, when it began) with the
// period in milliseconds; setting the period is refused (it is the
// configuration's); removing an unknown uid is 404, a bad one 400; removing
// the alert cancels it: the other clients get b-a-o-can and the list is
// empty.
func TestRepeater(t *testing.T) {
	e := start(t, nil)
	raiser, watcher := e.DialTCP(t), e.DialTCP(t)
	watcher.Send(saOf("WATCHER"))
	if err := raiser.Send(clientAlert(t, "ANDROID-RPT")); err != nil {
		t.Fatal(err)
	}
	const uid = "ANDROID-RPT-9-1-1"
	list := func(l string) []repeatable {
		t.Helper()
		var out struct {
			Version, Type string
			Data          []repeatable
		}
		r := e.do(t, l, "GET", "/Marti/api/repeater/list", nil)
		r.JSON(t, &out)
		if r.Status != 200 || out.Version != "1.0.0" || out.Type != "java.lang.String" {
			t.Fatalf("%s list: %d %s", l, r.Status, r.Body)
		}
		return out.Data
	}
	testkit.WaitFor(t, "the alert tracked", func() bool { return len(list(netx.ListenerHTTP)) == 1 })
	for _, l := range both {
		got := list(l)
		if len(got) != 1 || got[0].UID != uid || got[0].RepeatType != "911" || got[0].CoTType != "b-a-o-tbl" ||
			got[0].Callsign != "RPT-Alert" || !strings.Contains(got[0].XML, `type="911 Alert"`) || got[0].DateTimeActivated == "" {
			t.Fatalf("%s list: %+v", l, got)
		}
		r := e.do(t, l, "GET", "/Marti/api/repeater/period", nil)
		if r.Status != 200 || !strings.Contains(string(r.Body), `"data":3000`) {
			t.Fatalf("%s period: %d %s", l, r.Status, r.Body)
		}
		wantRefusal(t, "set period", e.do(t, l, "POST", "/Marti/api/repeater/period", 5000), 409, "emergencyRepeatInterval")
		wantRefusal(t, "remove unknown", e.do(t, l, "GET", "/Marti/api/repeater/remove/no-such-alert", nil), 404, "no active emergency")
		wantRefusal(t, "remove bad uid", e.do(t, l, "GET", "/Marti/api/repeater/remove/a%01b", nil), 400, "uid")
	}
	if got := list(netx.ListenerHTTPS); len(got) != 1 {
		t.Fatalf("a refusal changed the list: %+v", got)
	}
	r := e.do(t, netx.ListenerHTTPS, "GET", "/Marti/api/repeater/remove/"+uid, nil)
	if r.Status != 200 || !strings.Contains(string(r.Body), `"data":true`) {
		t.Fatalf("remove: %d %s", r.Status, r.Body)
	}
	if _, err := watcher.WaitFor(func(ev *cot.Event) bool { return ev.Type == "b-a-o-can" && ev.UID == uid }, 10*time.Second); err != nil {
		t.Fatalf("the cancellation did not reach the other client: %v", err)
	}
	for _, l := range both {
		if got := list(l); len(got) != 0 {
			t.Fatalf("%s list after remove: %+v", l, got)
		}
	}
}

// TestNodeTakRepeater drives the repeater routes with @tak-ps/node-tak
// 8.9.0's Repeater class on both listeners (marti-repeater.mjs), every
// answer checked against its schemas: list, period, setting the period
// (refused: Outpost's configuration holds it) and delete, which cancels the
// alert.
func TestNodeTakRepeater(t *testing.T) {
	testkit.RequireInterop(t, "@tak-ps/node-tak")
	e := start(t, nil)
	raiser := e.DialTCP(t)
	certFile, keyFile := writePEM(t, e, "noderepeater")
	for _, l := range both {
		sender := "ANDROID-NODE-" + l
		if err := raiser.Send(clientAlert(t, sender)); err != nil {
			t.Fatal(err)
		}
		uid := sender + "-9-1-1"
		testkit.WaitFor(t, "the alert tracked", func() bool {
			return strings.Contains(string(e.do(t, l, "GET", "/Marti/api/repeater/list", nil).Body), uid)
		})
		env := []string{"OUTPOST_URL=" + strings.TrimSuffix(e.URL(t, l, "/"), "/"), "ALERT_UID=" + uid}
		if l == netx.ListenerHTTPS {
			env = append(env, "CERT="+certFile, "KEY="+keyFile)
		}
		steps := runNode(t, "marti-repeater.mjs", env...)
		for _, name := range []string{"list", "period", "setPeriod", "delete", "done"} {
			if s, ok := steps[name]; !ok || !s.OK {
				t.Errorf("%s step %s: %+v", l, name, s)
			}
		}
	}
}
