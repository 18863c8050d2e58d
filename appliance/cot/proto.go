package cot

import (
	"math"
	"strconv"
	"time"
)

// maxMillis is the last millisecond of year 9999: later times cannot be
// written as CoT XML.
const maxMillis = 253402300799999

// MarshalProto returns the event as a serialized TakMessage{cotEvent}
// without framing (protocol.md §3). Detail children that fit a typed message
// exactly become typed fields; every other child goes to xmlDetail verbatim.
// It fails if a time is before 1970 (protobuf times are unsigned
// milliseconds) or if Detail.XML is not well-formed.
func (e *Event) MarshalProto() ([]byte, error) {
	var m pbEvent
	m.Type, m.Access, m.Qos, m.Opex, m.UID = e.Type, e.Access, e.QoS, e.Opex, e.UID
	m.How, m.Caveat, m.ReleaseableTo = e.How, e.Caveat, e.ReleasableTo
	var err error
	if m.SendTime, err = millis(e.Time, "time"); err != nil {
		return nil, err
	}
	if m.StartTime, err = millis(e.Start, "start"); err != nil {
		return nil, err
	}
	if m.StaleTime, err = millis(e.Stale, "stale"); err != nil {
		return nil, err
	}
	m.Lat, m.Lon, m.Hae, m.Ce, m.Le = e.Point.Lat, e.Point.Lon, e.Point.Hae, e.Point.Ce, e.Point.Le
	for _, s := range [...]string{m.Type, m.Access, m.Qos, m.Opex, m.UID, m.How, m.Caveat, m.ReleaseableTo} {
		if !validChars([]byte(s)) {
			return nil, errAt(0, "event header holds invalid UTF-8 or an illegal character")
		}
	}
	if len(e.Detail.XML) > 0 {
		t := newTokenizer(e.Detail.XML)
		defer t.release()
		if err := t.splitDetail(&m.Detail); err != nil {
			return nil, err
		}
		d := &m.Detail
		m.HasDetail = len(d.XMLDetail) > 0 || d.HasContact || d.HasGroup || d.HasPrecise || d.HasStatus || d.HasTakv || d.HasTrack
	}
	return appendTakMessage(make([]byte, 0, takMessageSize(&m)), &m), nil
}

func millis(t time.Time, name string) (uint64, error) {
	ms := t.UnixMilli()
	if ms < 0 || ms > maxMillis {
		return 0, errAt(0, "event %s %s cannot be sent as protobuf", name, t.UTC().Format(time.RFC3339))
	}
	return uint64(ms), nil
}

// splitDetail sorts the children of detail content into typed fields and
// xmlDetail (protocol.md §3). A child becomes a typed field only when it has
// exactly the attributes that message carries, no content, and no raw
// white space characters in its values (those would not survive the trip);
// the first such child of each kind wins. Others are copied verbatim into
// xmlDetail, as is non-blank text; comments are dropped. t.arena collects
// xmlDetail, t.text unescaped values; pd keeps slices of both.
func (t *tokenizer) splitDetail(pd *pbDetail) error {
	xml := t.arena[:0]
	for {
		if err := t.next(); err != nil {
			return err
		}
		switch t.kind {
		case tokEOF:
			if len(t.stack) > 0 {
				return errAt(t.pos, "detail ends inside <%s>", t.bytes(t.stack[len(t.stack)-1]))
			}
			pd.XMLDetail = trimBlank(xml)
			t.arena = xml
			return nil
		case tokText:
			if !isBlank(t.bytes(t.body)) {
				xml = append(xml, t.bytes(t.body)...)
			}
		case tokCDATA:
			xml = append(xml, t.src[t.start:t.pos]...)
		case tokStart:
			start := t.start
			kind := t.typedKind(pd)
			var saved pbDetail
			if kind != 0 {
				saved = *pd
				t.fillTyped(pd, kind)
			}
			if !t.selfClose {
				if err := t.next(); err != nil {
					return err
				}
				if t.kind != tokEnd { // content: not a typed element
					if kind != 0 {
						*pd, kind = saved, 0
					}
					for !(t.kind == tokEnd && t.depth == 0) {
						if err := t.next(); err != nil {
							return err
						}
						if t.kind == tokEOF {
							return errAt(t.pos, "detail ends inside <%s>", t.bytes(t.stack[len(t.stack)-1]))
						}
					}
				}
			}
			if kind == 0 {
				xml = append(xml, t.src[start:t.pos]...)
			}
		}
	}
}

// Typed detail kinds (protocol.md §3 Detail message).
const (
	typedNone = iota
	typedContact
	typedGroup
	typedPrecise
	typedStatus
	typedTakv
	typedTrack
)

// typedKind reports which typed field the current start tag fits exactly,
// if that field is still free.
func (t *tokenizer) typedKind(pd *pbDetail) int {
	for _, a := range t.attrs {
		if a.ws {
			return typedNone
		}
	}
	has := func(names ...string) (mask int, ok bool) {
		for _, a := range t.attrs {
			found := false
			for i, n := range names {
				if t.is(a.name, n) {
					mask |= 1 << i
					found = true
					break
				}
			}
			if !found {
				return 0, false
			}
		}
		return mask, true
	}
	nonEmpty := func() bool {
		for _, a := range t.attrs {
			if a.val.len() == 0 {
				return false
			}
		}
		return true
	}
	switch string(t.bytes(t.name)) {
	case "contact":
		if m, ok := has("callsign", "endpoint"); ok && !pd.HasContact && m&1 != 0 {
			if a, ok := t.attrValue("endpoint"); !ok || a.val.len() > 0 {
				return typedContact
			}
		}
	case "__group":
		if m, ok := has("name", "role"); ok && !pd.HasGroup && m == 3 {
			return typedGroup
		}
	case "precisionlocation":
		if _, ok := has("geopointsrc", "altsrc"); ok && !pd.HasPrecise && nonEmpty() {
			return typedPrecise
		}
	case "status":
		if m, ok := has("battery"); ok && !pd.HasStatus && m == 1 {
			a, _ := t.attrValue("battery")
			v := t.bytes(a.val)
			if canonicalUint32(v) {
				return typedStatus
			}
		}
	case "takv":
		if _, ok := has("device", "platform", "os", "version"); ok && !pd.HasTakv && nonEmpty() {
			return typedTakv
		}
	case "track":
		if m, ok := has("speed", "course"); ok && !pd.HasTrack && m == 3 {
			a, _ := t.attrValue("speed")
			b, _ := t.attrValue("course")
			if _, ok := parseFloat(t.bytes(a.val)); ok && !a.refs {
				if _, ok := parseFloat(t.bytes(b.val)); ok && !b.refs {
					return typedTrack
				}
			}
		}
	}
	return typedNone
}

// fillTyped copies the current start tag's attributes into typed field kind.
func (t *tokenizer) fillTyped(pd *pbDetail, kind int) {
	for _, a := range t.attrs {
		v := t.bytes(a.val)
		if a.refs || a.odd {
			n := len(t.text)
			t.text = appendUnescaped(t.text, v)
			v = t.text[n:len(t.text):len(t.text)]
		}
		name := string(t.bytes(a.name))
		switch kind {
		case typedContact:
			if name == "callsign" {
				pd.Contact.Callsign = v
			} else {
				pd.Contact.Endpoint = v
			}
		case typedGroup:
			if name == "name" {
				pd.Group.Name = v
			} else {
				pd.Group.Role = v
			}
		case typedPrecise:
			if name == "geopointsrc" {
				pd.Precise.GeoPointSrc = v
			} else {
				pd.Precise.AltSrc = v
			}
		case typedStatus:
			n, _ := strconv.ParseUint(string(v), 10, 32)
			pd.Status.Battery = uint32(n)
		case typedTakv:
			switch name {
			case "device":
				pd.Takv.Device = v
			case "platform":
				pd.Takv.Platform = v
			case "os":
				pd.Takv.OS = v
			default:
				pd.Takv.Version = v
			}
		case typedTrack:
			f, _ := parseFloat(v)
			if name == "speed" {
				pd.Track.Speed = f
			} else {
				pd.Track.Course = f
			}
		}
	}
	switch kind {
	case typedContact:
		pd.HasContact = true
	case typedGroup:
		pd.HasGroup = true
	case typedPrecise:
		pd.HasPrecise = true
	case typedStatus:
		pd.HasStatus = true
	case typedTakv:
		pd.HasTakv = true
	case typedTrack:
		pd.HasTrack = true
	}
}

// DecodeProto converts a serialized TakMessage (no framing) to an event
// (protocol.md §3). It returns ErrNoEvent if the message has no cotEvent, and a
// *SyntaxError if it is malformed, lacks uid or type, holds characters
// that XML cannot carry (control characters), has a non-finite
// lat or lon or a time past year 9999, or carries an xmlDetail that is not
// well-formed XML. The event owns its memory.
func DecodeProto(msg []byte) (*Event, error) {
	var m pbMessage
	if err := unmarshalTakMessage(msg, &m); err != nil {
		return nil, err
	}
	if !m.HasEvent {
		return nil, ErrNoEvent
	}
	pe := &m.Event
	switch {
	case pe.UID == "":
		return nil, errAt(0, "protobuf cotEvent has no uid")
	case pe.Type == "":
		return nil, errAt(0, "protobuf cotEvent has no type")
	case pe.SendTime > maxMillis || pe.StartTime > maxMillis || pe.StaleTime > maxMillis:
		return nil, errAt(0, "protobuf cotEvent time is out of range")
	}
	for _, s := range [...]string{pe.Type, pe.Access, pe.Qos, pe.Opex, pe.UID, pe.How, pe.Caveat, pe.ReleaseableTo} {
		if !validChars([]byte(s)) {
			return nil, errAt(0, "protobuf cotEvent holds a character not allowed in XML")
		}
	}
	d := &pe.Detail
	for _, b := range [...][]byte{d.Contact.Callsign, d.Contact.Endpoint, d.Group.Name, d.Group.Role,
		d.Precise.GeoPointSrc, d.Precise.AltSrc, d.Takv.Device, d.Takv.Platform, d.Takv.OS, d.Takv.Version} {
		if !validChars(b) {
			return nil, errAt(0, "protobuf detail holds a character not allowed in XML")
		}
	}
	if !finite(pe.Lat) || !finite(pe.Lon) {
		return nil, errAt(0, "protobuf cotEvent lat or lon is not a finite number")
	}
	for _, f := range [...]*float64{&pe.Hae, &pe.Ce, &pe.Le} {
		if !finite(*f) {
			*f = Unknown // as in XML: a non-finite hae, ce or le is unknown
		}
	}
	blk := new(eventBlock)
	ev := &blk.ev
	ev.Version = "2.0"
	ev.UID, ev.Type, ev.How = pe.UID, pe.Type, pe.How
	ev.Access, ev.QoS, ev.Opex, ev.Caveat, ev.ReleasableTo = pe.Access, pe.Qos, pe.Opex, pe.Caveat, pe.ReleaseableTo
	ev.Time = time.UnixMilli(int64(pe.SendTime)).UTC()
	ev.Start = time.UnixMilli(int64(pe.StartTime)).UTC()
	ev.Stale = time.UnixMilli(int64(pe.StaleTime)).UTC()
	ev.Point = Point{Lat: pe.Lat, Lon: pe.Lon, Hae: pe.Hae, Ce: pe.Ce, Le: pe.Le}
	if !pe.HasDetail {
		return ev, nil
	}
	x := appendTypedXML(nil, &pe.Detail)
	x = append(x, pe.Detail.XMLDetail...)
	t := newTokenizer(x)
	defer t.release()
	t.owned = true // x was built for this event
	if err := t.parseDetail(blk, 0); err != nil {
		if se, ok := err.(*SyntaxError); ok {
			return nil, errAt(0, "protobuf detail: %s", se.Msg)
		}
		return nil, err
	}
	t.finishStrings()
	return ev, nil
}

// appendTypedXML rebuilds the typed detail fields as XML elements, in field
// order (protocol.md §3: proto -> XML rebuilds the typed elements, then appends
// xmlDetail).
func appendTypedXML(dst []byte, d *pbDetail) []byte {
	if d.HasContact {
		dst = append(dst, "<contact"...)
		dst = appendBytesAttr(dst, ` callsign="`, d.Contact.Callsign)
		dst = appendOptAttr(dst, ` endpoint="`, d.Contact.Endpoint)
		dst = append(dst, "/>"...)
	}
	if d.HasGroup {
		dst = append(dst, "<__group"...)
		dst = appendBytesAttr(dst, ` name="`, d.Group.Name)
		dst = appendBytesAttr(dst, ` role="`, d.Group.Role)
		dst = append(dst, "/>"...)
	}
	if d.HasPrecise {
		dst = append(dst, "<precisionlocation"...)
		dst = appendOptAttr(dst, ` geopointsrc="`, d.Precise.GeoPointSrc)
		dst = appendOptAttr(dst, ` altsrc="`, d.Precise.AltSrc)
		dst = append(dst, "/>"...)
	}
	if d.HasStatus {
		dst = append(dst, `<status battery="`...)
		dst = strconv.AppendUint(dst, uint64(d.Status.Battery), 10)
		dst = append(dst, `"/>`...)
	}
	if d.HasTakv {
		dst = append(dst, "<takv"...)
		dst = appendOptAttr(dst, ` device="`, d.Takv.Device)
		dst = appendOptAttr(dst, ` platform="`, d.Takv.Platform)
		dst = appendOptAttr(dst, ` os="`, d.Takv.OS)
		dst = appendOptAttr(dst, ` version="`, d.Takv.Version)
		dst = append(dst, "/>"...)
	}
	if d.HasTrack {
		dst = append(dst, `<track speed="`...)
		dst = strconv.AppendFloat(dst, d.Track.Speed, 'f', -1, 64)
		dst = append(dst, `" course="`...)
		dst = strconv.AppendFloat(dst, d.Track.Course, 'f', -1, 64)
		dst = append(dst, `"/>`...)
	}
	return dst
}

func appendOptAttr(dst []byte, prefix string, v []byte) []byte {
	if len(v) == 0 {
		return dst
	}
	return appendBytesAttr(dst, prefix, v)
}

func appendBytesAttr(dst []byte, prefix string, v []byte) []byte {
	dst = append(dst, prefix...)
	dst = appendEscaped(dst, v)
	return append(dst, '"')
}

// canonicalUint32 reports whether b is a uint32 written the way
// strconv.FormatUint writes it (so that the typed Status keeps the text).
func canonicalUint32(b []byte) bool {
	if len(b) == 0 || len(b) > 10 || (b[0] == '0' && len(b) > 1) {
		return false
	}
	n := uint64(0)
	for _, c := range b {
		if c < '0' || c > '9' {
			return false
		}
		n = n*10 + uint64(c-'0')
	}
	return n <= math.MaxUint32
}

func finite(f float64) bool { return !math.IsNaN(f) && !math.IsInf(f, 0) }
