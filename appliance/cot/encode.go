package cot

import (
	"math"
	"strconv"
)

const xmlDeclaration = `<?xml version="1.0" encoding="UTF-8"?>` + "\n"

// AppendXML appends the event as one XML message (protocol.md §2, writer side): the
// declaration, a newline and the event, with nothing after </event>. Every
// event carries version, <point> and stale (protocol.md §1). Times are UTC with
// milliseconds. Detail.XML is written verbatim inside <detail>; the typed
// detail views are not consulted.
func (e *Event) AppendXML(dst []byte) []byte {
	dst = append(dst, xmlDeclaration...)
	dst = append(dst, `<event version="`...)
	if e.Version == "" {
		dst = append(dst, "2.0"...)
	} else {
		dst = appendEscaped(dst, e.Version)
	}
	dst = appendAttr(dst, "\" uid=\"", e.UID)
	dst = appendAttr(dst, " type=\"", e.Type)
	dst = appendAttr(dst, " how=\"", e.How)
	dst = append(dst, ` time="`...)
	dst = appendTime(dst, e.Time)
	dst = append(dst, `" start="`...)
	dst = appendTime(dst, e.Start)
	dst = append(dst, `" stale="`...)
	dst = appendTime(dst, e.Stale)
	dst = append(dst, '"')
	if e.Access != "" {
		dst = appendAttr(dst, " access=\"", e.Access)
	}
	if e.QoS != "" {
		dst = appendAttr(dst, " qos=\"", e.QoS)
	}
	if e.Opex != "" {
		dst = appendAttr(dst, " opex=\"", e.Opex)
	}
	if e.Caveat != "" {
		dst = appendAttr(dst, " caveat=\"", e.Caveat)
	}
	if e.ReleasableTo != "" {
		dst = appendAttr(dst, " releasableTo=\"", e.ReleasableTo)
	}
	dst = append(dst, `><point lat="`...)
	dst = appendFloat(dst, e.Point.Lat)
	dst = append(dst, `" lon="`...)
	dst = appendFloat(dst, e.Point.Lon)
	dst = append(dst, `" hae="`...)
	dst = appendFloat(dst, e.Point.Hae)
	dst = append(dst, `" ce="`...)
	dst = appendFloat(dst, e.Point.Ce)
	dst = append(dst, `" le="`...)
	dst = appendFloat(dst, e.Point.Le)
	dst = append(dst, `"/>`...)
	if len(e.Detail.XML) == 0 {
		dst = append(dst, "<detail/>"...)
	} else {
		dst = append(dst, "<detail>"...)
		dst = append(dst, e.Detail.XML...)
		dst = append(dst, "</detail>"...)
	}
	return append(dst, "</event>"...)
}

// appendAttr appends prefix (` name="`), the escaped value and the closing
// quote.
func appendAttr(dst []byte, prefix, value string) []byte {
	dst = append(dst, prefix...)
	dst = appendEscaped(dst, value)
	return append(dst, '"')
}

// appendFloat writes a number in plain decimal notation, the shortest that
// reads back exactly. Non-finite values (never produced by the decoders)
// are written as the CoT "unknown" value.
func appendFloat(dst []byte, f float64) []byte {
	if math.IsNaN(f) || math.IsInf(f, 0) {
		f = Unknown
	}
	return strconv.AppendFloat(dst, f, 'f', -1, 64)
}
