package cot

import (
	"bytes"
	"sync"
	"testing"
	"time"
)

func TestIsControl(t *testing.T) {
	tests := []struct {
		typ           string
		control, ping bool
	}{
		{"t-x-c-t", true, true},
		{"t-x-c-t-r", true, false},
		{"t-x-takp-v", true, false},
		{"t-x-takp-q", true, false},
		{"t-x-takp-r", true, false},
		{"t-x-c-f", true, false},
		{"t-x-c-m", true, false},
		{"t-x-c-i-e", true, false},
		{"t-x-c-i-d", true, false},
		{"t-b", true, false},
		{"t-b-a", true, false},
		{"a-f-G-U-C", false, false},
		{"b-t-f", false, false},
		{"t-x-d-d", false, false},
		{"t-x-c", false, false},
		{"t-x-c-t-x", false, false},
		{"t-x-takp", false, false},
		{"", false, false},
	}
	for _, tc := range tests {
		if got := IsControl(tc.typ); got != tc.control {
			t.Errorf("IsControl(%q) = %v", tc.typ, got)
		}
		if got := IsPing(tc.typ); got != tc.ping {
			t.Errorf("IsPing(%q) = %v", tc.typ, got)
		}
	}
}

func TestIsSA(t *testing.T) {
	tests := []struct {
		typ     string
		contact *Contact
		want    bool
	}{
		{"a-f-G-U-C", &Contact{Callsign: "A"}, true},
		{"a-h-G", &Contact{Callsign: "A"}, true},
		{"a-f-G-U-C", &Contact{Callsign: "A", Endpoint: "*:-1:stcp"}, true},
		{"a-f-G-U-C", &Contact{Endpoint: "x"}, false},
		{"a-f-G-U-C", nil, false},
		{"b-t-f", &Contact{Callsign: "A"}, false},
	}
	for _, tc := range tests {
		e := &Event{Type: tc.typ, Detail: Detail{Contact: tc.contact}}
		if got := e.IsSA(); got != tc.want {
			t.Errorf("IsSA(%s, %+v) = %v", tc.typ, tc.contact, got)
		}
	}
}

// TestIsSAPlacedObjects: a marker a user placed carries a callsign too, but
// a parent link or <archive/> says it is not its sender's own position;
// what only a client's own report carries wins over those marks.
func TestIsSAPlacedObjects(t *testing.T) {
	parent := []Link{{UID: "ANDROID-1", Type: "a-f-G-U-C", Relation: "p-p"}}
	tests := []struct {
		name string
		d    Detail
		want bool
	}{
		{"parent link", Detail{Contact: &Contact{Callsign: "U.16"}, Links: parent}, false},
		{"archive", Detail{Contact: &Contact{Callsign: "U.16"}, XML: []byte(`<contact callsign="U.16"/><archive/>`)}, false},
		{"other relation", Detail{Contact: &Contact{Callsign: "A"}, Links: []Link{{UID: "x", Relation: "p-c"}}}, true},
		{"endpoint wins", Detail{Contact: &Contact{Callsign: "A", Endpoint: "*:-1:stcp"}, Links: parent}, true},
		{"takv wins", Detail{Contact: &Contact{Callsign: "A"}, Takv: &Takv{Platform: "WinTAK-CIV"}, XML: []byte("<archive/>")}, true},
		{"__group wins", Detail{Contact: &Contact{Callsign: "A"}, Group: &Group{Name: "Cyan"}, Links: parent}, true},
	}
	for _, tc := range tests {
		e := &Event{Type: "a-u-G", Detail: tc.d}
		if got := e.IsSA(); got != tc.want {
			t.Errorf("%s: IsSA = %v", tc.name, got)
		}
	}
}

// TestIsSACaptures: over the real captures, the clients' presence reports
// (and a bare feed track) are position reports; ATAK's dropped markers are
// not.
func TestIsSACaptures(t *testing.T) {
	want := map[string]bool{
		"Presence_InitialATAK.cot":     true,
		"Presence_roleSniper.cot":      true,
		"FrendlyAircraftSteaming.cot":  true, // a bare track: callsign, no marks of a placed object
		"Marker - 2525.cot":            false,
		"Marker - Icon Set.cot":        false,
		"Mission_NewMarker - 2525.cot": false,
	}
	seen := map[string]bool{}
	for _, c := range loadCaptures(t) {
		for _, e := range captureEvents(t, c) {
			w, listed := want[c.name]
			if !listed {
				if e.IsSA() {
					t.Errorf("%s (%s) counted as a position report", c.name, e.Type)
				}
				continue
			}
			seen[c.name] = true
			if got := e.IsSA(); got != w {
				t.Errorf("%s (%s): IsSA = %v, want %v", c.name, e.Type, got, w)
			}
		}
	}
	if len(seen) != len(want) {
		t.Fatalf("captures found %v, want all of %v", seen, want)
	}
}

// checkServerEvent checks what every server-built event carries (protocol.md §1,
// §4, §5) and that it survives both encodings.
func checkServerEvent(t *testing.T, e *Event, now time.Time, typ, uid, how string, ttl time.Duration, unknown float64) {
	t.Helper()
	if e.Type != typ || e.How != how || e.Version != "2.0" || (uid != "" && e.UID != uid) {
		t.Errorf("header %s %s %s %s", e.Type, e.UID, e.How, e.Version)
	}
	if !e.Time.Equal(now) || !e.Start.Equal(now) || !e.Stale.Equal(now.Add(ttl)) {
		t.Errorf("times %v %v %v", e.Time, e.Start, e.Stale)
	}
	if e.Point != (Point{0, 0, 0, unknown, unknown}) {
		t.Errorf("point %+v", e.Point)
	}
	x := e.AppendXML(nil)
	back, err := Decode(x)
	if err != nil {
		t.Fatalf("%s does not decode: %v", x, err)
	}
	if err := compareEvents(e, back, false); err != nil {
		t.Error(err)
	}
	if err := compareViews(&e.Detail, &back.Detail); err != nil {
		t.Errorf("typed views of the built event do not match its XML: %v", err)
	}
	p, err := e.MarshalProto()
	if err != nil {
		t.Fatal(err)
	}
	if back, err = DecodeProto(p); err != nil {
		t.Fatal(err)
	} else if err := compareEvents(e, back, true); err != nil {
		t.Error(err)
	}
}

func TestServerEvents(t *testing.T) {
	now := time.Date(2026, 11, 22, 11, 0, 0, 123456789, time.FixedZone("X", 3600))
	want := time.Date(2026, 11, 22, 10, 0, 0, 123e6, time.UTC)
	pong := NewPong(now)
	checkServerEvent(t, pong, want, "t-x-c-t-r", "takPong", "h-g-i-g-o", 20*time.Second, Unknown)
	if len(pong.Detail.XML) != 0 {
		t.Errorf("pong detail %s", pong.Detail.XML)
	}
	dep := NewDeparture(`ANDROID-"1"`, "a-f-G-U-C", now)
	checkServerEvent(t, dep, want, "t-x-d-d", "", "h-g-i-g-o", 20*time.Second, Unknown)
	if string(dep.Detail.XML) != `<link uid="ANDROID-&quot;1&quot;" type="a-f-G-U-C" relation="p-p"/>` {
		t.Errorf("departure detail %s", dep.Detail.XML)
	}
	if dep2 := NewDeparture("x", "a", now); dep2.UID == dep.UID {
		t.Error("departures share a uid")
	}
}

func TestWithoutMarti(t *testing.T) {
	tests := []struct {
		name, detail, want string
		same               bool
	}{
		{"no marti", `<contact callsign="A"/>`, `<contact callsign="A"/>`, true},
		{"empty detail", ``, ``, true},
		{"marti removed", `<contact callsign="A"/><marti><dest callsign="B"/></marti><remarks>r</remarks>`, `<contact callsign="A"/><remarks>r</remarks>`, false},
		{"self-closing marti", "<marti/>\n<a/>", "<a/>", false},
		{"only marti", `<marti><dest uid="x"/></marti>`, ``, false},
		{"nested marti kept", `<x><marti/></x>`, `<x><marti/></x>`, false},
		{"several", `<marti/><a/><marti><dest/></marti>`, `<a/>`, false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			e, err := Decode([]byte(ev(`<detail>` + tc.detail + `</detail>`)))
			if err != nil {
				t.Fatal(err)
			}
			before := string(e.Detail.XML)
			got := e.WithoutMarti()
			if (got == e) != tc.same {
				t.Errorf("returned the event itself: %v, want %v", got == e, tc.same)
			}
			if string(got.Detail.XML) != tc.want || got.Detail.Marti != nil {
				t.Errorf("detail %q (marti %v), want %q", got.Detail.XML, got.Detail.Marti, tc.want)
			}
			if string(e.Detail.XML) != before {
				t.Error("original event changed")
			}
			if got.Detail.Contact != e.Detail.Contact || got.UID != e.UID {
				t.Error("copy lost other fields")
			}
		})
	}
}

func TestNegotiator(t *testing.T) {
	query := func(version string) *Event {
		d := ""
		if version != "" {
			d = `<detail><TakControl><TakRequest version="` + version + `"/></TakControl></detail>`
		}
		e, err := Decode([]byte(`<event uid="ANDROID-1" type="t-x-takp-q" how="m-g" time="2026-11-22T10:00:00Z" stale="2026-11-22T10:01:00Z">` + d + `</event>`))
		if err != nil {
			t.Fatal(err)
		}
		return e
	}
	other, _ := Decode([]byte(sa("A")))
	type step struct {
		ev                  *Event
		reply, switchTo, ok bool
	}
	tests := []struct {
		name  string
		steps []step
	}{
		{"accept version 1", []step{{query("1"), true, true, true}}},
		{"second request refused", []step{{query("1"), true, true, true}, {query("1"), false, false, true}}},
		{"unsupported version", []step{{query("2"), false, false, true}, {query("1"), true, true, true}}},
		{"version 0", []step{{query("0"), false, false, true}}},
		{"no TakControl", []step{{query(""), false, false, true}}},
		{"not a request", []step{{other, false, false, false}, {nil, false, false, false}, {query("1"), true, true, true}}},
	}
	now := time.Date(2026, 11, 22, 10, 0, 0, 0, time.UTC)
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			n := NewNegotiator("SERVER-UID")
			for i, s := range tc.steps {
				reply, switchTo, ok := n.Handle(s.ev, now)
				if ok != s.ok || switchTo != s.switchTo {
					t.Fatalf("step %d: switchTo %v ok %v, want %v %v", i, switchTo, ok, s.switchTo, s.ok)
				}
				if !ok {
					if reply != nil {
						t.Fatalf("step %d: reply without a request", i)
					}
					continue
				}
				checkServerEvent(t, reply, now, "t-x-takp-r", "SERVER-UID", "m-g", time.Minute, 999999)
				want := `<TakControl><TakResponse status="false"/></TakControl>`
				if s.reply {
					want = `<TakControl><TakResponse status="true"/></TakControl>`
				}
				if string(reply.Detail.XML) != want || *reply.Detail.TakControl.Response != s.reply {
					t.Errorf("step %d: reply detail %s", i, reply.Detail.XML)
				}
			}
		})
	}
}

func TestNegotiatorOffer(t *testing.T) {
	now := time.Date(2026, 11, 22, 10, 0, 0, 0, time.UTC)
	n := NewNegotiator("SERVER-UID")
	var wg sync.WaitGroup
	offers := make(chan *Event, 10)
	for range 10 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if o := n.Offer(now); o != nil {
				offers <- o
			}
		}()
	}
	wg.Wait()
	close(offers)
	var got []*Event
	for o := range offers {
		got = append(got, o)
	}
	if len(got) != 1 {
		t.Fatalf("%d offers, want exactly 1", len(got))
	}
	o := got[0]
	checkServerEvent(t, o, now, "t-x-takp-v", "SERVER-UID", "m-g", time.Minute, 999999)
	if string(o.Detail.XML) != `<TakControl><TakProtocolSupport version="1"/></TakControl>` || o.Detail.TakControl.SupportVersion != 1 {
		t.Errorf("offer detail %s", o.Detail.XML)
	}
	x := o.AppendXML(nil)
	if !bytes.Contains(x, []byte(`<point lat="0" lon="0" hae="0" ce="999999" le="999999"/>`)) {
		t.Errorf("offer point: %s", x)
	}
}
