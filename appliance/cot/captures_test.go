package cot

import (
	"bytes"
	"io"
	"math/rand/v2"
	"strings"
	"testing"

	"google.golang.org/protobuf/proto"

	"outpost/appliance/cot/takproto"
)

// captureExpect lists the captures that are not exactly one clean event.
var captureExpect = map[string]struct {
	events int
	errs   []string // SyntaxError messages, in order
}{
	"EmergencyCancel.cot":         {events: 2},
	"exCheck_template_Create.cot": {events: 2},
	// Its attributes come after the '>' of <event>: as XML it is an
	// event without uid (and with text content).
	"Presence_InitialWinTak.cot": {errs: []string{"<event> has no uid"}},
	// <0 value="..."/> inside detail: no XML parser accepts that name.
	"Mission - add overlay Rectangle.cot": {errs: []string{"invalid element name"}},
	// The event closes before <detail>; the stray detail after </event>
	// is junk between messages and skipped.
	"presenceHealth.cot": {events: 1},
}

// captureEvents decodes a capture as a stream and checks it against
// captureExpect.
func captureEvents(t *testing.T, c capture) []*Event {
	t.Helper()
	want, ok := captureExpect[c.name]
	if !ok {
		want.events = 1
	}
	d := NewStreamDecoder(bytes.NewReader(c.data), 0)
	var evs []*Event
	var errs []string
	total := 0
	for {
		m, err := d.Next()
		total += m.Size
		if err == io.EOF {
			break
		}
		if se, ok := err.(*SyntaxError); ok {
			errs = append(errs, se.Msg)
			continue
		}
		if err != nil {
			t.Fatalf("Next: %v", err)
		}
		if m.Event == nil {
			t.Fatalf("message without event: %+v", m)
		}
		evs = append(evs, m.Event)
	}
	if len(evs) != want.events {
		t.Fatalf("decoded %d events, want %d (errors %q)", len(evs), want.events, errs)
	}
	if len(errs) != len(want.errs) {
		t.Fatalf("errors %q, want %q", errs, want.errs)
	}
	for i := range errs {
		if !strings.Contains(errs[i], want.errs[i]) {
			t.Errorf("error %q, want it to mention %q", errs[i], want.errs[i])
		}
	}
	if total > len(c.data) || (len(errs) == 0 && c.name != "presenceHealth.cot" && total != len(bytes.TrimRight(c.data, " \t\r\n"))) {
		t.Errorf("message sizes add up to %d, file has %d bytes", total, len(c.data))
	}
	return evs
}

// TestCapturesStreamSplits feeds every capture whole, one byte per read and
// in random-size reads: the same messages must come out.
func TestCapturesStreamSplits(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	for _, c := range loadCaptures(t) {
		t.Run(c.name, func(t *testing.T) {
			whole := decodeStream(bytes.NewReader(c.data), 0, ProtocolXML)
			if whole.final != io.EOF {
				t.Fatalf("final error %v, want io.EOF", whole.final)
			}
			if len(whole.items) == 0 {
				t.Fatal("nothing decoded")
			}
			cases := map[string][]int{"1-byte": {1}, "7-byte": {7}}
			sizes := make([]int, 64)
			for i := range sizes {
				sizes[i] = 1 + rng.IntN(300)
			}
			cases["random"] = sizes
			for name, sizes := range cases {
				got := decodeStream(&chunkReader{data: c.data, sizes: sizes}, 0, ProtocolXML)
				if !sameOutcome(whole, got) {
					t.Errorf("%s reads:\n%v\nwhole:\n%v", name, got, whole)
				}
			}
		})
	}
}

// TestCapturesRoundTrip decodes every capture, re-encodes every event to XML
// and to protobuf, decodes again and compares meaning.
func TestCapturesRoundTrip(t *testing.T) {
	for _, c := range loadCaptures(t) {
		t.Run(c.name, func(t *testing.T) {
			evs := captureEvents(t, c)
			srcDetails := sourceDetails(c.data)
			for i, ev := range evs {
				if i < len(srcDetails) {
					got, err := detailTree(ev.Detail.XML)
					if err != nil {
						t.Fatalf("Detail.XML does not parse with encoding/xml: %v", err)
					}
					if a, b := srcDetails[i].str(false), got.str(false); a != b {
						t.Errorf("decoded detail differs from the source:\n  %s\n  %s", a, b)
					}
				}
				checkXMLTrip(t, ev)
				checkProtoTrip(t, ev)
			}
		})
	}
}

// sourceDetails parses a capture with encoding/xml and returns the detail
// of each event (an empty one for events without detail), or nil if
// encoding/xml rejects the file.
func sourceDetails(doc []byte) []*xnode {
	root, err := parseTree(doc)
	if err != nil {
		return nil
	}
	var out []*xnode
	for _, ev := range root.kids {
		d := &xnode{name: "detail"}
		for _, k := range ev.kids {
			if k.name == "detail" {
				d = k
			}
		}
		out = append(out, d)
	}
	return out
}

func checkXMLTrip(t *testing.T, ev *Event) {
	t.Helper()
	x := ev.AppendXML(nil)
	if !bytes.HasPrefix(x, []byte(xmlDeclaration+"<event ")) || !bytes.HasSuffix(x, []byte("</event>")) {
		t.Fatalf("AppendXML framing wrong:\n%s", x)
	}
	if _, err := parseTree(x); err != nil {
		t.Fatalf("encoded event does not parse with encoding/xml: %v\n%s", err, x)
	}
	for _, attr := range []string{` version="`, ` stale="`, `<point lat="`} {
		if !bytes.Contains(x, []byte(attr)) {
			t.Errorf("encoded event lacks %s", attr)
		}
	}
	ev2, err := Decode(x)
	if err != nil {
		t.Fatalf("Decode(AppendXML): %v\n%s", err, x)
	}
	if err := compareEvents(ev, ev2, false); err != nil {
		t.Errorf("XML trip changed the event: %v", err)
	}
	if !bytes.Equal(ev.Detail.XML, ev2.Detail.XML) {
		t.Errorf("XML trip changed Detail.XML:\n%s\n%s", ev.Detail.XML, ev2.Detail.XML)
	}
	if err := compareViews(&ev.Detail, &ev2.Detail); err != nil {
		t.Error(err)
	}
	if x2 := ev2.AppendXML(nil); !bytes.Equal(x, x2) {
		t.Errorf("second encoding differs:\n%s\n%s", x, x2)
	}
}

func checkProtoTrip(t *testing.T, ev *Event) {
	t.Helper()
	p, err := ev.MarshalProto()
	if err != nil {
		t.Fatalf("MarshalProto: %v", err)
	}
	// Byte-compatible with the generated code.
	var g takproto.TakMessage
	if err := proto.Unmarshal(p, &g); err != nil {
		t.Fatalf("generated code rejects our bytes: %v", err)
	}
	if g.CotEvent.GetUid() != ev.UID || g.CotEvent.GetSendTime() != uint64(ev.Time.UnixMilli()) {
		t.Errorf("generated code reads uid %q time %d", g.CotEvent.GetUid(), g.CotEvent.GetSendTime())
	}
	if p2, err := proto.Marshal(&g); err != nil || !bytes.Equal(p, p2) {
		t.Errorf("generated code re-encodes differently (%v):\n%x\n%x", err, p, p2)
	}
	ev2, err := DecodeProto(p)
	if err != nil {
		t.Fatalf("DecodeProto: %v", err)
	}
	if err := compareEvents(ev, ev2, true); err != nil {
		t.Errorf("protobuf trip changed the event: %v\nbefore: %s\nafter:  %s", err, ev.Detail.XML, ev2.Detail.XML)
	}
	if err := compareViews(&ev.Detail, &ev2.Detail); err != nil {
		t.Error(err)
	}
	p3, err := ev2.MarshalProto()
	if err != nil || !bytes.Equal(p, p3) {
		t.Errorf("second protobuf encoding differs (%v)", err)
	}
	x := ev2.AppendXML(nil)
	if _, err := parseTree(x); err != nil {
		t.Errorf("event from protobuf does not encode to well-formed XML: %v\n%s", err, x)
	}
}

// TestCaptureFacts checks typed views and special cases of named captures.
func TestCaptureFacts(t *testing.T) {
	byName := map[string][]*Event{}
	for _, c := range loadCaptures(t) {
		t.Run(c.name, func(t *testing.T) { byName[c.name] = captureEvents(t, c) })
	}
	one := func(name string) *Event {
		t.Helper()
		evs := byName[name]
		if len(evs) == 0 {
			t.Fatalf("%s: no event", name)
		}
		return evs[0]
	}
	tests := []struct {
		name  string
		check func(e *Event) bool
	}{
		{"Presence_InitialATAK.cot", func(e *Event) bool {
			d := e.Detail
			return e.IsSA() && e.UID == "ANDROID-351811095448994" && e.How == "h-g-i-g-o" &&
				*d.Contact == Contact{Callsign: "corvo", Endpoint: "192.168.1.12:4242:tcp"} &&
				*d.Group == Group{Name: "Yellow", Role: "Team Member"} &&
				*d.Takv == Takv{Device: "SAMSUNG SM-G950W", Platform: "ATAK-CIV", OS: "28", Version: "4.8.1.8 (0c4d4662).1676511632-CIV"} &&
				*d.Track == Track{Speed: 0, Course: 292.4544485383155} && d.Status.Battery == 0 &&
				e.Time.Nanosecond() == 624e6 && e.Point.Hae == Unknown
		}},
		{"Presence_roleSniper.cot", func(e *Event) bool {
			d := e.Detail
			return e.IsSA() && *d.Group == Group{Name: "Yellow", Role: "Sniper"} &&
				!bytes.Contains(d.XML, []byte("<item>Team Member")) && // the comment inside <__group ...> is gone
				bytes.Contains(d.XML, []byte(`<__group role="Sniper" name="Yellow"/>`)) &&
				d.Contact.Endpoint == "*:-1:stcp" && *d.PrecisionLocation == PrecisionLocation{GeoPointSrc: "GPS", AltSrc: "GPS"} &&
				d.Status.Battery == 90 && d.Marti != nil && len(d.Marti.Dests) == 1 && d.Marti.Dests[0] == Dest{} &&
				e.Time.Nanosecond() == 780e6
		}},
		{"EmergencyCreate911 Alert.cot", func(e *Event) bool {
			d := e.Detail
			return !e.IsSA() && e.Type == "b-a-o-tbl" && d.Emergency.Type == "911 Alert" && !d.Emergency.Cancel &&
				len(d.Links) == 1 && d.Links[0] == Link{UID: "ANDROID-351811095448994", Type: "a-f-G-U-C", Relation: "p-p"} &&
				len(d.Marti.Dests) == 2 && d.Marti.Dests[1].Callsign == "corvo" && e.Point.Lat == 43.84456191618114
		}},
		{"EmergencyCancel.cot", func(e *Event) bool { return e.Detail.Emergency.Cancel && e.Point.Hae == -21.285268407416115 }},
		{"Delete.cot", func(e *Event) bool {
			return e.Type == "t-x-d-d" && e.Detail.Links[0].UID == "gvs_QARack1_1" && e.Time.Nanosecond() == 688141000 &&
				e.Start.Nanosecond() == 688292000
		}},
		{"BinaryFileTransferRequest.cot", func(e *Event) bool {
			return e.Point.Ce == Unknown && e.Point.Le == Unknown && e.Detail.Marti.Dests[0].Callsign == "HelioHQ"
		}},
		{"Chat.cot", func(e *Event) bool {
			// <contact> inside <__chat> is not the detail's contact.
			return e.Detail.Contact == nil && len(e.Detail.Links) == 1 && e.Detail.Marti.Dests[0].Callsign == "user2"
		}},
		{"presenceHealth.cot", func(e *Event) bool {
			return len(e.Detail.XML) == 0 && e.Point.Ce == 114 && e.Type == "a-f-G-U-h"
		}},
	}
	for _, tc := range tests {
		if e := one(tc.name); !tc.check(e) {
			t.Errorf("%s: facts do not hold for\n%s", tc.name, e.AppendXML(nil))
		}
	}
}
