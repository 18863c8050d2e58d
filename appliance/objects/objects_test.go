package objects

import (
	"context"
	"errors"
	"log/slog"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"outpost/appliance/broker"
	"outpost/appliance/cot"
	"outpost/appliance/geo"
	"outpost/appliance/store"
	"outpost/internal/testkit"
)

func TestGeoCoTType(t *testing.T) {
	for _, tc := range []struct {
		in     string
		letter byte
		want   string
	}{
		{"Sniper", 'h', "a-h-G-U-C-I-d"}, {"sniper", 'f', "a-f-G-U-C-I-d"}, {" anti tank ", 'n', "a-n-G-U-C-A-A"},
		{"vehicle accident", 'u', "a-u-X-i-t-v-a"}, {"Ground", 'h', "a-h-G"}, {"a-f-G-U-C", 'h', "a-h-G-U-C"},
		{"a-.-A", 'n', "a-n-A"}, {"a-f", 'u', "a-u"}, {"a-f-G-E-X-N_2", 'f', "a-f-G-E-X-N_2"},
	} {
		got, err := GeoCoTType(tc.in, tc.letter)
		if err != nil || got != tc.want {
			t.Errorf("GeoCoTType(%q, %c) = %q, %v; want %q", tc.in, tc.letter, got, err, tc.want)
		}
	}
	for _, bad := range []string{"", "Dragon", "a-", "a-h-", "a-hh-G", "a-h--G", "b-m-p-s-m", "a-h-G U", `a-h-G"/>`, "A-h-G",
		"a-h-" + strings.Repeat("G", 200)} {
		if got, err := GeoCoTType(bad, 'h'); err == nil {
			t.Errorf("GeoCoTType(%q) = %q, want an error", bad, got)
		}
	}
	if _, err := GeoCoTType("Dragon", 'h'); err == nil || !strings.Contains(err.Error(), "Sniper, Medic") {
		t.Errorf("the error lists the names: %v", err)
	}
	for _, name := range GeoTypeNames() {
		code, _ := GeoCoTType(name, 'u')
		if GeoTypeName(code) != name || GeoTypeName(code[:2]+"h"+code[3:]) != name {
			t.Errorf("%s does not round-trip through %s", name, code)
		}
	}
	if GeoTypeName("a-h-G-U-C") != "" || GeoTypeName("b") != "" {
		t.Error("names for types without one")
	}
}

func TestWords(t *testing.T) {
	for w, l := range map[string]byte{"friendly": 'f', "Friend": 'f', "HOSTILE": 'h', "neutral": 'n', " unknown ": 'u'} {
		if got, ok := AttitudeLetter(w); !ok || got != l {
			t.Errorf("attitude %q: %c %v", w, got, ok)
		}
	}
	if _, ok := AttitudeLetter("evil"); ok {
		t.Error("evil is an attitude")
	}
	if AttitudeWord('f') != "friendly" || AttitudeWord('s') != "suspect" || AttitudeWord('?') != "unknown" {
		t.Error("attitude words")
	}
	for v, code := range map[string]string{"gps": "m-g", "human": "h-e", "retyped": "h-t", "machine": "m", "mensurated": "m-i",
		"estimated": "h-e", "nonCoT": "h-g-i-g-o", "gigo": "h-g-i-g-o", "GPS": "m-g"} {
		if got, ok := HowCode(v); !ok || got != code {
			t.Errorf("how %q: %q %v", v, got, ok)
		}
	}
	if _, ok := HowCode("radar"); ok {
		t.Error("radar is a how")
	}
	for w, code := range map[string]string{"911 Alert": "b-a-o-tbl", "ring the bell": "b-a-o-pan", "Geo-fence Breached": "b-a-g",
		"IN CONTACT": "b-a-o-opn"} {
		canon, got, ok := EmergencyType(w)
		if !ok || got != code || !strings.EqualFold(canon, w) || emergencyWords(code) != canon {
			t.Errorf("emergency %q: %q %q %v", w, canon, got, ok)
		}
	}
	if _, _, ok := EmergencyType("Fire"); ok {
		t.Error("Fire is an emergency type")
	}
}

func TestBuild(t *testing.T) {
	now := time.Date(2026, 11, 22, 10, 0, 0, 123456789, time.UTC)
	ev, err := buildGeo(geoEvent{uid: "u1", typ: "a-h-G", how: "m-g", point: geo.Point{Lat: 1.5, Lon: -2.25},
		callsign: `A "quoted" <name> & 'co'`, remarks: "line 1\nline 2\ttab\x01bell", linkUID: `p"1`, linkType: "a-f-G-U-C",
		stale: now.Add(time.Minute)}, now)
	if err != nil {
		t.Fatal(err)
	}
	if ev.Detail.Contact.Callsign != `A "quoted" <name> & 'co'` || len(ev.Detail.Links) != 1 || ev.Detail.Links[0].UID != `p"1` {
		t.Fatalf("escaping lost something: %s", ev.AppendXML(nil))
	}
	if !strings.Contains(string(ev.Detail.XML), "line 1&#10;line 2&#9;tab\uFFFDbell") || strings.Contains(string(ev.Detail.XML), "<archive/>") {
		t.Fatalf("remarks: %s", ev.Detail.XML)
	}
	if !ev.Time.Equal(now.Truncate(time.Millisecond)) || ev.Point.Hae != cot.Unknown || ev.Version != "2.0" {
		t.Fatalf("header: %+v", ev)
	}
	del, err := buildForceDelete("u1", "a-h-G", now)
	if err != nil || del.Type != "t-x-d-d" || del.UID == "u1" || del.Detail.Links[0] != (cot.Link{UID: "u1", Type: "a-h-G", Relation: "p-p"}) ||
		!strings.HasSuffix(string(del.Detail.XML), "<__forcedelete/>") {
		t.Fatalf("forced delete: %v %s", err, del.AppendXML(nil))
	}
	c, err := buildCancel("x-9-1-1", "bob", geo.Point{Lat: 1, Lon: 2}, now)
	if err != nil || c.Type != "b-a-o-can" || c.Detail.Emergency == nil || !c.Detail.Emergency.Cancel || c.Detail.Emergency.Text != "bob" {
		t.Fatalf("cancel: %v %s", err, c.AppendXML(nil))
	}
	if s := stripDeclaration(c.AppendXML(nil)); !strings.HasPrefix(s, "<event ") {
		t.Fatalf("stripDeclaration: %q", s)
	}
}

// fixture is a service on a real store and broker with a settable clock.
type fixture struct {
	svc   *Service
	store *store.Store
	b     *broker.Broker
	mu    sync.Mutex
	now   time.Time
	logs  *testkit.Buffer
}

func newFixture(t *testing.T, path string, opts Options) *fixture {
	t.Helper()
	if path == "" {
		path = filepath.Join(t.TempDir(), "outpost.db")
	}
	st, err := store.Open(context.Background(), path, store.Options{Logger: testkit.Discard()})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	f := &fixture{store: st, b: broker.New(broker.Options{Logger: testkit.Discard()}), now: time.Now().UTC(), logs: &testkit.Buffer{}}
	t.Cleanup(f.b.Close)
	opts.Broker, opts.Objects, opts.Events = f.b, st.Objects(), st.Events()
	opts.Now = f.clock
	opts.Logger = slog.New(slog.NewJSONHandler(f.logs, nil))
	f.svc = New(opts)
	return f
}

func (f *fixture) clock() time.Time {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.now
}

func (f *fixture) advance(d time.Duration) {
	f.mu.Lock()
	f.now = f.now.Add(d)
	f.mu.Unlock()
}

func geoInput(timeout time.Duration, repeat bool) GeoInput {
	return GeoInput{Type: "a-h-G", How: "m-g", Point: geo.Point{Lat: 1, Lon: 2}, Timeout: timeout, Repeat: repeat, Groups: store.AllGroups}
}

// TestRestoreAndExpire: kept objects are retained again after a restart,
// with their intervals; objects past their stale time are removed and
// released.
func TestRestoreAndExpire(t *testing.T) {
	path := filepath.Join(t.TempDir(), "outpost.db")
	ctx := context.Background()
	f := newFixture(t, path, Options{})
	short, err := f.svc.PostGeo(ctx, geoInput(time.Minute, true))
	if err != nil {
		t.Fatal(err)
	}
	pers, _ := f.svc.PostGeo(ctx, geoInput(0, false))
	plain, _ := f.svc.PostGeo(ctx, geoInput(time.Hour, false))
	em, err := f.svc.PostEmergency(ctx, EmergencyInput{Type: "911 alert", Point: geo.Point{Lat: 3, Lon: 4}, Groups: store.AllGroups})
	if err != nil {
		t.Fatal(err)
	}
	if n := len(f.b.Retained()); n != 3 {
		t.Fatalf("retained %d, want the repeated, the persistent and the emergency", n)
	}
	// A second service on the same file (a restart), an hour later.
	g := newFixture(t, path, Options{})
	g.advance(2 * time.Minute)
	n, err := g.svc.Restore(ctx)
	if err != nil || n != 2 {
		t.Fatalf("restored %d (%v), want the persistent object and the emergency (the repeated one went stale)", n, err)
	}
	r := g.b.Retained()
	if r[retainKey(store.KindGeo, pers)] == nil || r[retainKey(store.KindEmergency, em)] == nil || r[retainKey(store.KindGeo, short)] != nil {
		t.Fatalf("retained after restore: %v", r)
	}
	if _, err := g.store.Objects().ServerObject(ctx, short); !errors.Is(err, store.ErrNotFound) {
		t.Fatalf("the stale object is still kept: %v", err)
	}
	list, _ := g.svc.Emergencies(ctx, store.AllGroups)
	if len(list) != 1 || list[0].Name != DefaultEmergencyName || list[0].Type != "911 Alert" {
		t.Fatalf("emergencies after restore: %+v", list)
	}
	// Running expiry: the plain object goes when its hour is up.
	g.advance(time.Hour)
	runCtx, stop := context.WithCancel(ctx)
	done := make(chan struct{})
	g.svc.opts.ExpireEvery = 10 * time.Millisecond
	go func() { g.svc.Run(runCtx); close(done) }()
	testkit.WaitFor(t, "the plain object to expire", func() bool {
		_, err := g.store.Objects().ServerObject(ctx, plain)
		return errors.Is(err, store.ErrNotFound)
	})
	stop()
	<-done
	if err := g.svc.PutGeo(ctx, GeoInput{UID: plain, Type: "a-h-G", How: "m-g", Timeout: time.Minute}, Caller{Admin: true, Sees: store.AllGroups}); !errors.Is(err, ErrNotFound) {
		t.Fatalf("put of an expired object: %v", err)
	}
}

// TestClientEmergencyLimits: Observe never blocks (a full queue drops, with
// a log line), at most MaxClientEmergencies are tracked, alerts without a
// position are not tracked, and records lacking a name or type are left out
// of the list with a log line.
func TestClientEmergencyLimits(t *testing.T) {
	ctx := context.Background()
	f := newFixture(t, "", Options{MaxClientEmergencies: 2})
	alert := func(uid, typ, xml string, lat float64) *cot.Event {
		now := time.Now().UTC()
		ev, err := cot.Decode((&cot.Event{Version: "2.0", UID: uid, Type: typ, How: "h-e", Time: now, Start: now, Stale: now.Add(10 * time.Second),
			Point: cot.Point{Lat: lat, Lon: 1, Hae: cot.Unknown, Ce: cot.Unknown, Le: cot.Unknown}, Detail: cot.Detail{XML: []byte(xml)}}).AppendXML(nil))
		if err != nil {
			t.Fatal(err)
		}
		return ev
	}
	// Not running: the queue fills and Observe drops without blocking.
	for i := 0; i < cap(f.svc.observed)+5; i++ {
		f.svc.Observe(alert("flood-9-1-1", "b-a-o-tbl", `<emergency type="911 Alert">x</emergency>`, 1), false, store.AnonGroup)
	}
	f.svc.Observe(alert("not-an-alert", "a-f-G", `<contact callsign="x"/>`, 1), false, store.AnonGroup) // ignored at once
	if !strings.Contains(f.logs.String(), "relayed but not tracked: too many at once") {
		t.Fatalf("no log line for a full queue: %s", f.logs.String())
	}
	for len(f.svc.observed) > 0 {
		<-f.svc.observed
	}
	for _, ev := range []*cot.Event{
		alert("a-9-1-1", "b-a-o-tbl", `<emergency type="911 Alert">ann</emergency>`, 1),
		alert("nameless-9-1-1", "b-a-o-c", `<emergency/>`, 2), // custom, no name, no type words
		alert("c-9-1-1", "b-a-o-pan", `<emergency type="Ring The Bell">cid</emergency>`, 3),
		alert("nowhere-9-1-1", "b-a-g", `<emergency type="Geo-fence Breached">x</emergency>`, 95),
	} {
		f.svc.track(ctx, observed{ev: ev, groups: store.AnonGroup})
	}
	if n, _ := f.store.Objects().CountServerObjects(ctx, store.KindEmergency, store.OriginClient); n != 2 {
		t.Fatalf("%d client emergencies tracked, want the limit 2", n)
	}
	list, err := f.svc.Emergencies(ctx, store.AllGroups)
	if err != nil || len(list) != 1 || list[0].UID != "a-9-1-1" || list[0].Name != "ann" || list[0].Origin != store.OriginClient {
		t.Fatalf("list %+v %v", list, err)
	}
	logs := f.logs.String()
	for _, want := range []string{"too many active", "lacks required attributes", `"missing":"name,type"`} {
		if !strings.Contains(logs, want) {
			t.Errorf("log lacks %q: %s", want, logs)
		}
	}
	// ATAK repeating its alert rewrites nothing; a moved alert is kept moved.
	before, _ := f.store.Objects().ServerObject(ctx, "a-9-1-1")
	f.advance(5 * time.Second)
	f.svc.track(ctx, observed{ev: alert("a-9-1-1", "b-a-o-tbl", `<emergency type="911 Alert">ann</emergency>`, 1), groups: store.AnonGroup})
	if after, _ := f.store.Objects().ServerObject(ctx, "a-9-1-1"); !after.UpdatedAt.Equal(before.UpdatedAt) {
		t.Fatalf("a repeated alert was written again: %v -> %v", before.UpdatedAt, after.UpdatedAt)
	}
	f.svc.track(ctx, observed{ev: alert("a-9-1-1", "b-a-o-tbl", `<emergency type="911 Alert">ann</emergency>`, 1.5), groups: store.AnonGroup})
	if after, _ := f.store.Objects().ServerObject(ctx, "a-9-1-1"); after.Lat != 1.5 {
		t.Fatalf("a moved alert was not kept: %+v", after)
	}
	// A cancel by <emergency cancel="true"> on another type works too.
	f.svc.track(ctx, observed{ev: alert("a-9-1-1", "b-a-o-tbl", `<emergency cancel="true">ann</emergency>`, 1), groups: store.AnonGroup})
	if list, _ := f.svc.Emergencies(ctx, store.AllGroups); len(list) != 0 {
		t.Fatalf("after cancel: %+v", list)
	}
}
