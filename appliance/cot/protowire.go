package cot

import (
	"math"

	"google.golang.org/protobuf/encoding/protowire"
)

// A hand-written encoder and decoder for takproto/takmessage.proto
// (protocol.md §3). The generated code is reflection-driven and allocates a
// message per nested field; these structs are filled in place. Tests check that the
// bytes and the decoded values agree with the generated code
// (proto.Marshal and proto.Unmarshal) for every capture and under fuzzing.
//
// Semantics follow the protobuf-go runtime for proto3: zero scalars are not
// written (a negative zero double is), sub-messages are written when set,
// fields are written in field-number order; when decoding, a known field with
// an unexpected wire type is skipped as unknown, a repeated scalar keeps the
// last value, a repeated message is merged, and strings must be valid UTF-8.

// Field numbers (protocol.md §3 table).
const (
	fMsgControl    = 1
	fMsgEvent      = 2
	fMsgSubmission = 3
	fMsgCreation   = 4

	fCtlMin = 1
	fCtlMax = 2
	fCtlUID = 3

	fEvType      = 1
	fEvAccess    = 2
	fEvQos       = 3
	fEvOpex      = 4
	fEvUID       = 5
	fEvSendTime  = 6
	fEvStartTime = 7
	fEvStaleTime = 8
	fEvHow       = 9
	fEvLat       = 10
	fEvLon       = 11
	fEvHae       = 12
	fEvCe        = 13
	fEvLe        = 14
	fEvDetail    = 15
	fEvCaveat    = 16
	fEvReleasTo  = 17

	fDetXML     = 1
	fDetContact = 2
	fDetGroup   = 3
	fDetPrecise = 4
	fDetStatus  = 5
	fDetTakv    = 6
	fDetTrack   = 7
)

// pbMessage is TakMessage.
type pbMessage struct {
	HasControl     bool
	Control        pbControl
	HasEvent       bool
	Event          pbEvent
	SubmissionTime uint64
	CreationTime   uint64
}

type pbControl struct {
	MinProtoVersion uint32
	MaxProtoVersion uint32
	ContactUID      []byte
}

// pbEvent is CotEvent. Header strings are Go strings (they come from and
// go to Event); detail strings are byte slices into the input or a scratch
// buffer.
type pbEvent struct {
	Type, Access, Qos, Opex, UID   string
	SendTime, StartTime, StaleTime uint64
	How                            string
	Lat, Lon, Hae, Ce, Le          float64
	HasDetail                      bool
	Detail                         pbDetail
	Caveat, ReleaseableTo          string
}

type pbDetail struct {
	XMLDetail  []byte
	HasContact bool
	Contact    struct{ Endpoint, Callsign []byte }
	HasGroup   bool
	Group      struct{ Name, Role []byte }
	HasPrecise bool
	Precise    struct{ GeoPointSrc, AltSrc []byte }
	HasStatus  bool
	Status     struct{ Battery uint32 }
	HasTakv    bool
	Takv       struct{ Device, Platform, OS, Version []byte }
	HasTrack   bool
	Track      struct{ Speed, Course float64 }
}

// ---- sizes ----

func sizeStr[S ~string | ~[]byte](num protowire.Number, s S) int {
	if len(s) == 0 {
		return 0
	}
	return protowire.SizeTag(num) + protowire.SizeBytes(len(s))
}

func sizeVarint(num protowire.Number, v uint64) int {
	if v == 0 {
		return 0
	}
	return protowire.SizeTag(num) + protowire.SizeVarint(v)
}

func sizeDouble(num protowire.Number, f float64) int {
	if f == 0 && !math.Signbit(f) {
		return 0
	}
	return protowire.SizeTag(num) + protowire.SizeFixed64()
}

func sizeMsg(num protowire.Number, n int) int {
	return protowire.SizeTag(num) + protowire.SizeBytes(n)
}

func (d *pbDetail) size() (total, contact, group, precise, status, takv, track int) {
	total = sizeStr(fDetXML, d.XMLDetail)
	if d.HasContact {
		contact = sizeStr(1, d.Contact.Endpoint) + sizeStr(2, d.Contact.Callsign)
		total += sizeMsg(fDetContact, contact)
	}
	if d.HasGroup {
		group = sizeStr(1, d.Group.Name) + sizeStr(2, d.Group.Role)
		total += sizeMsg(fDetGroup, group)
	}
	if d.HasPrecise {
		precise = sizeStr(1, d.Precise.GeoPointSrc) + sizeStr(2, d.Precise.AltSrc)
		total += sizeMsg(fDetPrecise, precise)
	}
	if d.HasStatus {
		status = sizeVarint(1, uint64(d.Status.Battery))
		total += sizeMsg(fDetStatus, status)
	}
	if d.HasTakv {
		takv = sizeStr(1, d.Takv.Device) + sizeStr(2, d.Takv.Platform) + sizeStr(3, d.Takv.OS) + sizeStr(4, d.Takv.Version)
		total += sizeMsg(fDetTakv, takv)
	}
	if d.HasTrack {
		track = sizeDouble(1, d.Track.Speed) + sizeDouble(2, d.Track.Course)
		total += sizeMsg(fDetTrack, track)
	}
	return
}

func (e *pbEvent) size(detail int) int {
	n := sizeStr(fEvType, e.Type) + sizeStr(fEvAccess, e.Access) + sizeStr(fEvQos, e.Qos) +
		sizeStr(fEvOpex, e.Opex) + sizeStr(fEvUID, e.UID) +
		sizeVarint(fEvSendTime, e.SendTime) + sizeVarint(fEvStartTime, e.StartTime) + sizeVarint(fEvStaleTime, e.StaleTime) +
		sizeStr(fEvHow, e.How) +
		sizeDouble(fEvLat, e.Lat) + sizeDouble(fEvLon, e.Lon) + sizeDouble(fEvHae, e.Hae) +
		sizeDouble(fEvCe, e.Ce) + sizeDouble(fEvLe, e.Le) +
		sizeStr(fEvCaveat, e.Caveat) + sizeStr(fEvReleasTo, e.ReleaseableTo)
	if e.HasDetail {
		n += sizeMsg(fEvDetail, detail)
	}
	return n
}

// ---- encoding ----

func appendStr[S ~string | ~[]byte](b []byte, num protowire.Number, s S) []byte {
	if len(s) == 0 {
		return b
	}
	b = protowire.AppendTag(b, num, protowire.BytesType)
	b = protowire.AppendVarint(b, uint64(len(s)))
	return append(b, s...)
}

func appendVarint(b []byte, num protowire.Number, v uint64) []byte {
	if v == 0 {
		return b
	}
	b = protowire.AppendTag(b, num, protowire.VarintType)
	return protowire.AppendVarint(b, v)
}

func appendDouble(b []byte, num protowire.Number, f float64) []byte {
	if f == 0 && !math.Signbit(f) {
		return b
	}
	b = protowire.AppendTag(b, num, protowire.Fixed64Type)
	return protowire.AppendFixed64(b, math.Float64bits(f))
}

func appendMsgHeader(b []byte, num protowire.Number, n int) []byte {
	b = protowire.AppendTag(b, num, protowire.BytesType)
	return protowire.AppendVarint(b, uint64(n))
}

// appendTakMessage appends TakMessage{cotEvent: e}.
func appendTakMessage(b []byte, e *pbEvent) []byte {
	d := &e.Detail
	dsize, contact, group, precise, status, takv, track := d.size()
	esize := e.size(dsize)
	b = appendMsgHeader(b, fMsgEvent, esize)
	b = appendStr(b, fEvType, e.Type)
	b = appendStr(b, fEvAccess, e.Access)
	b = appendStr(b, fEvQos, e.Qos)
	b = appendStr(b, fEvOpex, e.Opex)
	b = appendStr(b, fEvUID, e.UID)
	b = appendVarint(b, fEvSendTime, e.SendTime)
	b = appendVarint(b, fEvStartTime, e.StartTime)
	b = appendVarint(b, fEvStaleTime, e.StaleTime)
	b = appendStr(b, fEvHow, e.How)
	b = appendDouble(b, fEvLat, e.Lat)
	b = appendDouble(b, fEvLon, e.Lon)
	b = appendDouble(b, fEvHae, e.Hae)
	b = appendDouble(b, fEvCe, e.Ce)
	b = appendDouble(b, fEvLe, e.Le)
	if e.HasDetail {
		b = appendMsgHeader(b, fEvDetail, dsize)
		b = appendStr(b, fDetXML, d.XMLDetail)
		if d.HasContact {
			b = appendMsgHeader(b, fDetContact, contact)
			b = appendStr(b, 1, d.Contact.Endpoint)
			b = appendStr(b, 2, d.Contact.Callsign)
		}
		if d.HasGroup {
			b = appendMsgHeader(b, fDetGroup, group)
			b = appendStr(b, 1, d.Group.Name)
			b = appendStr(b, 2, d.Group.Role)
		}
		if d.HasPrecise {
			b = appendMsgHeader(b, fDetPrecise, precise)
			b = appendStr(b, 1, d.Precise.GeoPointSrc)
			b = appendStr(b, 2, d.Precise.AltSrc)
		}
		if d.HasStatus {
			b = appendMsgHeader(b, fDetStatus, status)
			b = appendVarint(b, 1, uint64(d.Status.Battery))
		}
		if d.HasTakv {
			b = appendMsgHeader(b, fDetTakv, takv)
			b = appendStr(b, 1, d.Takv.Device)
			b = appendStr(b, 2, d.Takv.Platform)
			b = appendStr(b, 3, d.Takv.OS)
			b = appendStr(b, 4, d.Takv.Version)
		}
		if d.HasTrack {
			b = appendMsgHeader(b, fDetTrack, track)
			b = appendDouble(b, 1, d.Track.Speed)
			b = appendDouble(b, 2, d.Track.Course)
		}
	}
	b = appendStr(b, fEvCaveat, e.Caveat)
	b = appendStr(b, fEvReleasTo, e.ReleaseableTo)
	return b
}

// takMessageSize is the length of appendTakMessage's output.
func takMessageSize(e *pbEvent) int {
	dsize, _, _, _, _, _, _ := e.Detail.size()
	return sizeMsg(fMsgEvent, e.size(dsize))
}
