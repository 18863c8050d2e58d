package cot

import (
	"math"
	"strconv"
	"time"
)

// eventBlock holds an event and its typed detail views in one allocation.
type eventBlock struct {
	ev        Event
	contact   Contact
	group     Group
	takv      Takv
	track     Track
	status    Status
	precise   PrecisionLocation
	emergency Emergency
	takctl    TakControl
	marti     Marti
}

// stringFix is a string field to be cut from the tokenizer's arena once all
// values of a message have been collected: one allocation for them all.
type stringFix struct {
	dst  *string
	a, b int
}

// setString schedules *dst to receive the (unescaped) value raw.
func (t *tokenizer) setString(dst *string, raw []byte, refs bool) {
	if len(raw) == 0 {
		*dst = ""
		return
	}
	if !refs {
		if s, ok := intern(raw); ok {
			*dst = s
			return
		}
	}
	a := len(t.arena)
	if refs {
		t.arena = appendUnescaped(t.arena, raw)
	} else {
		t.arena = append(t.arena, raw...)
	}
	t.fixes = append(t.fixes, stringFix{dst, a, len(t.arena)})
}

// setAttr is setString for an attribute value.
func (t *tokenizer) setAttr(dst *string, a attr) { t.setString(dst, t.bytes(a.val), a.refs) }

// finishStrings performs the scheduled string assignments.
func (t *tokenizer) finishStrings() {
	if len(t.fixes) == 0 {
		return
	}
	s := string(t.arena)
	for _, f := range t.fixes {
		*f.dst = s[f.a:f.b]
	}
	clear(t.fixes)
	t.fixes = t.fixes[:0]
	t.arena = t.arena[:0]
}

// value returns the attribute's value with references resolved, using the
// tokenizer's text scratch when it must be unescaped. Valid until the next
// call.
func (t *tokenizer) value(a attr) []byte {
	raw := t.bytes(a.val)
	if !a.refs {
		return raw
	}
	t.text = appendUnescaped(t.text[:0], raw)
	return t.text
}

// intern returns a constant for values that nearly every event repeats, so
// that decoding them allocates nothing.
func intern(b []byte) (string, bool) {
	switch string(b) {
	case "2.0":
		return "2.0", true
	case "m-g":
		return "m-g", true
	case "h-e":
		return "h-e", true
	case "h-g-i-g-o":
		return "h-g-i-g-o", true
	case "m-f":
		return "m-f", true
	case "a-f-G-U-C":
		return "a-f-G-U-C", true
	case "a-f-G-U-C-I":
		return "a-f-G-U-C-I", true
	case "GPS":
		return "GPS", true
	case "USER":
		return "USER", true
	case "DTED0":
		return "DTED0", true
	case "???":
		return "???", true
	case "ATAK-CIV":
		return "ATAK-CIV", true
	case "WinTAK-CIV":
		return "WinTAK-CIV", true
	case "*:-1:stcp":
		return "*:-1:stcp", true
	case "p-p":
		return "p-p", true
	case "Team Member":
		return "Team Member", true
	case "Team Lead":
		return "Team Lead", true
	case "Cyan":
		return "Cyan", true
	case "Yellow":
		return "Yellow", true
	case "White":
		return "White", true
	case "Green":
		return "Green", true
	case "Blue":
		return "Blue", true
	case "Red":
		return "Red", true
	}
	return "", false
}

// Decode parses one XML CoT event (protocol.md §1). Leading white space, an XML
// declaration and comments are skipped, as are trailing white space and
// comments; anything else before or after the event is an error. Malformed
// input gives a *SyntaxError. The returned event owns its memory: it does
// not alias b.
func Decode(b []byte) (*Event, error) {
	t := newTokenizer(b)
	defer t.release()
	blk := new(eventBlock)
	if err := t.decodeEvent(blk); err != nil {
		return nil, err
	}
	return &blk.ev, nil
}

func (t *tokenizer) decodeEvent(blk *eventBlock) error {
	if len(t.src) >= 3 && t.src[0] == 0xEF && t.src[1] == 0xBB && t.src[2] == 0xBF {
		t.pos = 3 // UTF-8 byte order mark
	}
	// Prolog: white space, the declaration, comments.
	for {
		if err := t.next(); err != nil {
			return err
		}
		switch t.kind {
		case tokEOF:
			return errAt(t.pos, "no <event> element")
		case tokText:
			if !isBlank(t.bytes(t.body)) {
				return errAt(t.start, "text before <event>")
			}
			continue
		case tokComment, tokPI:
			continue
		case tokStart:
			if !t.is(t.name, "event") {
				return errAt(t.start, "expected <event>, found <%s>", t.bytes(t.name))
			}
		default:
			return errAt(t.start, "unexpected markup before <event>")
		}
		break
	}
	ev := &blk.ev
	if err := t.eventAttrs(ev); err != nil {
		return err
	}
	ev.Point = Point{Ce: Unknown, Le: Unknown, Hae: Unknown} // protocol.md §1: missing point
	if !t.selfClose {
		if err := t.eventContent(blk); err != nil {
			return err
		}
	}
	// Epilog: only white space and comments may follow </event>.
	for {
		if err := t.next(); err != nil {
			return err
		}
		switch t.kind {
		case tokEOF:
			t.finishStrings()
			return nil
		case tokText:
			if isBlank(t.bytes(t.body)) {
				continue
			}
		case tokComment, tokPI:
			continue
		}
		return errAt(t.start, "unexpected data after </event>")
	}
}

// eventAttrs reads the attributes of <event> (protocol.md §1).
func (t *tokenizer) eventAttrs(ev *Event) error {
	var hasUID, hasType, hasTime, hasStart, hasStale bool
	for _, a := range t.attrs {
		var err error
		switch string(t.bytes(a.name)) {
		case "version":
			t.setAttr(&ev.Version, a)
		case "uid":
			t.setAttr(&ev.UID, a)
			hasUID = a.val.len() > 0
		case "type":
			t.setAttr(&ev.Type, a)
			hasType = a.val.len() > 0
		case "how":
			t.setAttr(&ev.How, a)
		case "time":
			ev.Time, err = t.timeAttr(a)
			hasTime = true
		case "start":
			ev.Start, err = t.timeAttr(a)
			hasStart = true
		case "stale":
			ev.Stale, err = t.timeAttr(a)
			hasStale = true
		case "access":
			t.setAttr(&ev.Access, a)
		case "qos":
			t.setAttr(&ev.QoS, a)
		case "opex":
			t.setAttr(&ev.Opex, a)
		case "caveat":
			t.setAttr(&ev.Caveat, a)
		case "releasableTo":
			t.setAttr(&ev.ReleasableTo, a)
		}
		if err != nil {
			return err
		}
	}
	switch {
	case !hasUID:
		return errAt(t.start, "<event> has no uid")
	case !hasType:
		return errAt(t.start, "<event> has no type")
	case !hasTime:
		return errAt(t.start, "<event> has no time")
	case !hasStale:
		return errAt(t.start, "<event> has no stale")
	}
	if !hasStart {
		ev.Start = ev.Time // lenient: start defaults to time
	}
	if ev.Version == "" {
		ev.Version = "2.0"
	}
	return nil
}

func (t *tokenizer) timeAttr(a attr) (time.Time, error) {
	v := t.value(a)
	tm, ok := parseTime(v)
	if !ok {
		return time.Time{}, errAt(a.val.a, "bad %s time %s", t.bytes(a.name), quoteName(v))
	}
	return tm, nil
}

// eventContent reads the children of <event> up to </event>: <point> and
// <detail> in either order, each at most once. Other children and text are
// ignored (their nesting is still checked).
func (t *tokenizer) eventContent(blk *eventBlock) error {
	var hasPoint, hasDetail bool
	for {
		if err := t.next(); err != nil {
			return err
		}
		switch t.kind {
		case tokEOF:
			return errAt(t.pos, "input ends inside <event>")
		case tokEnd:
			if t.depth == 0 {
				return nil
			}
		case tokStart:
			if t.depth != 1 {
				continue
			}
			switch {
			case t.is(t.name, "point"):
				if hasPoint {
					return errAt(t.start, "duplicate <point>")
				}
				hasPoint = true
				if err := t.pointAttrs(&blk.ev.Point); err != nil {
					return err
				}
			case t.is(t.name, "detail"):
				if hasDetail {
					return errAt(t.start, "duplicate <detail>")
				}
				hasDetail = true
				if t.selfClose {
					continue
				}
				if err := t.parseDetail(blk, t.depth+1); err != nil {
					return err
				}
			}
		}
	}
}

// pointAttrs reads <point lat lon hae ce le/> (protocol.md §1). Missing values
// keep their defaults (0 for lat and lon, Unknown for the others); a
// non-finite hae, ce or le ("nan" in real captures) is read as Unknown.
func (t *tokenizer) pointAttrs(p *Point) error {
	for _, a := range t.attrs {
		var dst *float64
		switch string(t.bytes(a.name)) {
		case "lat":
			dst = &p.Lat
		case "lon":
			dst = &p.Lon
		case "hae":
			dst = &p.Hae
		case "ce":
			dst = &p.Ce
		case "le":
			dst = &p.Le
		default:
			continue
		}
		v := t.value(a)
		f, ok := parseFloat(v)
		if !ok {
			return errAt(a.val.a, "bad point %s value %s", t.bytes(a.name), quoteName(v))
		}
		if math.IsNaN(f) || math.IsInf(f, 0) {
			if dst == &p.Lat || dst == &p.Lon {
				return errAt(a.val.a, "point %s is not a finite number", t.bytes(a.name))
			}
			f = Unknown // "nan" is sent by some clients for an unknown hae, ce or le
		}
		*dst = f
	}
	return nil
}

// parseFloat parses a decimal number. strconv.ParseFloat also accepts
// hexadecimal floats and underscores; CoT numbers are plain decimals.
func parseFloat(b []byte) (float64, bool) {
	b = trimBlank(b)
	if len(b) == 0 || len(b) > 64 {
		return 0, false
	}
	for _, c := range b {
		if c == '_' || c == 'x' || c == 'X' || c == 'p' || c == 'P' {
			return 0, false
		}
	}
	f, err := strconv.ParseFloat(string(b), 64)
	if err != nil {
		return 0, false
	}
	return f, true
}
