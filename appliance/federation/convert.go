package federation

import (
	"bytes"
	"encoding/xml"
	"errors"
	"strconv"
	"time"

	"outpost/appliance/cot"
	"outpost/appliance/federation/fedproto"
)

// The conversion between a CoT event and a GeoEvent follows the official
// server's (docs/federation.md "Events"; facts from ProtoBufHelper in
// TAK-Product-Center/Server, src/takserver-core): times in milliseconds,
// "how" in coordSource, the whole <detail> element as XML in other except
// <track>, whose speed and course travel in their own fields (a receiving
// TAK Server always adds a <track> from them), and the explicit
// destinations of a directed event in ptpCallsigns, ptpUids and
// missionNames.

// maxDests bounds the destinations one received event may name.
const maxDests = 64

// toGeoEvent converts ev for a federate. dest, when not empty, is the
// callsign (and uid) the event is addressed to on the federate's side.
func toGeoEvent(ev *cot.Event, destCallsign, destUID string) *fedproto.GeoEvent {
	g := &fedproto.GeoEvent{
		SendTime: ev.Time.UnixMilli(), StartTime: ev.Start.UnixMilli(), StaleTime: ev.Stale.UnixMilli(),
		Lat: ev.Point.Lat, Lon: ev.Point.Lon, Hae: ev.Point.Hae, Ce: ev.Point.Ce, Le: ev.Point.Le,
		Uid: ev.UID, Type: ev.Type, CoordSource: ev.How,
		Access: ev.Access, Caveat: ev.Caveat, ReleaseableTo: ev.ReleasableTo,
	}
	d := &ev.Detail
	if d.Track != nil {
		g.Speed, g.Course = d.Track.Speed, d.Track.Course
		ev = ev.WithoutDetail("track")
		d = &ev.Detail
	}
	if d.Contact != nil {
		g.ScreenName = d.Contact.Callsign
	}
	if d.Group != nil {
		g.GroupName, g.GroupRole = d.Group.Name, d.Group.Role
	}
	if d.Status != nil {
		g.Battery = int32(min(d.Status.Battery, 1<<30))
	}
	if len(d.XML) == 0 {
		g.Other = "<detail/>"
	} else {
		g.Other = "<detail>" + string(d.XML) + "</detail>"
	}
	if destCallsign != "" {
		g.PtpCallsigns = []string{destCallsign}
	}
	if destUID != "" {
		g.PtpUids = []string{destUID}
	}
	return g
}

var errNoEvent = errors.New("no event")

// fromGeoEvent converts a federate's GeoEvent to a CoT event, through the
// XML decoder every client's event goes through: what does not make a
// valid event is an error.
func fromGeoEvent(g *fedproto.GeoEvent) (*cot.Event, error) {
	if g == nil {
		return nil, errNoEvent
	}
	content, err := detailContent(g.GetOther())
	if err != nil {
		return nil, err
	}
	if (g.GetSpeed() != 0 || g.GetCourse() != 0) && !bytes.Contains(content, []byte("<track")) {
		content = append(content, `<track speed="`...)
		content = strconv.AppendFloat(content, g.GetSpeed(), 'f', -1, 64)
		content = append(content, `" course="`...)
		content = strconv.AppendFloat(content, g.GetCourse(), 'f', -1, 64)
		content = append(content, `"/>`...)
	}
	if n := len(g.GetPtpCallsigns()) + len(g.GetPtpUids()) + len(g.GetMissionNames()); n > 0 {
		if n > maxDests {
			return nil, errors.New("too many destinations")
		}
		content = append(content, "<marti>"...)
		for _, c := range g.GetPtpCallsigns() {
			content = appendDest(content, "callsign", c)
		}
		for _, u := range g.GetPtpUids() {
			content = appendDest(content, "uid", u)
		}
		for _, m := range g.GetMissionNames() {
			content = appendDest(content, "mission", m)
		}
		content = append(content, "</marti>"...)
	}
	ev := &cot.Event{
		Version: "2.0", UID: g.GetUid(), Type: g.GetType(), How: g.GetCoordSource(),
		Time: time.UnixMilli(g.GetSendTime()).UTC(), Start: time.UnixMilli(g.GetStartTime()).UTC(),
		Stale:  time.UnixMilli(g.GetStaleTime()).UTC(),
		Access: g.GetAccess(), Caveat: g.GetCaveat(), ReleasableTo: g.GetReleaseableTo(),
		Point:  cot.Point{Lat: g.GetLat(), Lon: g.GetLon(), Hae: g.GetHae(), Ce: g.GetCe(), Le: g.GetLe()},
		Detail: cot.Detail{XML: content},
	}
	return cot.Decode(ev.AppendXML(nil))
}

// detailContent returns what is inside other's <detail> element.
func detailContent(other string) ([]byte, error) {
	s := bytes.TrimSpace([]byte(other))
	if len(s) == 0 {
		return nil, nil
	}
	if !bytes.HasPrefix(s, []byte("<detail")) {
		return nil, errors.New("other is not a <detail> element")
	}
	end := bytes.IndexByte(s, '>')
	if end < 0 {
		return nil, errors.New("other: <detail> is not closed")
	}
	if s[end-1] == '/' {
		if end != len(s)-1 {
			return nil, errors.New("other: content after <detail/>")
		}
		return nil, nil
	}
	if !bytes.HasSuffix(s, []byte("</detail>")) || end+1 > len(s)-len("</detail>") {
		return nil, errors.New("other: <detail> is not closed")
	}
	return append([]byte(nil), s[end+1:len(s)-len("</detail>")]...), nil
}

func appendDest(dst []byte, attr, v string) []byte {
	var b bytes.Buffer
	_ = xml.EscapeText(&b, []byte(v))
	dst = append(dst, `<dest `...)
	dst = append(dst, attr...)
	dst = append(dst, `="`...)
	dst = append(dst, b.Bytes()...)
	return append(dst, `"/>`...)
}
