package cot

import (
	"bytes"
	"errors"
	"strings"
	"testing"
	"time"
)

const hdr = `uid="U-1" type="a-f-G-U-C" how="m-g" time="2026-11-22T10:00:00.123Z" start="2026-11-22T10:00:00.123Z" stale="2026-11-22T10:06:00.123Z"`

// ev builds an event document with the given content inside <event>.
func ev(content string) string {
	return `<event version="2.0" ` + hdr + `>` + content + `</event>`
}

func TestDecodeAccepts(t *testing.T) {
	pt := `<point lat="59.33" lon="18.06" hae="25" ce="9.9" le="9999999"/>`
	tests := []struct {
		name  string
		doc   string
		check func(e *Event) bool
	}{
		{"minimal", ev(pt), func(e *Event) bool {
			return e.UID == "U-1" && e.Type == "a-f-G-U-C" && e.How == "m-g" && e.Version == "2.0" &&
				e.Point == Point{59.33, 18.06, 25, 9.9, 9999999} && e.Detail.XML == nil
		}},
		{"double-quoted declaration", `<?xml version="1.0" encoding="UTF-8"?>` + "\n" + ev(pt), nil},
		{"single-quoted declaration", `<?xml version='1.0' encoding='UTF-8' standalone='yes'?>` + ev(pt), nil},
		{"byte order mark", "\xEF\xBB\xBF" + ev(pt), nil},
		{"comments and white space around", "\n <!-- a -->\n<?xml version=\"1.0\"?><!--b-->\r\n" + ev(pt) + "\n<!-- after -->\n", nil},
		{"attributes in any order and quote", `<event stale='2026-11-22T10:06:00Z' how="m-g" type='a-h-G' uid="X" time='2026-11-22T10:00:00Z' version='2.0'>` + pt + `</event>`,
			func(e *Event) bool { return e.UID == "X" && e.Type == "a-h-G" && e.Start.Equal(e.Time) }},
		{"white space around =", `<event uid = "X" type= 'a' time ="2026-11-22T10:00:00Z" stale="2026-11-22T10:00:01Z"></event >`,
			func(e *Event) bool { return e.UID == "X" && e.Stale.Sub(e.Time) == time.Second }},
		{"comment inside event start tag", `<event uid="X" <!-- c --> type="a" time="2026-11-22T10:00:00Z" stale="2026-11-22T10:00:00Z"/>`,
			func(e *Event) bool { return e.Type == "a" }},
		{"entities in attributes", `<event uid="a&amp;b&lt;&gt;&quot;&apos;&#65;&#x42;" type="t" time="2026-11-22T10:00:00Z" stale="2026-11-22T10:00:00Z"/>`,
			func(e *Event) bool { return e.UID == `a&b<>"'AB` }},
		{"bare ampersand kept literally", `<event uid="AT&T" type="t" time="2026-11-22T10:00:00Z" stale="2026-11-22T10:00:00Z"/>`,
			func(e *Event) bool { return e.UID == "AT&T" }},
		{"missing point", ev(`<detail/>`), func(e *Event) bool {
			return e.Point == Point{0, 0, Unknown, Unknown, Unknown} && e.Detail.XML == nil
		}},
		{"point open/close form", ev(`<point lat="1" lon="2" hae="3" ce="4" le="5"></point>`), func(e *Event) bool { return e.Point.Le == 5 }},
		{"point missing attributes", ev(`<point lat="1"/>`), func(e *Event) bool { return e.Point == Point{1, 0, Unknown, Unknown, Unknown} }},
		{"nan hae ce le are unknown", ev(`<point lat="1" lon="2" hae="nan" ce="NaN" le="inf"/>`), func(e *Event) bool { return e.Point == Point{1, 2, Unknown, Unknown, Unknown} }},
		{"detail before point", ev(`<detail><contact callsign="A"/></detail>` + pt), func(e *Event) bool {
			return e.Point.Lat == 59.33 && e.Detail.Contact.Callsign == "A"
		}},
		{"missing version defaults", `<event uid="X" type="t" time="2026-11-22T10:00:00Z" stale="2026-11-22T10:00:00Z"/>`, func(e *Event) bool { return e.Version == "2.0" }},
		{"optional header attributes", `<event uid="X" type="t" time="2026-11-22T10:00:00Z" stale="2026-11-22T10:00:00Z" access="Undefined" qos="1-r-c" opex="e" caveat="FOUO" releasableTo="USA"/>`,
			func(e *Event) bool {
				return e.Access == "Undefined" && e.QoS == "1-r-c" && e.Opex == "e" && e.Caveat == "FOUO" && e.ReleasableTo == "USA"
			}},
		{"unknown event children and text ignored", ev(`text<foo a="1"><bar/></foo>` + pt), func(e *Event) bool { return e.Point.Lat == 59.33 }},
		{"detail verbatim, trimmed", ev(pt + "<detail>\n  <a x='1'>t&amp;t<![CDATA[<raw>]]><!-- c --></a>\n  <b/>\n</detail>"), func(e *Event) bool {
			return string(e.Detail.XML) == "<a x='1'>t&amp;t<![CDATA[<raw>]]><!-- c --></a>\n  <b/>"
		}},
		{"detail self-closing children and open/close", ev(`<detail><contact callsign="A" endpoint="e"></contact><__group name="Cyan" role="HQ"></__group></detail>`),
			func(e *Event) bool {
				return *e.Detail.Contact == Contact{"A", "e"} && *e.Detail.Group == Group{"Cyan", "HQ"}
			}},
		{"comment inside detail start tag rebuilt", ev(`<detail><__group role="Sniper" <!-- roles --> name='Yellow'/><x a="1"/></detail>`), func(e *Event) bool {
			return string(e.Detail.XML) == `<__group role="Sniper" name="Yellow"/><x a="1"/>` && e.Detail.Group.Name == "Yellow"
		}},
		{"bare ampersand and raw < in detail rebuilt", ev(`<detail><remarks a='x<y "q"'>AT&T &amp; ]]> co</remarks></detail>`), func(e *Event) bool {
			return string(e.Detail.XML) == `<remarks a="x&lt;y &quot;q&quot;">AT&amp;T &amp; ]]&gt; co</remarks>`
		}},
		{"bad comment and PI in detail dropped", ev(`<detail><a/><!-- x -- y --><?pi data?><!-- ok --></detail>`), func(e *Event) bool {
			return string(e.Detail.XML) == `<a/><!-- ok -->`
		}},
		{"missing space between attributes rebuilt", ev(`<detail><a x="1"y="2"/></detail>`), func(e *Event) bool {
			return string(e.Detail.XML) == `<a x="1" y="2"/>`
		}},
		{"typed views", ev(`<detail>
			<takv device="Pixel 7" platform="ATAK-CIV" os="34" version="5.2.0"/>
			<contact callsign="JAKAL" endpoint="*:-1:stcp"/>
			<precisionlocation geopointsrc="GPS" altsrc="DTED0"/>
			<__group name="Cyan" role="Team Member"/>
			<status battery="88"/>
			<track speed="1.5" course="283.3"/>
			<link uid="L1" type="a-f" relation="p-p"/><link uid="L2"/>
			<marti><dest callsign="A"/><dest uid="B"/><dest mission="M"/></marti>
			<emergency type="911 Alert" cancel="true"> CALL &amp; <![CDATA[NOW]]> </emergency>
			<TakControl><TakProtocolSupport version="1"/><TakRequest version="2"/><TakResponse status="true"/></TakControl>
		</detail>`), func(e *Event) bool {
			d := e.Detail
			return *d.Takv == Takv{"Pixel 7", "ATAK-CIV", "34", "5.2.0"} && *d.Contact == Contact{"JAKAL", "*:-1:stcp"} &&
				*d.PrecisionLocation == PrecisionLocation{"GPS", "DTED0"} && *d.Group == Group{"Cyan", "Team Member"} &&
				d.Status.Battery == 88 && *d.Track == Track{1.5, 283.3} &&
				len(d.Links) == 2 && d.Links[0] == Link{"L1", "a-f", "p-p"} && d.Links[1].UID == "L2" &&
				len(d.Marti.Dests) == 3 && d.Marti.Dests[0].Callsign == "A" && d.Marti.Dests[1].UID == "B" && d.Marti.Dests[2].Mission == "M" &&
				*d.Emergency == Emergency{Type: "911 Alert", Cancel: true, Text: "CALL & NOW"} &&
				d.TakControl.SupportVersion == 1 && d.TakControl.RequestVersion == 2 && *d.TakControl.Response &&
				e.IsSA()
		}},
		{"nested elements are not typed views", ev(`<detail><__chat><contact callsign="X"/><link uid="Y"/></__chat></detail>`), func(e *Event) bool {
			return e.Detail.Contact == nil && e.Detail.Links == nil
		}},
		{"first typed child wins", ev(`<detail><contact callsign="A"/><contact callsign="B"/></detail>`), func(e *Event) bool { return e.Detail.Contact.Callsign == "A" }},
		{"battery written as float", ev(`<detail><status battery="88.0"/></detail>`), func(e *Event) bool { return e.Detail.Status.Battery == 88 }},
		{"namespaced names", ev(`<detail><x:a xmlns:x="urn:x" x:b="1"/></detail>`), func(e *Event) bool { return len(e.Detail.XML) > 0 }},
		{"non-ASCII values", ev(`<detail><contact callsign="Ærø ✓ 𝄞"/></detail>`), func(e *Event) bool { return e.Detail.Contact.Callsign == "Ærø ✓ 𝄞" }},
		{"self-closing event", `<event uid="X" type="t" time="2026-11-22T10:00:00Z" stale="2026-11-22T10:00:00Z"/>`, func(e *Event) bool { return e.Point.Hae == Unknown }},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			e, err := Decode([]byte(tc.doc))
			if err != nil {
				t.Fatalf("Decode: %v", err)
			}
			if tc.check != nil && !tc.check(e) {
				t.Errorf("unexpected result:\n%s", e.AppendXML(nil))
			}
			// Whatever was accepted encodes to well-formed XML and decodes
			// to the same meaning.
			x := e.AppendXML(nil)
			if _, err := parseTree(x); err != nil {
				t.Fatalf("encoding is not well-formed: %v\n%s", err, x)
			}
			e2, err := Decode(x)
			if err != nil {
				t.Fatal(err)
			}
			if err := compareEvents(e, e2, false); err != nil {
				t.Error(err)
			}
		})
	}
}

func TestDecodeRejects(t *testing.T) {
	pt := `<point lat="1" lon="2" hae="3" ce="4" le="5"/>`
	tests := []struct {
		name, doc, want string
	}{
		{"empty", "", "no <event> element"},
		{"only declaration", `<?xml version="1.0"?>`, "no <event> element"},
		{"other root", `<foo/>`, "expected <event>, found <foo>"},
		{"text before", `hello` + ev(pt), "text before <event>"},
		{"missing uid", `<event type="t" time="2026-11-22T10:00:00Z" stale="2026-11-22T10:00:00Z"/>`, "has no uid"},
		{"empty uid", `<event uid="" type="t" time="2026-11-22T10:00:00Z" stale="2026-11-22T10:00:00Z"/>`, "has no uid"},
		{"missing type", `<event uid="u" time="2026-11-22T10:00:00Z" stale="2026-11-22T10:00:00Z"/>`, "has no type"},
		{"missing time", `<event uid="u" type="t" stale="2026-11-22T10:00:00Z"/>`, "has no time"},
		{"missing stale", `<event uid="u" type="t" time="2026-11-22T10:00:00Z"/>`, "has no stale"},
		{"bad time", `<event uid="u" type="t" time="yesterday" stale="2026-11-22T10:00:00Z"/>`, "bad time time"},
		{"bad stale", `<event uid="u" type="t" time="2026-11-22T10:00:00Z" stale="2026-13-22T10:00:00Z"/>`, "bad stale time"},
		{"bad lat", ev(`<point lat="north" lon="2"/>`), "bad point lat value"},
		{"hex lat", ev(`<point lat="0x1p3" lon="2"/>`), "bad point lat value"},
		{"nan lon", ev(`<point lat="1" lon="NaN"/>`), "lon is not a finite number"},
		{"empty le", ev(`<point lat="1" lon="2" le=""/>`), "bad point le value"},
		{"duplicate point", ev(pt + pt), "duplicate <point>"},
		{"duplicate detail", ev(`<detail/><detail/>`), "duplicate <detail>"},
		{"mismatched end tag in detail", ev(`<detail><a><b></a></b></detail>`), "mismatched end tag </a>, expected </b>"},
		{"unclosed detail child", ev(`<detail><a></detail>`), "mismatched end tag </detail>, expected </a>"},
		{"unclosed event", `<event ` + hdr + `>` + pt, "input ends inside <event>"},
		{"unclosed detail", `<event ` + hdr + `><detail><a/>`, "input ends inside <detail>"},
		{"stray end tag", `</event>`, "without a start tag"},
		{"data after event", ev(pt) + `<event/>`, "unexpected data after </event>"},
		{"text after event", ev(pt) + `junk`, "unexpected data after </event>"},
		{"duplicate attribute", `<event uid="a" uid="b" type="t" time="2026-11-22T10:00:00Z" stale="2026-11-22T10:00:00Z"/>`, `duplicate attribute "uid"`},
		{"duplicate attribute in detail", ev(`<detail><contact callsign="a" callsign="b"/></detail>`), `duplicate attribute "callsign"`},
		{"attribute without value", ev(`<detail><a b/></detail>`), `attribute "b" of <a> has no value`},
		{"unquoted value", ev(`<detail><a b=1/></detail>`), "is not quoted"},
		{"unterminated value", `<event uid="abc`, "unterminated value"},
		{"unterminated start tag", `<event uid="a"`, "input ends inside start tag <event>"},
		{"unterminated comment", ev(`<detail><!-- x</detail>`), "unterminated comment"},
		{"unterminated comment in tag", ev(`<detail><a <!-- x/></detail>`), "unterminated comment inside <a>"},
		{"unterminated CDATA", ev(`<detail><![CDATA[ x</detail>`), "unterminated CDATA"},
		{"unterminated PI", `<?xml version="1.0"`, "unterminated processing instruction"},
		{"DOCTYPE", `<!DOCTYPE event>` + ev(pt), "unsupported markup declaration"},
		{"invalid element name", ev(`<detail><0 value="1"/></detail>`), "invalid element name"},
		{"non-ASCII element name", ev(`<detail><café/></detail>`), "in start tag <caf>"},
		{"invalid end tag name", ev(`<detail><a></ a></detail>`), "invalid name in end tag"},
		{"control character in text", ev("<detail><a>\x01</a></detail>"), "illegal character 0x01 in text"},
		{"control character in attribute", ev("<detail><a b='\x02'/></detail>"), `illegal character 0x02 in attribute "b"`},
		{"invalid UTF-8 in text", ev("<detail><a>\xff</a></detail>"), "invalid UTF-8"},
		{"invalid UTF-8 in attribute", "<event uid='\xc3\x28'/>", "invalid UTF-8"},
		{"U+FFFE in text", ev("<detail>\uFFFE</detail>"), "illegal character"},
		{"illegal character in CDATA", ev("<detail><![CDATA[\x00]]></detail>"), "illegal character in CDATA"},
		{"lone <", "<", "input ends after '<'"},
		{"slash without >", ev(`<detail><a/ ></detail>`), `expected "/>" in <a>`},
		{"garbage in tag", ev(`<detail><a "b"/></detail>`), "invalid attribute name in <a>"},
		{"garbage after name", ev(`<detail><a"b"/></detail>`), `unexpected '"' in start tag <a>`},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			e, err := Decode([]byte(tc.doc))
			if err == nil {
				t.Fatalf("accepted:\n%s", e.AppendXML(nil))
			}
			var se *SyntaxError
			if !errors.As(err, &se) {
				t.Fatalf("error %T %v is not a *SyntaxError", err, err)
			}
			if !strings.Contains(err.Error(), tc.want) {
				t.Errorf("error %q, want it to mention %q", err, tc.want)
			}
			if e != nil {
				t.Error("event returned with an error")
			}
		})
	}
}

func TestParseTime(t *testing.T) {
	base := time.Date(2026, 11, 22, 10, 0, 0, 0, time.UTC)
	tests := []struct {
		in   string
		want time.Time
		ok   bool
	}{
		{"2026-11-22T10:00:00Z", base, true},
		{"2026-11-22T10:00:00.1Z", base.Add(100 * time.Millisecond), true},
		{"2026-11-22T10:00:00.12Z", base.Add(120 * time.Millisecond), true},
		{"2026-11-22T10:00:00.123Z", base.Add(123 * time.Millisecond), true},
		{"2026-11-22T10:00:00.123456Z", base.Add(123456 * time.Microsecond), true},
		{"2026-11-22T10:00:00.123456789Z", base.Add(123456789), true},
		{"2026-11-22T10:00:00", base, true},
		{"2026-11-22T10:00:00.5", base.Add(500 * time.Millisecond), true},
		{"2026-11-22T11:30:00+01:30", base, true},
		{"2026-11-22T08:00:00-0200", base, true},
		{"2026-11-22T12:00:00+02", base, true},
		{"2026-11-22t10:00:00z", base, true},
		{" 2026-11-22T10:00:00Z ", base, true},
		{"2024-02-29T00:00:00Z", time.Date(2024, 2, 29, 0, 0, 0, 0, time.UTC), true},
		{"2026-11-22T10:00:00.1234567890Z", time.Time{}, false},
		{"2026-11-22T10:00:00.Z", time.Time{}, false},
		{"2026-11-22T10:00Z", time.Time{}, false},
		{"2026-11-22", time.Time{}, false},
		{"2025-02-29T00:00:00Z", time.Time{}, false},
		{"2026-00-22T10:00:00Z", time.Time{}, false},
		{"2026-11-31T10:00:00Z", time.Time{}, false},
		{"2026-11-22T24:00:00Z", time.Time{}, false},
		{"2026-11-22T10:60:00Z", time.Time{}, false},
		{"2026-11-22T10:00:60Z", time.Time{}, false},
		{"2026-11-22T10:00:00+25:00", time.Time{}, false},
		{"2026-11-22T10:00:00ZZ", time.Time{}, false},
		{"2026-11-22T10:00:00 UTC", time.Time{}, false},
		{"+026-11-22T10:00:00Z", time.Time{}, false},
		{"", time.Time{}, false},
	}
	for _, tc := range tests {
		got, ok := parseTime([]byte(tc.in))
		if ok != tc.ok || !got.Equal(tc.want) {
			t.Errorf("parseTime(%q) = %v, %v; want %v, %v", tc.in, got, ok, tc.want, tc.ok)
		}
		if ok && got.Location() != time.UTC {
			t.Errorf("parseTime(%q) is not UTC", tc.in)
		}
	}
}

func TestDecodeOwnsMemory(t *testing.T) {
	doc := []byte(ev(`<detail><contact callsign="JAKAL"/><remarks>hi</remarks></detail>`))
	e, err := Decode(doc)
	if err != nil {
		t.Fatal(err)
	}
	before := string(e.AppendXML(nil))
	for i := range doc {
		doc[i] = 'X'
	}
	if after := string(e.AppendXML(nil)); after != before || e.Detail.Contact.Callsign != "JAKAL" {
		t.Errorf("event changed when its input was overwritten:\n%s\n%s", before, after)
	}
}

func TestDecodeManyAttributes(t *testing.T) {
	// Duplicate detection stays linear for very long tags.
	var b bytes.Buffer
	b.WriteString(`<event ` + hdr + `><detail><a`)
	for i := 0; i < 5000; i++ {
		b.WriteString(` a`)
		b.WriteString(strings.Repeat("x", i%7))
		b.WriteString(string(rune('a' + i%26)))
		b.WriteString(string(rune('a' + i/26%26)))
		b.WriteString(string(rune('a' + i/676%26)))
		b.WriteString(`="1"`)
	}
	b.WriteString(`/></detail></event>`)
	if _, err := Decode(b.Bytes()); err != nil {
		t.Fatal(err)
	}
	dup := bytes.Replace(b.Bytes(), []byte(`/></detail>`), []byte(` aaaa="2"/></detail>`), 1)
	if _, err := Decode(dup); err == nil || !strings.Contains(err.Error(), "duplicate attribute") {
		t.Fatalf("duplicate among 5000 attributes not found: %v", err)
	}
}

// TestDecodeTooManyDests: an event addressing more than MaxDests clients is
// malformed, in XML and in protobuf (attack: 20,000 <dest> per event).
func TestDecodeTooManyDests(t *testing.T) {
	x := []byte(ev(`<detail><marti>` + strings.Repeat(`<dest uid="u"/>`, MaxDests+1) + `</marti></detail>`))
	_, err := Decode(x)
	var se *SyntaxError
	if !errors.As(err, &se) || !strings.Contains(se.Msg, "<dest>") {
		t.Fatalf("XML: %v", err)
	}
	ok, err := Decode([]byte(ev(`<detail><marti>` + strings.Repeat(`<dest uid="u"/>`, MaxDests) + `</marti></detail>`)))
	if err != nil {
		t.Fatal(err)
	}
	// The same event with one more dest, as a protobuf xmlDetail.
	big := *ok
	big.Detail.XML = bytes.Replace(ok.Detail.XML, []byte(`</marti>`), []byte(`<dest uid="u"/></marti>`), 1)
	p, err := big.MarshalProto()
	if err != nil {
		t.Fatal(err)
	}
	if _, err := DecodeProto(p); err == nil || !strings.Contains(err.Error(), "<dest>") {
		t.Fatalf("protobuf: %v", err)
	}
}

// TestDecodeLargeShapes decodes inputs shaped to trip quadratic or
// recursive code: deep nesting, very many children, very many comments
// inside one start tag.
func TestDecodeLargeShapes(t *testing.T) {
	const n = 20000
	tests := []struct {
		name   string
		detail string
		check  func(d *Detail) bool
	}{
		{"deep nesting", strings.Repeat("<a>", n) + strings.Repeat("</a>", n), func(d *Detail) bool { return len(d.XML) == 7*n }},
		{"many links", strings.Repeat(`<link uid="x" relation="p-p"/>`, n), func(d *Detail) bool { return len(d.Links) == n }},
		{"many dests", `<marti>` + strings.Repeat(`<dest callsign="c"/>`, MaxDests) + `</marti>`, func(d *Detail) bool { return len(d.Marti.Dests) == MaxDests }},
		{"many comments in a tag", `<a ` + strings.Repeat("<!-- c -->", n) + ` b="1"/>`, func(d *Detail) bool { return string(d.XML) == `<a b="1"/>` }},
		{"many text pieces", strings.Repeat("x<b/>", n), func(d *Detail) bool { return len(d.XML) == 5*n }},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			e, err := Decode([]byte(ev(`<detail>` + tc.detail + `</detail>`)))
			if err != nil {
				t.Fatal(err)
			}
			if !tc.check(&e.Detail) {
				t.Errorf("unexpected detail (%d bytes)", len(e.Detail.XML))
			}
			p, err := e.MarshalProto()
			if err != nil {
				t.Fatal(err)
			}
			e2, err := DecodeProto(p)
			if err != nil {
				t.Fatal(err)
			}
			if !bytes.Equal(e.Detail.XML, e2.Detail.XML) {
				t.Error("protobuf trip changed the detail")
			}
		})
	}
}
