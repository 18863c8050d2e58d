package cot

import (
	"math"
	"unicode/utf8"

	"google.golang.org/protobuf/encoding/protowire"
)

// Decoding half of the hand-written TakMessage codec (see protowire.go).

// wireError is a decoding failure at byte offset off of the whole message.
func wireError(off int, msg string) error { return errAt(off, "protobuf: %s", msg) }

func parseErr(off, code int) error { return wireError(off, protowire.ParseError(code).Error()) }

// fieldReader walks the fields of one message. After next returns true,
// num and typ describe the field and val/n are filled by one of the
// consume methods, or skip is called for unknown fields.
type fieldReader struct {
	b    []byte
	base int // offset of b within the whole message
	off  int
	num  protowire.Number
	typ  protowire.Type
	err  error
}

func (r *fieldReader) next() bool {
	if r.err != nil || r.off >= len(r.b) {
		return false
	}
	num, typ, n := protowire.ConsumeTag(r.b[r.off:])
	if n < 0 {
		r.err = parseErr(r.base+r.off, n)
		return false
	}
	if num > protowire.MaxValidNumber {
		r.err = wireError(r.base+r.off, "invalid field number")
		return false
	}
	r.num, r.typ = num, typ
	r.off += n
	return true
}

// skip consumes a field this message does not know, or a known field with
// an unexpected wire type (protobuf-go keeps those as unknown fields).
func (r *fieldReader) skip() {
	n := protowire.ConsumeFieldValue(r.num, r.typ, r.b[r.off:])
	if n < 0 {
		r.err = parseErr(r.base+r.off, n)
		return
	}
	r.off += n
}

// bytes consumes a length-delimited value; ok is false (and the field
// skipped) when the wire type is not BytesType.
func (r *fieldReader) bytes() (v []byte, base int, ok bool) {
	if r.typ != protowire.BytesType {
		r.skip()
		return nil, 0, false
	}
	v, n := protowire.ConsumeBytes(r.b[r.off:])
	if n < 0 {
		r.err = parseErr(r.base+r.off, n)
		return nil, 0, false
	}
	base = r.base + r.off + n - len(v)
	r.off += n
	return v, base, true
}

// str consumes a proto3 string, which must be valid UTF-8.
func (r *fieldReader) str(dst *[]byte) bool {
	v, base, ok := r.bytes()
	if !ok {
		return false
	}
	if !utf8.Valid(v) {
		r.err = wireError(base, "string field holds invalid UTF-8")
		return false
	}
	*dst = v
	return true
}

// gostr is str into a Go string.
func (r *fieldReader) gostr(dst *string) {
	var v []byte
	if !r.str(&v) {
		return
	}
	if s, ok := intern(v); ok {
		*dst = s
	} else {
		*dst = string(v)
	}
}

func (r *fieldReader) varint(dst *uint64) {
	if r.typ != protowire.VarintType {
		r.skip()
		return
	}
	v, n := protowire.ConsumeVarint(r.b[r.off:])
	if n < 0 {
		r.err = parseErr(r.base+r.off, n)
		return
	}
	*dst = v
	r.off += n
}

func (r *fieldReader) uint32(dst *uint32) {
	if r.typ != protowire.VarintType {
		r.skip()
		return
	}
	var v uint64
	r.varint(&v)
	if r.err == nil {
		*dst = uint32(v)
	}
}

func (r *fieldReader) double(dst *float64) {
	if r.typ != protowire.Fixed64Type {
		r.skip()
		return
	}
	v, n := protowire.ConsumeFixed64(r.b[r.off:])
	if n < 0 {
		r.err = parseErr(r.base+r.off, n)
		return
	}
	*dst = math.Float64frombits(v)
	r.off += n
}

// unmarshalTakMessage decodes a serialized TakMessage into m (which should
// be zero).
func unmarshalTakMessage(b []byte, m *pbMessage) error {
	r := fieldReader{b: b}
	for r.next() {
		switch r.num {
		case fMsgControl:
			if v, base, ok := r.bytes(); ok {
				m.HasControl = true
				if err := unmarshalControl(v, base, &m.Control); err != nil {
					return err
				}
			}
		case fMsgEvent:
			if v, base, ok := r.bytes(); ok {
				m.HasEvent = true
				if err := unmarshalEvent(v, base, &m.Event); err != nil {
					return err
				}
			}
		case fMsgSubmission:
			r.varint(&m.SubmissionTime)
		case fMsgCreation:
			r.varint(&m.CreationTime)
		default:
			r.skip()
		}
	}
	return r.err
}

func unmarshalControl(b []byte, base int, c *pbControl) error {
	r := fieldReader{b: b, base: base}
	for r.next() {
		switch r.num {
		case fCtlMin:
			r.uint32(&c.MinProtoVersion)
		case fCtlMax:
			r.uint32(&c.MaxProtoVersion)
		case fCtlUID:
			r.str(&c.ContactUID)
		default:
			r.skip()
		}
	}
	return r.err
}

func unmarshalEvent(b []byte, base int, e *pbEvent) error {
	r := fieldReader{b: b, base: base}
	for r.next() {
		switch r.num {
		case fEvType:
			r.gostr(&e.Type)
		case fEvAccess:
			r.gostr(&e.Access)
		case fEvQos:
			r.gostr(&e.Qos)
		case fEvOpex:
			r.gostr(&e.Opex)
		case fEvUID:
			r.gostr(&e.UID)
		case fEvSendTime:
			r.varint(&e.SendTime)
		case fEvStartTime:
			r.varint(&e.StartTime)
		case fEvStaleTime:
			r.varint(&e.StaleTime)
		case fEvHow:
			r.gostr(&e.How)
		case fEvLat:
			r.double(&e.Lat)
		case fEvLon:
			r.double(&e.Lon)
		case fEvHae:
			r.double(&e.Hae)
		case fEvCe:
			r.double(&e.Ce)
		case fEvLe:
			r.double(&e.Le)
		case fEvDetail:
			if v, base, ok := r.bytes(); ok {
				e.HasDetail = true
				if err := unmarshalDetail(v, base, &e.Detail); err != nil {
					return err
				}
			}
		case fEvCaveat:
			r.gostr(&e.Caveat)
		case fEvReleasTo:
			r.gostr(&e.ReleaseableTo)
		default:
			r.skip()
		}
	}
	return r.err
}

func unmarshalDetail(b []byte, base int, d *pbDetail) error {
	r := fieldReader{b: b, base: base}
	for r.next() {
		if r.num == fDetXML {
			r.str(&d.XMLDetail)
			continue
		}
		if r.num < fDetContact || r.num > fDetTrack {
			r.skip()
			continue
		}
		v, vbase, ok := r.bytes()
		if !ok {
			continue
		}
		s := fieldReader{b: v, base: vbase}
		switch r.num {
		case fDetContact:
			d.HasContact = true
			for s.next() {
				switch s.num {
				case 1:
					s.str(&d.Contact.Endpoint)
				case 2:
					s.str(&d.Contact.Callsign)
				default:
					s.skip()
				}
			}
		case fDetGroup:
			d.HasGroup = true
			for s.next() {
				switch s.num {
				case 1:
					s.str(&d.Group.Name)
				case 2:
					s.str(&d.Group.Role)
				default:
					s.skip()
				}
			}
		case fDetPrecise:
			d.HasPrecise = true
			for s.next() {
				switch s.num {
				case 1:
					s.str(&d.Precise.GeoPointSrc)
				case 2:
					s.str(&d.Precise.AltSrc)
				default:
					s.skip()
				}
			}
		case fDetStatus:
			d.HasStatus = true
			for s.next() {
				if s.num == 1 {
					s.uint32(&d.Status.Battery)
				} else {
					s.skip()
				}
			}
		case fDetTakv:
			d.HasTakv = true
			for s.next() {
				switch s.num {
				case 1:
					s.str(&d.Takv.Device)
				case 2:
					s.str(&d.Takv.Platform)
				case 3:
					s.str(&d.Takv.OS)
				case 4:
					s.str(&d.Takv.Version)
				default:
					s.skip()
				}
			}
		case fDetTrack:
			d.HasTrack = true
			for s.next() {
				switch s.num {
				case 1:
					s.double(&d.Track.Speed)
				case 2:
					s.double(&d.Track.Course)
				default:
					s.skip()
				}
			}
		}
		if s.err != nil {
			return s.err
		}
	}
	return r.err
}
