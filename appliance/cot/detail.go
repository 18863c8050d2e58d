package cot

import (
	"bytes"
	"math"
	"strconv"
)

// MaxDests is the most <dest> entries one event may address (protocol.md
// §6). An event with more is malformed: it would cost every recipient's
// queue memory for an address list no TAK client sends.
const MaxDests = 256

// detailState tracks which typed child of <detail> is open while its
// content is read.
type detailState struct {
	inMarti      bool
	inTakControl bool
	inEmergency  bool // only for the first <emergency>, the one viewed
	emergency    []byte
}

// parseDetail reads the content of <detail> (protocol.md §1, §6): it fills the
// typed views of blk and sets Detail.XML to the children, verbatim when they
// are well-formed and rebuilt canonically otherwise. base is the depth of
// detail's children; with base 0 the tokenizer reads bare detail content up
// to the end of its input (DecodeProto).
func (t *tokenizer) parseDetail(blk *eventBlock, base int) error {
	d := &blk.ev.Detail
	contentStart, contentEnd := t.pos, -1
	odd := false
	var st detailState
	for contentEnd < 0 {
		if err := t.next(); err != nil {
			return err
		}
		if t.odd {
			odd = true
		}
		switch t.kind {
		case tokEOF:
			if base > 0 || len(t.stack) > 0 {
				return errAt(t.pos, "input ends inside <detail>")
			}
			contentEnd = t.pos
		case tokEnd:
			if t.depth < base {
				contentEnd = t.start
			} else if t.depth == base {
				if st.inEmergency {
					blk.emergency.Text = string(bytes.TrimSpace(st.emergency))
				}
				st.inMarti, st.inTakControl, st.inEmergency = false, false, false
			}
		case tokStart:
			switch t.depth - base {
			case 0:
				t.detailChild(blk, &st)
			case 1:
				t.detailGrandchild(blk, &st)
				if len(blk.marti.Dests) > MaxDests {
					return errAt(t.start, "more than %d <dest> entries in <marti>", MaxDests)
				}
			}
		case tokText:
			if st.inEmergency {
				st.emergency = appendUnescaped(st.emergency, t.bytes(t.body))
			}
		case tokCDATA:
			if st.inEmergency {
				st.emergency = append(st.emergency, t.bytes(t.body)...)
			}
		case tokPI:
			odd = true // dropped by the rebuild: a PI means nothing in CoT
		}
	}
	content := trimBlank(t.src[contentStart:contentEnd])
	if len(content) == 0 {
		return nil
	}
	if !odd {
		if t.owned {
			d.XML = content[:len(content):len(content)]
		} else {
			d.XML = append(make([]byte, 0, len(content)), content...)
		}
		return nil
	}
	x, err := canonicalDetail(content)
	if err != nil {
		return err
	}
	d.XML = x
	return nil
}

// detailChild fills the typed view of one child of <detail>. The first
// child of each kind is the one viewed; <link> and <marti> dests collect.
func (t *tokenizer) detailChild(blk *eventBlock, st *detailState) {
	d := &blk.ev.Detail
	switch string(t.bytes(t.name)) {
	case "contact":
		if d.Contact == nil {
			d.Contact = &blk.contact
			if a, ok := t.attrValue("callsign"); ok {
				t.setAttr(&blk.contact.Callsign, a)
			}
			if a, ok := t.attrValue("endpoint"); ok {
				t.setAttr(&blk.contact.Endpoint, a)
			}
		}
	case "__group":
		if d.Group == nil {
			d.Group = &blk.group
			if a, ok := t.attrValue("name"); ok {
				t.setAttr(&blk.group.Name, a)
			}
			if a, ok := t.attrValue("role"); ok {
				t.setAttr(&blk.group.Role, a)
			}
		}
	case "takv":
		if d.Takv == nil {
			d.Takv = &blk.takv
			for _, a := range t.attrs {
				switch string(t.bytes(a.name)) {
				case "device":
					t.setAttr(&blk.takv.Device, a)
				case "platform":
					t.setAttr(&blk.takv.Platform, a)
				case "os":
					t.setAttr(&blk.takv.OS, a)
				case "version":
					t.setAttr(&blk.takv.Version, a)
				}
			}
		}
	case "track":
		if d.Track == nil {
			d.Track = &blk.track
			if a, ok := t.attrValue("speed"); ok {
				blk.track.Speed, _ = parseFloat(t.value(a))
			}
			if a, ok := t.attrValue("course"); ok {
				blk.track.Course, _ = parseFloat(t.value(a))
			}
		}
	case "status":
		if d.Status == nil {
			d.Status = &blk.status
			if a, ok := t.attrValue("battery"); ok {
				blk.status.Battery = parseBattery(t.value(a))
			}
		}
	case "precisionlocation":
		if d.PrecisionLocation == nil {
			d.PrecisionLocation = &blk.precise
			if a, ok := t.attrValue("geopointsrc"); ok {
				t.setAttr(&blk.precise.GeoPointSrc, a)
			}
			if a, ok := t.attrValue("altsrc"); ok {
				t.setAttr(&blk.precise.AltSrc, a)
			}
		}
	case "marti":
		if d.Marti == nil {
			d.Marti = &blk.marti
		}
		st.inMarti = !t.selfClose
	case "link":
		var l Link
		for _, a := range t.attrs {
			switch string(t.bytes(a.name)) {
			case "uid":
				l.UID = t.str(a)
			case "type":
				l.Type = t.str(a)
			case "relation":
				l.Relation = t.str(a)
			}
		}
		d.Links = append(d.Links, l)
	case "emergency":
		if d.Emergency == nil {
			d.Emergency = &blk.emergency
			if a, ok := t.attrValue("type"); ok {
				t.setAttr(&blk.emergency.Type, a)
			}
			if a, ok := t.attrValue("cancel"); ok {
				blk.emergency.Cancel = string(bytes.TrimSpace(t.value(a))) == "true"
			}
			st.inEmergency = !t.selfClose
		}
	case "TakControl":
		if d.TakControl == nil {
			d.TakControl = &blk.takctl
		}
		st.inTakControl = !t.selfClose
	}
}

// detailGrandchild handles <marti><dest/></marti> and the <TakControl>
// children of protocol negotiation (protocol.md §4, §6).
func (t *tokenizer) detailGrandchild(blk *eventBlock, st *detailState) {
	switch {
	case st.inMarti && t.is(t.name, "dest"):
		var dst Dest
		for _, a := range t.attrs {
			switch string(t.bytes(a.name)) {
			case "callsign":
				dst.Callsign = t.str(a)
			case "uid":
				dst.UID = t.str(a)
			case "mission":
				dst.Mission = t.str(a)
			}
		}
		blk.marti.Dests = append(blk.marti.Dests, dst)
	case st.inTakControl && t.is(t.name, "TakProtocolSupport"):
		if a, ok := t.attrValue("version"); ok {
			blk.takctl.SupportVersion = parseVersion(t.value(a))
		}
	case st.inTakControl && t.is(t.name, "TakRequest"):
		if a, ok := t.attrValue("version"); ok {
			blk.takctl.RequestVersion = parseVersion(t.value(a))
		}
	case st.inTakControl && t.is(t.name, "TakResponse"):
		if a, ok := t.attrValue("status"); ok {
			var b bool
			switch string(bytes.TrimSpace(t.value(a))) {
			case "true":
				b = true
			case "false":
			default:
				return
			}
			blk.takctl.Response = &b
		}
	}
}

// str returns the attribute's value as a new string (for values stored in
// slices, which may move while they grow).
func (t *tokenizer) str(a attr) string {
	raw := t.bytes(a.val)
	if !a.refs {
		if s, ok := intern(raw); ok {
			return s
		}
		return string(raw)
	}
	return string(appendUnescaped(nil, raw))
}

func parseVersion(b []byte) int {
	n, err := strconv.Atoi(string(bytes.TrimSpace(b)))
	if err != nil || n < 0 {
		return 0
	}
	return n
}

// parseBattery reads a battery level; some clients write "88.0".
func parseBattery(b []byte) uint32 {
	b = bytes.TrimSpace(b)
	if n, err := strconv.ParseUint(string(b), 10, 32); err == nil {
		return uint32(n)
	}
	if f, ok := parseFloat(b); ok && f >= 0 && f <= math.MaxUint32 {
		return uint32(f)
	}
	return 0
}

// canonicalDetail rebuilds detail content that held something not
// well-formed (protocol.md §1: the relay must still be well-formed XML): comments
// inside start tags, bad comments and processing instructions are dropped,
// attributes are double-quoted and separated by one space, bare '&' and '<'
// are escaped. Everything that carries meaning is kept.
func canonicalDetail(content []byte) ([]byte, error) {
	t := newTokenizer(content)
	defer t.release()
	out := make([]byte, 0, len(content)+32)
	for {
		if err := t.next(); err != nil {
			return nil, err
		}
		switch t.kind {
		case tokEOF:
			if len(t.stack) > 0 {
				return nil, errAt(t.pos, "input ends inside <%s>", t.bytes(t.stack[len(t.stack)-1]))
			}
			return trimBlank(out), nil
		case tokStart:
			out = append(out, '<')
			out = append(out, t.bytes(t.name)...)
			for _, a := range t.attrs {
				out = append(out, ' ')
				out = append(out, t.bytes(a.name)...)
				out = append(out, '=', '"')
				out = appendCanonical(out, t.bytes(a.val), true)
				out = append(out, '"')
			}
			if t.selfClose {
				out = append(out, '/', '>')
			} else {
				out = append(out, '>')
			}
		case tokEnd:
			out = append(out, '<', '/')
			out = append(out, t.bytes(t.name)...)
			out = append(out, '>')
		case tokText:
			out = appendCanonical(out, t.bytes(t.body), false)
		case tokCDATA:
			out = append(out, t.src[t.start:t.pos]...)
		case tokComment:
			if !t.odd {
				out = append(out, t.src[t.start:t.pos]...)
			}
		}
	}
}

// appendCanonical appends raw text or a raw attribute value, keeping its
// well-formed references and escaping what would not be well-formed.
func appendCanonical(dst, raw []byte, inAttr bool) []byte {
	for i := 0; i < len(raw); i++ {
		c := raw[i]
		switch {
		case c == '&':
			if n, _ := refLen(raw[i:]); n > 0 {
				dst = append(dst, raw[i:i+n]...)
				i += n - 1
			} else {
				dst = append(dst, "&amp;"...)
			}
		case c == '<':
			dst = append(dst, "&lt;"...)
		case c == '>':
			dst = append(dst, "&gt;"...)
		case c == '"' && inAttr:
			dst = append(dst, "&quot;"...)
		default:
			dst = append(dst, c)
		}
	}
	return dst
}
