package main

import (
	"strconv"
	"time"

	"github.com/google/uuid"

	"outpost/appliance/cot"
)

// saTemplate builds the position reports of the load clients: ATAK's SA
// (protocol.md §1: a-f-G-U-C with takv, contact, __group, status, track)
// plus the load tool's remarks (scan.go) padded by --size bytes.
type saTemplate struct {
	pad int
}

// uidOf is client i's uid. It is stable across runs so that a rerun against
// the same server, with the same certificates, claims the same uids.
func uidOf(i int) string { return "LOAD-" + strconv.Itoa(i) }

// build appends client idx's SA number seq, sent at now, in XML or as a
// protobuf stream frame.
func (t *saTemplate) build(dst []byte, proto bool, idx int, seq uint32, now time.Time, measured bool) ([]byte, error) {
	d := make([]byte, 0, 320+t.pad)
	d = append(d, `<takv device="outpost-load" platform="outpost-load" os="linux" version="1"/><contact callsign="L`...)
	d = strconv.AppendInt(d, int64(idx), 10)
	d = append(d, `" endpoint="*:-1:stcp"/><__group name="Cyan" role="Team Member"/><status battery="88"/><track speed="0.0" course="12.5"/>`...)
	d = appendRemarks(d, idx, seq, now.UnixNano(), measured, t.pad)
	now = now.UTC()
	ev := cot.Event{
		Version: "2.0", UID: uidOf(idx), Type: "a-f-G-U-C", How: "m-g",
		Time: now, Start: now, Stale: now.Add(6 * time.Minute),
		Point:  cot.Point{Lat: 59 + float64(idx%1000)*1e-4, Lon: 18 + float64(idx/1000)*1e-4, Hae: 25, Ce: 9.9, Le: cot.Unknown},
		Detail: cot.Detail{XML: d},
	}
	return encode(dst, &ev, proto)
}

// encode appends ev as XML or as a protobuf stream frame (protocol.md §2, §3).
func encode(dst []byte, ev *cot.Event, proto bool) ([]byte, error) {
	if !proto {
		return ev.AppendXML(dst), nil
	}
	msg, err := ev.MarshalProto()
	if err != nil {
		return dst, err
	}
	return cot.AppendStreamFrame(dst, msg), nil
}

// appendPing appends ATAK's keepalive, t-x-c-t with uid <uid>-ping
// (protocol.md §5).
func appendPing(dst []byte, proto bool, idx int) ([]byte, error) {
	now := time.Now().UTC()
	return encode(dst, &cot.Event{
		Version: "2.0", UID: uidOf(idx) + "-ping", Type: cot.TypePing, How: "m-g",
		Time: now, Start: now, Stale: now.Add(20 * time.Second),
		Point: cot.Point{Hae: cot.Unknown, Ce: cot.Unknown, Le: cot.Unknown},
	}, proto)
}

// appendTakRequest appends the request for TAK protocol v1 (protocol.md §4
// step 3), always XML.
func appendTakRequest(dst []byte, _ bool) ([]byte, error) {
	now := time.Now().UTC()
	ev := cot.Event{
		Version: "2.0", UID: "outpost-load-" + uuid.NewString(), Type: cot.TypeTakQuery, How: "m-g",
		Time: now, Start: now, Stale: now.Add(time.Minute),
		Point:  cot.Point{Ce: 999999, Le: 999999},
		Detail: cot.Detail{XML: []byte(`<TakControl><TakRequest version="1"/></TakControl>`)},
	}
	return ev.AppendXML(dst), nil
}
