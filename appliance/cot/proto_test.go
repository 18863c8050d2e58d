package cot

import (
	"bytes"
	"errors"
	"math"
	"strings"
	"testing"
	"time"

	"google.golang.org/protobuf/encoding/protowire"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/reflect/protoreflect"

	"outpost/appliance/cot/takproto"
)

// toGenerated converts our wire struct to the generated message.
func toGenerated(m *pbMessage) *takproto.TakMessage {
	g := &takproto.TakMessage{SubmissionTime: m.SubmissionTime, CreationTime: m.CreationTime}
	if m.HasControl {
		g.TakControl = &takproto.TakControl{
			MinProtoVersion: m.Control.MinProtoVersion,
			MaxProtoVersion: m.Control.MaxProtoVersion,
			ContactUid:      string(m.Control.ContactUID),
		}
	}
	if !m.HasEvent {
		return g
	}
	e := &m.Event
	g.CotEvent = &takproto.CotEvent{
		Type: e.Type, Access: e.Access, Qos: e.Qos, Opex: e.Opex, Uid: e.UID,
		SendTime: e.SendTime, StartTime: e.StartTime, StaleTime: e.StaleTime, How: e.How,
		Lat: e.Lat, Lon: e.Lon, Hae: e.Hae, Ce: e.Ce, Le: e.Le,
		Caveat: e.Caveat, ReleaseableTo: e.ReleaseableTo,
	}
	if e.HasDetail {
		d := &e.Detail
		gd := &takproto.Detail{XmlDetail: string(d.XMLDetail)}
		if d.HasContact {
			gd.Contact = &takproto.Contact{Endpoint: string(d.Contact.Endpoint), Callsign: string(d.Contact.Callsign)}
		}
		if d.HasGroup {
			gd.Group = &takproto.Group{Name: string(d.Group.Name), Role: string(d.Group.Role)}
		}
		if d.HasPrecise {
			gd.PrecisionLocation = &takproto.PrecisionLocation{Geopointsrc: string(d.Precise.GeoPointSrc), Altsrc: string(d.Precise.AltSrc)}
		}
		if d.HasStatus {
			gd.Status = &takproto.Status{Battery: d.Status.Battery}
		}
		if d.HasTakv {
			gd.Takv = &takproto.Takv{Device: string(d.Takv.Device), Platform: string(d.Takv.Platform), Os: string(d.Takv.OS), Version: string(d.Takv.Version)}
		}
		if d.HasTrack {
			gd.Track = &takproto.Track{Speed: d.Track.Speed, Course: d.Track.Course}
		}
		g.CotEvent.Detail = gd
	}
	return g
}

// marshalDetail returns the generated view of ev's protobuf detail.
func marshalDetail(t *testing.T, detail string) *takproto.Detail {
	t.Helper()
	e := &Event{UID: "u", Type: "t", Time: time.UnixMilli(1), Start: time.UnixMilli(1), Stale: time.UnixMilli(2), Detail: Detail{XML: []byte(detail)}}
	p, err := e.MarshalProto()
	if err != nil {
		t.Fatalf("MarshalProto: %v", err)
	}
	var g takproto.TakMessage
	if err := proto.Unmarshal(p, &g); err != nil {
		t.Fatal(err)
	}
	return g.CotEvent.GetDetail()
}

// TestProtoDetailRules checks which detail children become typed fields
// (protocol.md §3: exactly the attributes the message carries, no content).
func TestProtoDetailRules(t *testing.T) {
	tests := []struct {
		name, detail string
		want         *takproto.Detail
	}{
		{"empty", "", nil},
		{"contact callsign", `<contact callsign="A"/>`, &takproto.Detail{Contact: &takproto.Contact{Callsign: "A"}}},
		{"contact with endpoint", `<contact endpoint="*:-1:stcp" callsign="A"/>`, &takproto.Detail{Contact: &takproto.Contact{Callsign: "A", Endpoint: "*:-1:stcp"}}},
		{"contact empty callsign", `<contact callsign=""/>`, &takproto.Detail{Contact: &takproto.Contact{}}},
		{"contact open/close", `<contact callsign="A"></contact>`, &takproto.Detail{Contact: &takproto.Contact{Callsign: "A"}}},
		{"contact extra attribute", `<contact callsign="A" phone="1"/>`, &takproto.Detail{XmlDetail: `<contact callsign="A" phone="1"/>`}},
		{"contact without callsign", `<contact endpoint="e"/>`, &takproto.Detail{XmlDetail: `<contact endpoint="e"/>`}},
		{"contact empty endpoint", `<contact callsign="A" endpoint=""/>`, &takproto.Detail{XmlDetail: `<contact callsign="A" endpoint=""/>`}},
		{"contact with child", `<contact callsign="A"><x/></contact>`, &takproto.Detail{XmlDetail: `<contact callsign="A"><x/></contact>`}},
		{"contact with text", `<contact callsign="A"> </contact>`, &takproto.Detail{XmlDetail: `<contact callsign="A"> </contact>`}},
		{"contact entity", `<contact callsign="A&amp;B&#x1F600;"/>`, &takproto.Detail{Contact: &takproto.Contact{Callsign: "A&B😀"}}},
		{"contact char ref newline", `<contact callsign="A&#10;B"/>`, &takproto.Detail{Contact: &takproto.Contact{Callsign: "A\nB"}}},
		{"contact raw newline", "<contact callsign=\"A\nB\"/>", &takproto.Detail{XmlDetail: "<contact callsign=\"A\nB\"/>"}},
		{"second contact stays XML", `<contact callsign="A"/><contact callsign="B"/>`, &takproto.Detail{Contact: &takproto.Contact{Callsign: "A"}, XmlDetail: `<contact callsign="B"/>`}},
		{"group exact", `<__group role="HQ" name="Cyan"/>`, &takproto.Detail{Group: &takproto.Group{Name: "Cyan", Role: "HQ"}}},
		{"group empty values", `<__group role="" name=""/>`, &takproto.Detail{Group: &takproto.Group{}}},
		{"group missing role", `<__group name="Cyan"/>`, &takproto.Detail{XmlDetail: `<__group name="Cyan"/>`}},
		{"takv subset", `<takv platform="ATAK-CIV" version="5.2"/>`, &takproto.Detail{Takv: &takproto.Takv{Platform: "ATAK-CIV", Version: "5.2"}}},
		{"takv all", `<takv device="d" platform="p" os="o" version="v"/>`, &takproto.Detail{Takv: &takproto.Takv{Device: "d", Platform: "p", Os: "o", Version: "v"}}},
		{"takv empty value", `<takv os="" platform="p"/>`, &takproto.Detail{XmlDetail: `<takv os="" platform="p"/>`}},
		{"takv extra", `<takv os="1" build="2"/>`, &takproto.Detail{XmlDetail: `<takv os="1" build="2"/>`}},
		{"track exact", `<track course="283.3" speed="0.0"/>`, &takproto.Detail{Track: &takproto.Track{Course: 283.3}}},
		{"track missing course", `<track speed="1"/>`, &takproto.Detail{XmlDetail: `<track speed="1"/>`}},
		{"track not a number", `<track speed="fast" course="1"/>`, &takproto.Detail{XmlDetail: `<track speed="fast" course="1"/>`}},
		{"track extra", `<track speed="1" course="2" slope="3"/>`, &takproto.Detail{XmlDetail: `<track speed="1" course="2" slope="3"/>`}},
		{"status", `<status battery="88"/>`, &takproto.Detail{Status: &takproto.Status{Battery: 88}}},
		{"status zero", `<status battery="0"/>`, &takproto.Detail{Status: &takproto.Status{}}},
		{"status leading zero", `<status battery="088"/>`, &takproto.Detail{XmlDetail: `<status battery="088"/>`}},
		{"status float", `<status battery="88.0"/>`, &takproto.Detail{XmlDetail: `<status battery="88.0"/>`}},
		{"status too big", `<status battery="4294967296"/>`, &takproto.Detail{XmlDetail: `<status battery="4294967296"/>`}},
		{"status readiness", `<status readiness="false"/>`, &takproto.Detail{XmlDetail: `<status readiness="false"/>`}},
		{"precisionlocation", `<precisionlocation altsrc="DTED0" geopointsrc="GPS"/>`, &takproto.Detail{PrecisionLocation: &takproto.PrecisionLocation{Geopointsrc: "GPS", Altsrc: "DTED0"}}},
		{"precisionlocation bare", `<precisionlocation/>`, &takproto.Detail{PrecisionLocation: &takproto.PrecisionLocation{}}},
		{"precisionlocation empty value", `<precisionlocation altsrc=""/>`, &takproto.Detail{XmlDetail: `<precisionlocation altsrc=""/>`}},
		{"unknown kept verbatim", "<uid Droid='x'/>\n<remarks>a &amp; b</remarks>", &takproto.Detail{XmlDetail: "<uid Droid='x'/><remarks>a &amp; b</remarks>"}},
		{"text kept, comments dropped", `hello<!-- c --><a/><![CDATA[x]]>`, &takproto.Detail{XmlDetail: `hello<a/><![CDATA[x]]>`}},
		{"nested typed names stay", `<__chat><contact callsign="A"/></__chat>`, &takproto.Detail{XmlDetail: `<__chat><contact callsign="A"/></__chat>`}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got := marshalDetail(t, tc.detail)
			if !proto.Equal(got, tc.want) {
				t.Errorf("detail\n got %v\nwant %v", got, tc.want)
			}
		})
	}
}

// TestProtoToXML checks how typed fields are rebuilt (protocol.md §3).
func TestProtoToXML(t *testing.T) {
	g := &takproto.TakMessage{CotEvent: &takproto.CotEvent{
		Type: "a-f-G-U-C", Uid: "U", How: "m-g", SendTime: 1700000000123, StartTime: 1700000000123, StaleTime: 1700000060123,
		Lat: 59.33, Lon: 18.06, Hae: math.NaN(), Ce: 9.9, Le: 9999999, Access: "Undefined", Caveat: "c", ReleaseableTo: "r", Qos: "q", Opex: "o",
		Detail: &takproto.Detail{
			XmlDetail:         `<uid Droid="JAKAL"/>`,
			Contact:           &takproto.Contact{Callsign: `J&"K<`, Endpoint: "*:-1:stcp"},
			Group:             &takproto.Group{Name: "Cyan", Role: "Team Member"},
			PrecisionLocation: &takproto.PrecisionLocation{Altsrc: "GPS"},
			Status:            &takproto.Status{Battery: 88},
			Takv:              &takproto.Takv{Platform: "ATAK-CIV", Version: "5.2.0"},
			Track:             &takproto.Track{Speed: 1.25, Course: 283.3},
		},
	}}
	p, err := proto.Marshal(g)
	if err != nil {
		t.Fatal(err)
	}
	e, err := DecodeProto(p)
	if err != nil {
		t.Fatal(err)
	}
	want := `<contact callsign="J&amp;&quot;K&lt;" endpoint="*:-1:stcp"/><__group name="Cyan" role="Team Member"/>` +
		`<precisionlocation altsrc="GPS"/><status battery="88"/><takv platform="ATAK-CIV" version="5.2.0"/>` +
		`<track speed="1.25" course="283.3"/><uid Droid="JAKAL"/>`
	if string(e.Detail.XML) != want {
		t.Errorf("detail\n got %s\nwant %s", e.Detail.XML, want)
	}
	if e.UID != "U" || e.Type != "a-f-G-U-C" || e.How != "m-g" || e.Version != "2.0" || e.Access != "Undefined" ||
		e.Caveat != "c" || e.ReleasableTo != "r" || e.QoS != "q" || e.Opex != "o" {
		t.Errorf("header wrong: %+v", e)
	}
	if !e.Time.Equal(time.UnixMilli(1700000000123)) || e.Stale.Sub(e.Time) != time.Minute || e.Time.Location() != time.UTC {
		t.Errorf("times wrong: %v %v", e.Time, e.Stale)
	}
	if e.Point != (Point{59.33, 18.06, Unknown, 9.9, 9999999}) {
		t.Errorf("point %+v", e.Point)
	}
	if e.Detail.Contact.Callsign != `J&"K<` || e.Detail.Track.Speed != 1.25 || e.Detail.Status.Battery != 88 || e.Detail.Takv.OS != "" {
		t.Errorf("views wrong: %+v", e.Detail)
	}
	// And back: the same typed fields, the same xmlDetail.
	p2, err := e.MarshalProto()
	if err != nil {
		t.Fatal(err)
	}
	var g2 takproto.TakMessage
	if err := proto.Unmarshal(p2, &g2); err != nil {
		t.Fatal(err)
	}
	g.CotEvent.Hae = Unknown
	if !proto.Equal(g, &g2) {
		t.Errorf("round trip\n got %v\nwant %v", &g2, g)
	}
}

// TestProtoWireCompat checks our decoder against the generated code on
// messages with unknown fields, repeated fields and every field set.
func TestProtoWireCompat(t *testing.T) {
	full := &takproto.TakMessage{
		TakControl:     &takproto.TakControl{MinProtoVersion: 1, MaxProtoVersion: 1, ContactUid: "c"},
		SubmissionTime: 5, CreationTime: 6,
		CotEvent: &takproto.CotEvent{
			Type: "t", Access: "a", Qos: "q", Opex: "o", Uid: "u", SendTime: 1, StartTime: 2, StaleTime: 3, How: "h",
			Lat: -1, Lon: math.Copysign(0, -1), Hae: 3, Ce: math.Inf(1), Le: 5, Caveat: "c", ReleaseableTo: "r",
			Detail: &takproto.Detail{XmlDetail: "<x/>", Contact: &takproto.Contact{}, Group: &takproto.Group{Name: "n"},
				PrecisionLocation: &takproto.PrecisionLocation{Altsrc: "a"}, Status: &takproto.Status{Battery: 1},
				Takv: &takproto.Takv{Os: "o"}, Track: &takproto.Track{Speed: math.NaN()}},
		},
	}
	fullBytes, err := proto.Marshal(full)
	if err != nil {
		t.Fatal(err)
	}
	var b []byte
	b = protowire.AppendTag(b, 99, protowire.BytesType) // unknown field
	b = protowire.AppendString(b, "zz")
	b = protowire.AppendTag(b, fMsgEvent, protowire.VarintType) // known number, wrong type: unknown
	b = protowire.AppendVarint(b, 7)
	mixed := append(b, fullBytes...)
	// A second cotEvent is merged into the first.
	second, _ := proto.Marshal(&takproto.TakMessage{CotEvent: &takproto.CotEvent{Uid: "u2", Detail: &takproto.Detail{Track: &takproto.Track{Course: 9}}}})
	merged := append(append([]byte(nil), fullBytes...), second...)
	for name, msg := range map[string][]byte{"full": fullBytes, "unknown fields": mixed, "merged": merged, "empty": nil} {
		t.Run(name, func(t *testing.T) {
			var m pbMessage
			if err := unmarshalTakMessage(msg, &m); err != nil {
				t.Fatal(err)
			}
			var g takproto.TakMessage
			if err := proto.Unmarshal(msg, &g); err != nil {
				t.Fatal(err)
			}
			mine := toGenerated(&m)
			clearUnknown(g.ProtoReflect())
			// proto.Equal treats NaN as unequal: compare encodings.
			b1, _ := proto.MarshalOptions{Deterministic: true}.Marshal(mine)
			b2, _ := proto.MarshalOptions{Deterministic: true}.Marshal(&g)
			if !bytes.Equal(b1, b2) {
				t.Errorf("decoded differently:\n ours %v\n gen  %v", mine, &g)
			}
			if m.HasEvent {
				out := appendTakMessage(nil, &m.Event)
				ref, _ := proto.Marshal(&takproto.TakMessage{CotEvent: g.CotEvent})
				if !bytes.Equal(out, ref) {
					t.Errorf("encoded differently:\n ours %x\n gen  %x", out, ref)
				}
			}
		})
	}
}

func TestDecodeProtoErrors(t *testing.T) {
	mk := func(e *takproto.CotEvent) []byte {
		b, err := proto.Marshal(&takproto.TakMessage{CotEvent: e})
		if err != nil {
			t.Fatal(err)
		}
		return b
	}
	control, _ := proto.Marshal(&takproto.TakMessage{TakControl: &takproto.TakControl{MinProtoVersion: 1}})
	good := mk(&takproto.CotEvent{Uid: "u", Type: "t", Detail: &takproto.Detail{XmlDetail: "<x/>"}})
	var badUTF8 []byte
	badUTF8 = protowire.AppendTag(badUTF8, fMsgEvent, protowire.BytesType)
	inner := protowire.AppendTag(nil, fEvUID, protowire.BytesType)
	inner = protowire.AppendBytes(inner, []byte{0xff})
	badUTF8 = protowire.AppendBytes(badUTF8, inner)
	tests := []struct {
		name string
		msg  []byte
		want string // "" means ErrNoEvent
	}{
		{"empty message", nil, ""},
		{"control only", control, ""},
		{"truncated", good[:len(good)-2], "protobuf:"},
		{"bad tag", []byte{0x00}, "protobuf:"},
		{"invalid UTF-8", badUTF8, "invalid UTF-8"},
		{"no uid", mk(&takproto.CotEvent{Type: "t"}), "has no uid"},
		{"no type", mk(&takproto.CotEvent{Uid: "u"}), "has no type"},
		{"nan lat", mk(&takproto.CotEvent{Uid: "u", Type: "t", Lat: math.NaN()}), "not a finite number"},
		{"time too late", mk(&takproto.CotEvent{Uid: "u", Type: "t", StaleTime: math.MaxUint64}), "time is out of range"},
		{"bad xmlDetail", mk(&takproto.CotEvent{Uid: "u", Type: "t", Detail: &takproto.Detail{XmlDetail: "<a><b></a>"}}), "protobuf detail: mismatched end tag"},
		{"unclosed xmlDetail", mk(&takproto.CotEvent{Uid: "u", Type: "t", Detail: &takproto.Detail{XmlDetail: "<a>"}}), "protobuf detail: input ends inside <detail>"},
		{"xmlDetail closing detail", mk(&takproto.CotEvent{Uid: "u", Type: "t", Detail: &takproto.Detail{XmlDetail: "</detail><x>"}}), "without a start tag"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			e, err := DecodeProto(tc.msg)
			if e != nil {
				t.Errorf("event returned: %+v", e)
			}
			if tc.want == "" {
				if !errors.Is(err, ErrNoEvent) {
					t.Errorf("error %v, want ErrNoEvent", err)
				}
				return
			}
			var se *SyntaxError
			if !errors.As(err, &se) || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("error %v, want a SyntaxError mentioning %q", err, tc.want)
			}
		})
	}
	if _, err := DecodeProto(good); err != nil {
		t.Errorf("good message rejected: %v", err)
	}
}

func TestMarshalProtoErrors(t *testing.T) {
	ok := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	tests := []struct {
		name string
		e    Event
		want string
	}{
		{"time before 1970", Event{UID: "u", Type: "t", Time: time.Date(1960, 1, 1, 0, 0, 0, 0, time.UTC), Start: ok, Stale: ok}, "event time"},
		{"zero stale", Event{UID: "u", Type: "t", Time: ok, Start: ok}, "event stale"},
		{"invalid UTF-8 uid", Event{UID: "\xff", Type: "t", Time: ok, Start: ok, Stale: ok}, "invalid UTF-8"},
		{"bad detail XML", Event{UID: "u", Type: "t", Time: ok, Start: ok, Stale: ok, Detail: Detail{XML: []byte("<a>")}}, "detail ends inside <a>"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if _, err := tc.e.MarshalProto(); err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("error %v, want one mentioning %q", err, tc.want)
			}
		})
	}
}

func TestFraming(t *testing.T) {
	payload := bytes.Repeat([]byte{7}, 300)
	f := AppendStreamFrame([]byte{1}, payload)
	if !bytes.Equal(f[:4], []byte{1, 0xBF, 0xAC, 0x02}) || !bytes.Equal(f[4:], payload) {
		t.Errorf("stream frame header % x", f[:4])
	}
	m := AppendMeshFrame(nil, []byte("abc"))
	if !bytes.Equal(m, []byte{0xBF, 0x01, 0xBF, 'a', 'b', 'c'}) {
		t.Errorf("mesh frame % x", m)
	}
	got, err := ParseMeshFrame(m)
	if err != nil || string(got) != "abc" {
		t.Errorf("ParseMeshFrame = %q, %v", got, err)
	}
	for _, bad := range [][]byte{nil, {0xBF}, {0xBF, 0x01}, {0xBF, 0x00, 0xBF}, []byte("<event/>")} {
		if _, err := ParseMeshFrame(bad); err == nil {
			t.Errorf("ParseMeshFrame(% x) accepted", bad)
		}
	}
	if MaxProtoFrame != 65536 {
		t.Errorf("MaxProtoFrame = %d", MaxProtoFrame)
	}
}

// clearUnknown drops unknown fields at every level (our decoder does not
// keep them).
func clearUnknown(m protoreflect.Message) {
	m.SetUnknown(nil)
	m.Range(func(fd protoreflect.FieldDescriptor, v protoreflect.Value) bool {
		if fd.Message() != nil {
			clearUnknown(v.Message())
		}
		return true
	})
}
