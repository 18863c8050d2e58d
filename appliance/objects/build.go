package objects

// The events the server builds for its objects. Each is written as XML and
// decoded back (cot.Decode), so the typed detail views the broker and the
// history read (contact, links, emergency) agree with the bytes clients
// receive, and nothing is published that a client could not parse.

import (
	"fmt"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/google/uuid"

	"outpost/appliance/cot"
	"outpost/appliance/geo"
)

// Times of the server's events.
const (
	// PersistentFor is how far ahead a persistent object (timeout 0) and an
	// active emergency go stale: they stay until deleted or cancelled, and
	// clients must not grey them out meanwhile ("Shapes": timeout 0 is never
	// stale on arrival).
	PersistentFor = 365 * 24 * time.Hour
	// oneShotFor is the stale time of deletes and cancellations.
	oneShotFor = 20 * time.Second
)

// Hows of the server's own events.
const (
	howHuman = "h-e"       // emergencies, as ATAK sends them
	howGIGO  = "h-g-i-g-o" // deletes
)

// geoEvent is what a geo object's event says.
type geoEvent struct {
	uid, typ, how string
	point         geo.Point
	callsign      string
	remarks       string
	linkUID       string
	linkType      string
	stale         time.Time
	persistent    bool
}

// buildGeo builds a geo object's event ("Shapes", geo object CoT): the
// point with unknown height and error, and a detail that ATAK, WinTAK and
// iTAK render as a marker: <contact callsign>, <status readiness>, the
// optional <link> to another object, <remarks>, and <archive/> for a
// persistent object (clients keep it across their own restarts).
func buildGeo(g geoEvent, now time.Time) (*cot.Event, error) {
	var d strings.Builder
	d.WriteString(`<contact callsign="`)
	escape(&d, g.callsign)
	d.WriteString(`"/><status readiness="true"/>`)
	if g.linkUID != "" {
		d.WriteString(`<link uid="`)
		escape(&d, g.linkUID)
		d.WriteString(`" type="`)
		escape(&d, g.linkType)
		d.WriteString(`" relation="p-p"/>`)
	}
	d.WriteString(`<remarks>`)
	escape(&d, g.remarks)
	d.WriteString(`</remarks>`)
	if g.persistent {
		d.WriteString(`<archive/>`)
	}
	return finish(event(g.uid, g.typ, g.how, g.point, now, g.stale), d.String())
}

// buildEmergency builds an emergency raised through the API ("Shapes",
// emergency CoT): ATAK's shape of an alert, <contact callsign="name-Alert"/>,
// <emergency type="911 Alert">name</emergency> and <remarks>.
func buildEmergency(uid, code, words, name, remarks string, p geo.Point, now, stale time.Time) (*cot.Event, error) {
	var d strings.Builder
	d.WriteString(`<contact callsign="`)
	escape(&d, name+"-Alert")
	d.WriteString(`"/><emergency type="`)
	escape(&d, words)
	d.WriteString(`">`)
	escape(&d, name)
	d.WriteString(`</emergency><remarks>`)
	escape(&d, remarks)
	d.WriteString(`</remarks>`)
	return finish(event(uid, code, howHuman, p, now, stale), d.String())
}

// buildCancel builds the cancellation of an emergency: b-a-o-can with the
// emergency's uid and <emergency cancel="true">name</emergency>.
func buildCancel(uid, name string, p geo.Point, now time.Time) (*cot.Event, error) {
	var d strings.Builder
	d.WriteString(`<emergency cancel="true">`)
	escape(&d, name)
	d.WriteString(`</emergency>`)
	return finish(event(uid, typeCancel, howHuman, p, now, now.Add(oneShotFor)), d.String())
}

// buildForceDelete builds the delete that removes an object from clients'
// maps (protocol.md §1): t-x-d-d with a fresh uid, <link uid type
// relation="p-p"/> naming the object, and <__forcedelete/>, which tells
// clients to remove it rather than mark it stale.
func buildForceDelete(uid, typ string, now time.Time) (*cot.Event, error) {
	var d strings.Builder
	d.WriteString(`<link uid="`)
	escape(&d, uid)
	d.WriteString(`" type="`)
	escape(&d, typ)
	d.WriteString(`" relation="p-p"/><__forcedelete/>`)
	return finish(event(uuid.NewString(), cot.TypeDelete, howGIGO, geo.Point{}, now, now.Add(oneShotFor)), d.String())
}

// event is the skeleton of a server event: version 2.0, times to the
// millisecond in UTC, the point with unknown height, ce and le.
func event(uid, typ, how string, p geo.Point, now, stale time.Time) *cot.Event {
	now = now.UTC().Truncate(time.Millisecond)
	return &cot.Event{
		Version: "2.0", UID: uid, Type: typ, How: how,
		Time: now, Start: now, Stale: stale.UTC().Truncate(time.Millisecond),
		Point: cot.Point{Lat: p.Lat, Lon: p.Lon, Hae: cot.Unknown, Ce: cot.Unknown, Le: cot.Unknown},
	}
}

// finish sets the detail and returns the event as a client decodes it.
func finish(ev *cot.Event, detail string) (*cot.Event, error) {
	ev.Detail.XML = []byte(detail)
	out, err := cot.Decode(ev.AppendXML(nil))
	if err != nil {
		return nil, fmt.Errorf("objects: built an event that does not decode: %w", err)
	}
	return out, nil
}

// escape writes s as XML text or attribute content: markup characters and
// white space other than the space as references, characters XML cannot
// carry (other control characters, invalid UTF-8) as U+FFFD.
func escape(b *strings.Builder, s string) {
	for _, r := range s {
		switch {
		case r == '&':
			b.WriteString("&amp;")
		case r == '<':
			b.WriteString("&lt;")
		case r == '>':
			b.WriteString("&gt;")
		case r == '"':
			b.WriteString("&quot;")
		case r == '\'':
			b.WriteString("&apos;")
		case r == '\t' || r == '\n' || r == '\r':
			fmt.Fprintf(b, "&#%d;", r)
		case r == utf8.RuneError || r < 0x20 || r == 0xFFFE || r == 0xFFFF || (r >= 0xD800 && r <= 0xDFFF):
			b.WriteRune('\uFFFD')
		default:
			b.WriteRune(r)
		}
	}
}

// stripDeclaration returns an event's XML without the XML declaration.
func stripDeclaration(xml []byte) string {
	s := string(xml)
	if strings.HasPrefix(s, "<?xml") {
		if i := strings.Index(s, "?>"); i >= 0 {
			s = strings.TrimLeft(s[i+2:], "\r\n")
		}
	}
	return s
}
