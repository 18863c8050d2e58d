package mgmt

// /ManageGeoObject (api.md §2.4–2.7, §4.1): markers the operator puts on
// every client's map, the radius query, and the repeated objects. Package
// objects builds, keeps and sends them; these handlers read and check the
// requests.

import (
	"errors"
	"math"
	"net/http"
	"strings"
	"time"

	"outpost/appliance/access"
	"outpost/appliance/geo"
	"outpost/appliance/httpapi"
	"outpost/appliance/objects"
)

// The contract's 500 texts (api.md §7); the repeated-message routes have
// none in the contract and use the nearest.
const (
	geoAddError = "An error occurred adding geo object."
	geoGetError = "An error occurred retrieving geo object."
)

// Defaults of api.md §8.
const (
	defaultRadius  = 100.0 // metres, getGeoObject
	defaultBearing = 360.0 // degrees, the offset's direction
	maxRepeatedIDs = 1000  // uids in one DeleteRepeatedMessage
)

// geoBody is a postGeoObject / putGeoObject body (api.md §2.4). Numbers may
// come as JSON numbers or strings.
type geoBody struct {
	UID       *string `json:"uid"`
	GeoObject *string `json:"geoObject"`
	Attitude  *string `json:"attitude"`
	Latitude  any     `json:"latitude"`
	Longitude any     `json:"longitude"`
	Address   *string `json:"address"`
	How       *string `json:"how"`
	Name      *string `json:"name"`
	Timeout   any     `json:"timeout"`
	Remarks   *string `json:"remarks"`
	Repeat    any     `json:"repeat"`
	LinkUID   *string `json:"link_uid"`
	Distance  any     `json:"distance"`
	Bearing   any     `json:"bearing"`
	Groups    any     `json:"groups"` // names; access.md "Groups": who receives it
}

// postGeoObject answers POST /ManageGeoObject/postGeoObject:
// {"message": "<uid>"}.
func (a *API) postGeoObject(w http.ResponseWriter, r *http.Request) error {
	in, err := a.readGeo(r, false)
	if err != nil {
		return httpapi.Internal(err, geoAddError)
	}
	uid, err := a.opts.Objects.PostGeo(r.Context(), in)
	if err != nil {
		return httpapi.Internal(objectsFault(err, "geoObject"), geoAddError)
	}
	httpapi.WriteMessage(w, http.StatusOK, uid)
	return nil
}

// putGeoObject answers PUT /ManageGeoObject/putGeoObject: the object uid
// takes the body's values (clients move the one marker).
func (a *API) putGeoObject(w http.ResponseWriter, r *http.Request) error {
	in, err := a.readGeo(r, true)
	if err != nil {
		return httpapi.Internal(err, geoAddError)
	}
	if err := a.opts.Objects.PutGeo(r.Context(), in, caller(r)); err != nil {
		return httpapi.Internal(objectsFault(err, "uid"), geoAddError)
	}
	httpapi.WriteMessage(w, http.StatusOK, in.UID)
	return nil
}

// readGeo reads and checks a geo object body. Every field is checked before
// an address is looked up, so a refused request never asks the geocoder.
func (a *API) readGeo(r *http.Request, update bool) (objects.GeoInput, error) {
	var b geoBody
	var in objects.GeoInput
	if err := httpapi.DecodeJSON(r, maxJSONBody, &b); err != nil {
		return in, err
	}
	if update {
		in.UID = str(b.UID)
		if err := checkText("uid", in.UID, true, maxNameLen); err != nil {
			return in, err
		}
	}
	if err := checkText("geoObject", str(b.GeoObject), true, 200); err != nil {
		return in, err
	}
	if !update {
		var err error
		if in.Groups, err = a.shareWith(r, "groups", b.Groups); err != nil {
			return in, err
		}
		in.Owner = owner(r)
	}
	if err := checkText("attitude", str(b.Attitude), true, 40); err != nil {
		return in, err
	}
	letter, ok := objects.AttitudeLetter(str(b.Attitude))
	if !ok {
		return in, httpapi.BadRequest("attitude", "must be %s, not %q", objects.AttitudeWords, httpapi.ClipValue(str(b.Attitude)))
	}
	typ, err := objects.GeoCoTType(str(b.GeoObject), letter)
	if err != nil {
		return in, httpapi.BadRequest("geoObject", "%s", err.Error())
	}
	in.Type = typ
	if err := checkText("how", str(b.How), true, 40); err != nil {
		return in, err
	}
	if in.How, ok = objects.HowCode(str(b.How)); !ok {
		return in, httpapi.BadRequest("how", "must be %s, not %q", objects.HowWords, httpapi.ClipValue(str(b.How)))
	}
	timeout, err := wholeSeconds("timeout", b.Timeout)
	if err != nil {
		return in, err
	}
	in.Timeout = time.Duration(timeout) * time.Second
	in.Callsign = strings.TrimSpace(str(b.Name))
	if err := checkText("name", in.Callsign, false, maxNameLen); err != nil {
		return in, err
	}
	in.Remarks = str(b.Remarks)
	if err := checkNote("remarks", in.Remarks, maxRemarksLen); err != nil {
		return in, err
	}
	in.LinkUID = strings.TrimSpace(str(b.LinkUID))
	if err := checkText("link_uid", in.LinkUID, false, maxNameLen); err != nil {
		return in, err
	}
	if in.Repeat, err = asBool("repeat", b.Repeat); err != nil {
		return in, err
	}
	distance, err := numberIn("distance", b.Distance, 0, maxDistance, 0, "between 0 and 20000000 metres")
	if err != nil {
		return in, err
	}
	bearing, err := numberIn("bearing", b.Bearing, 0, 360, defaultBearing, "between 0 and 360 degrees")
	if err != nil {
		return in, err
	}
	at := where{address: strings.TrimSpace(str(b.Address)), lat: b.Latitude, lon: b.Longitude}
	if err := at.check(); err != nil {
		return in, err
	}
	p, err := a.resolve(r.Context(), at)
	if err != nil {
		return in, err
	}
	if distance > 0 {
		p = geo.Destination(p, bearing, distance)
	}
	in.Point = p
	return in, nil
}

// wholeSeconds reads a required, non-negative whole number of seconds.
func wholeSeconds(field string, v any) (int64, error) {
	f, ok, err := asNumber(field, v)
	if err != nil {
		return 0, httpapi.BadRequest(field, "must be a whole number of seconds (0: persistent)")
	}
	if !ok {
		return 0, httpapi.BadRequest(field, "required: seconds until the object goes stale (0: persistent)")
	}
	if f < 0 {
		return 0, httpapi.BadRequest(field, "must not be negative (0: persistent), not %v", f)
	}
	if f != math.Trunc(f) || f > maxTimeout {
		return 0, httpapi.BadRequest(field, "must be a whole number of seconds up to %d (0: persistent), not %v", maxTimeout, f)
	}
	return int64(f), nil
}

// objectsFault names field in the answer to an object that was not found;
// the other refusals of the objects service stand on their own.
func objectsFault(err error, field string) error {
	if errors.Is(err, objects.ErrNotFound) {
		return httpapi.InField(field, err)
	}
	return err
}

// geoItem is api.md §2.7.
type geoItem struct {
	Latitude  float64 `json:"latitude"`
	Longitude float64 `json:"longitude"`
	Distance  float64 `json:"distance"`
	Direction float64 `json:"direction"`
	Type      string  `json:"type"`
	Attitude  string  `json:"attitude"`
}

// getGeoObject answers GET /ManageGeoObject/getGeoObject?latitude&longitude
// [&radius][&attitude]: the objects within radius metres (geodesic),
// nearest first.
func (a *API) getGeoObject(w http.ResponseWriter, r *http.Request) error {
	q := r.URL.Query()
	center, err := checkLatLon(queryValue(q.Get("latitude")), queryValue(q.Get("longitude")), "required")
	if err != nil {
		return err
	}
	radius, err := numberIn("radius", queryValue(q.Get("radius")), 0, math.MaxFloat64, defaultRadius, "a distance in metres, 0 or more")
	if err != nil {
		return err
	}
	var letter byte
	if att := strings.TrimSpace(q.Get("attitude")); att != "" && att != "*" {
		l, ok := objects.AttitudeLetter(att)
		if !ok {
			return httpapi.BadRequest("attitude", "must be * or %s, not %q", objects.AttitudeWords, httpapi.ClipValue(att))
		}
		letter = l
	}
	found, err := a.opts.Objects.Near(r.Context(), center, radius, letter, access.From(r).Reads())
	if errors.Is(err, objects.ErrTooLarge) {
		err = httpapi.BadRequest("radius", "%s; ask for a smaller radius", err.Error())
	}
	if err != nil {
		return httpapi.Internal(err, geoGetError)
	}
	out := make([]geoItem, len(found))
	for i, f := range found {
		out[i] = geoItem{Latitude: f.Lat, Longitude: f.Lon, Distance: round(f.Distance, 1e3), Direction: round(f.Direction, 1e6),
			Type: f.Type, Attitude: f.Attitude}
	}
	httpapi.WriteJSON(w, http.StatusOK, out)
	return nil
}

// queryValue makes an absent query parameter absent (nil) for asNumber.
func queryValue(s string) any {
	if s == "" {
		return nil
	}
	return s
}

// round rounds v to 1/scale.
func round(v, scale float64) float64 { return math.Round(v*scale) / scale }

// getRepeatedMessages answers GET /ManageGeoObject/GetRepeatedMessages:
// {"messages": {"<uid>": "<CoT XML>"}}, every geo object kept for replay
// (posted with repeat, or persistent), written as the objects are read.
func (a *API) getRepeatedMessages(w http.ResponseWriter, r *http.Request) error {
	l := httpapi.NewListing(w, r, "application/json", `{"messages":{`, "}}\n")
	err := a.opts.Objects.EachRepeated(r.Context(), access.From(r).Reads(), func(uid, xml string) error {
		return l.Entry(uid, xml)
	})
	l.Finish(err, geoGetError)
	return nil
}

// deleteRepeatedMessage answers DELETE
// /ManageGeoObject/DeleteRepeatedMessage?ids=a,b: every uid must be kept
// (404 naming those that are not, nothing changed); each stops repeating
// and clients are told to remove it.
func (a *API) deleteRepeatedMessage(w http.ResponseWriter, r *http.Request) error {
	var ids []string
	for _, v := range r.URL.Query()["ids"] {
		for _, id := range strings.Split(v, ",") {
			if id = strings.TrimSpace(id); id != "" {
				ids = append(ids, id)
			}
		}
	}
	if len(ids) == 0 {
		return httpapi.BadRequest("ids", "required: comma-separated uids of repeated messages")
	}
	if len(ids) > maxRepeatedIDs {
		return httpapi.BadRequest("ids", "at most %d uids at once", maxRepeatedIDs)
	}
	for _, id := range ids {
		if err := checkText("ids", id, true, maxNameLen); err != nil {
			return err
		}
	}
	if err := a.opts.Objects.DeleteRepeated(r.Context(), ids, caller(r)); err != nil {
		return httpapi.Internal(objectsFault(err, "ids"), geoAddError)
	}
	httpapi.WriteMessage(w, http.StatusOK, "operation successful")
	return nil
}
