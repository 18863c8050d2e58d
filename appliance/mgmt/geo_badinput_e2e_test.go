package mgmt_test

import (
	"strings"
	"testing"

	"outpost/internal/testkit"
)

// with copies a request body, setting (or, for nil, removing) fields.
func with(base map[string]any, kv ...any) map[string]any {
	out := map[string]any{}
	for k, v := range base {
		out[k] = v
	}
	for i := 0; i+1 < len(kv); i += 2 {
		if kv[i+1] == nil {
			delete(out, kv[i].(string))
		} else {
			out[kv[i].(string)] = kv[i+1]
		}
	}
	return out
}

// TestGeoBadInput: every geo object and emergency route refuses bad input
// with a 4xx whose message names the field, and a refused request stores
// nothing and sends nothing: the database is unchanged and a connected CoT
// client receives nothing before the next accepted object.
func TestGeoBadInput(t *testing.T) {
	e := newEnv(t, nil)
	c := e.app.DialTCP(t)
	joined(t, c)
	geoBody := map[string]any{"geoObject": "Sniper", "attitude": "hostile", "how": "gps", "latitude": 59.3, "longitude": 18.06, "timeout": 600}
	plain := e.post("POST", "/ManageGeoObject/postGeoObject", geoBody)
	rep := e.post("POST", "/ManageGeoObject/postGeoObject", with(geoBody, "repeat", true))
	emerg := e.post("POST", "/ManageEmergency/postEmergency", map[string]any{"emergencyType": "911 Alert", "latitude": 1, "longitude": 2})
	seeded := map[string]bool{plain: true, rep: true, emerg: true}
	for _, uid := range []string{plain, rep, emerg} {
		next(t, c, uid, "")
	}
	testkit.WaitFor(t, "the history to record the seeded objects", func() bool { return e.count("cot_events", "") == 3 })
	before := e.snapshot()

	long := strings.Repeat("x", 300)
	geo := "/ManageGeoObject/"
	em := "/ManageEmergency/"
	put := with(geoBody, "uid", plain)
	cases := []struct {
		name, method, path string
		body               any
		status             int
		field              string // the message starts with it
	}{
		// postGeoObject
		{"post: malformed", "POST", geo + "postGeoObject", `{"geoObject":`, 400, "malformed JSON"},
		{"post: empty body", "POST", geo + "postGeoObject", ``, 400, "request body is empty"},
		{"post: array body", "POST", geo + "postGeoObject", `[]`, 400, "the body must be an object"},
		{"post: geoObject missing", "POST", geo + "postGeoObject", with(geoBody, "geoObject", nil), 400, "geoObject: required"},
		{"post: geoObject unknown", "POST", geo + "postGeoObject", with(geoBody, "geoObject", "Dragon"), 400, `geoObject: "Dragon" is neither a geo object name nor a CoT type`},
		{"post: geoObject type", "POST", geo + "postGeoObject", with(geoBody, "geoObject", 7), 400, "geoObject: must be a string"},
		{"post: geoObject bad CoT type", "POST", geo + "postGeoObject", with(geoBody, "geoObject", "a-h-"), 400, "geoObject:"},
		{"post: geoObject other family", "POST", geo + "postGeoObject", with(geoBody, "geoObject", "b-m-p-s-m"), 400, "geoObject:"},
		{"post: geoObject markup", "POST", geo + "postGeoObject", with(geoBody, "geoObject", `a-h-G"><x`), 400, "geoObject:"},
		{"post: attitude missing", "POST", geo + "postGeoObject", with(geoBody, "attitude", nil), 400, "attitude: required"},
		{"post: attitude unknown", "POST", geo + "postGeoObject", with(geoBody, "attitude", "hostil"), 400, "attitude: must be friendly, friend, hostile, neutral or unknown"},
		{"post: how missing", "POST", geo + "postGeoObject", with(geoBody, "how", nil), 400, "how: required"},
		{"post: how unknown", "POST", geo + "postGeoObject", with(geoBody, "how", "radar"), 400, "how: must be gps, human"},
		{"post: timeout missing", "POST", geo + "postGeoObject", with(geoBody, "timeout", nil), 400, "timeout: required"},
		{"post: timeout negative", "POST", geo + "postGeoObject", with(geoBody, "timeout", -1), 400, "timeout: must not be negative"},
		{"post: timeout fraction", "POST", geo + "postGeoObject", with(geoBody, "timeout", 1.5), 400, "timeout: must be a whole number"},
		{"post: timeout huge", "POST", geo + "postGeoObject", with(geoBody, "timeout", 1e12), 400, "timeout: must be a whole number"},
		{"post: timeout text", "POST", geo + "postGeoObject", with(geoBody, "timeout", "soon"), 400, "timeout: must be a whole number"},
		{"post: timeout type", "POST", geo + "postGeoObject", with(geoBody, "timeout", true), 400, "timeout: must be a whole number"},
		{"post: no position", "POST", geo + "postGeoObject", with(geoBody, "latitude", nil, "longitude", nil), 400, "latitude: required"},
		{"post: longitude missing", "POST", geo + "postGeoObject", with(geoBody, "longitude", nil), 400, "longitude: required"},
		{"post: latitude above 90", "POST", geo + "postGeoObject", with(geoBody, "latitude", 91), 400, "latitude: must be a number between -90 and 90"},
		{"post: latitude below -90", "POST", geo + "postGeoObject", with(geoBody, "latitude", -90.0001), 400, "latitude: must be a number between -90 and 90"},
		{"post: longitude above 180", "POST", geo + "postGeoObject", with(geoBody, "longitude", 180.5), 400, "longitude: must be a number between -180 and 180"},
		{"post: latitude text", "POST", geo + "postGeoObject", with(geoBody, "latitude", "north"), 400, "latitude: must be a number"},
		{"post: latitude NaN", "POST", geo + "postGeoObject", with(geoBody, "latitude", "NaN"), 400, "latitude: must be a number"},
		{"post: longitude type", "POST", geo + "postGeoObject", with(geoBody, "longitude", []int{1}), 400, "longitude: must be a number"},
		{"post: address out of range", "POST", geo + "postGeoObject", with(geoBody, "address", "91, 18"), 400, "address: not a valid latitude/longitude coordinate"},
		{"post: address MGRS odd digits", "POST", geo + "postGeoObject", with(geoBody, "address", "33VXF740008000"), 400, "address: not a valid MGRS coordinate"},
		{"post: address without geocoder", "POST", geo + "postGeoObject", with(geoBody, "address", "Stockholm"), 400, `address: "Stockholm" is not a coordinate, and no geocoder is configured`},
		{"post: address too long", "POST", geo + "postGeoObject", with(geoBody, "address", strings.Repeat("9", 300)), 400, "address: longer than 256 bytes"},
		{"post: address type", "POST", geo + "postGeoObject", with(geoBody, "address", 5), 400, "address: must be a string"},
		{"post: distance negative", "POST", geo + "postGeoObject", with(geoBody, "distance", -5), 400, "distance: must be between 0 and"},
		{"post: distance text", "POST", geo + "postGeoObject", with(geoBody, "distance", "far"), 400, "distance: must be a number"},
		{"post: distance too far", "POST", geo + "postGeoObject", with(geoBody, "distance", 3e7), 400, "distance: must be between 0 and"},
		{"post: bearing above 360", "POST", geo + "postGeoObject", with(geoBody, "bearing", 361), 400, "bearing: must be between 0 and 360"},
		{"post: bearing negative", "POST", geo + "postGeoObject", with(geoBody, "bearing", -1), 400, "bearing: must be between 0 and 360"},
		{"post: name too long", "POST", geo + "postGeoObject", with(geoBody, "name", long), 400, "name: longer than 256 bytes"},
		{"post: name control character", "POST", geo + "postGeoObject", with(geoBody, "name", "a\u0007b"), 400, "name: contains a control character"},
		{"post: name type", "POST", geo + "postGeoObject", with(geoBody, "name", 1), 400, "name: must be a string"},
		{"post: remarks too long", "POST", geo + "postGeoObject", with(geoBody, "remarks", strings.Repeat("r", 5000)), 400, "remarks: longer than 4096 bytes"},
		{"post: remarks control character", "POST", geo + "postGeoObject", with(geoBody, "remarks", "a\u0000b"), 400, "remarks: contains a control character"},
		{"post: link_uid type", "POST", geo + "postGeoObject", with(geoBody, "link_uid", false), 400, "link_uid: must be a string"},
		{"post: link_uid too long", "POST", geo + "postGeoObject", with(geoBody, "link_uid", long), 400, "link_uid: longer than"},
		{"post: repeat value", "POST", geo + "postGeoObject", with(geoBody, "repeat", "maybe"), 400, "repeat: must be"},
		{"post: repeat type", "POST", geo + "postGeoObject", with(geoBody, "repeat", 1), 400, "repeat: must be"},
		{"post: too large", "POST", geo + "postGeoObject", with(geoBody, "remarks", strings.Repeat("r", 1<<20)), 413, "request body larger than"},
		{"post: wrong method", "GET", geo + "postGeoObject", nil, 405, "method GET not allowed"},
		// putGeoObject
		{"put: uid missing", "PUT", geo + "putGeoObject", geoBody, 400, "uid: required"},
		{"put: uid type", "PUT", geo + "putGeoObject", with(put, "uid", 3), 400, "uid: must be a string"},
		{"put: uid unknown", "PUT", geo + "putGeoObject", with(put, "uid", "nope"), 404, `uid: no geo object made through this API with uid "nope"`},
		{"put: uid of an emergency", "PUT", geo + "putGeoObject", with(put, "uid", emerg), 404, "uid: no geo object"},
		{"put: bad attitude", "PUT", geo + "putGeoObject", with(put, "attitude", "angry"), 400, "attitude: must be"},
		{"put: bad latitude", "PUT", geo + "putGeoObject", with(put, "latitude", 100), 400, "latitude: must be a number between -90 and 90"},
		{"put: timeout missing", "PUT", geo + "putGeoObject", with(put, "timeout", nil), 400, "timeout: required"},
		{"put: malformed", "PUT", geo + "putGeoObject", `{"uid":"` + plain + `",}`, 400, "malformed JSON"},
		// getGeoObject
		{"get: latitude missing", "GET", geo + "getGeoObject?longitude=18", nil, 400, "latitude: required"},
		{"get: longitude missing", "GET", geo + "getGeoObject?latitude=59", nil, 400, "longitude: required"},
		{"get: latitude out of range", "GET", geo + "getGeoObject?latitude=-95&longitude=18", nil, 400, "latitude: must be a number between -90 and 90"},
		{"get: longitude not a number", "GET", geo + "getGeoObject?latitude=59&longitude=east", nil, 400, "longitude: must be a number"},
		{"get: longitude infinite", "GET", geo + "getGeoObject?latitude=59&longitude=Inf", nil, 400, "longitude: must be a number"},
		{"get: radius negative", "GET", geo + "getGeoObject?latitude=59&longitude=18&radius=-1", nil, 400, "radius: must be a distance in metres"},
		{"get: radius not a number", "GET", geo + "getGeoObject?latitude=59&longitude=18&radius=wide", nil, 400, "radius: must be a number"},
		{"get: attitude unknown", "GET", geo + "getGeoObject?latitude=59&longitude=18&attitude=evil", nil, 400, "attitude: must be * or friendly"},
		// DeleteRepeatedMessage
		{"delete repeated: ids missing", "DELETE", geo + "DeleteRepeatedMessage", nil, 400, "ids: required"},
		{"delete repeated: ids empty", "DELETE", geo + "DeleteRepeatedMessage?ids=,%20,", nil, 400, "ids: required"},
		{"delete repeated: unknown", "DELETE", geo + "DeleteRepeatedMessage?ids=nope", nil, 404, `ids: no repeated message with uid "nope"`},
		{"delete repeated: not repeated", "DELETE", geo + "DeleteRepeatedMessage?ids=" + rep + "," + plain, nil, 404, `ids: no repeated message with uid "` + plain + `"`},
		{"delete repeated: an emergency", "DELETE", geo + "DeleteRepeatedMessage?ids=" + emerg, nil, 404, "ids: no repeated message"},
		{"delete repeated: control character", "DELETE", geo + "DeleteRepeatedMessage?ids=a%07b", nil, 400, "ids: contains a control character"},
		// postEmergency
		{"emergency: malformed", "POST", em + "postEmergency", `{"emergencyType"`, 400, "malformed JSON"},
		{"emergency: type missing", "POST", em + "postEmergency", map[string]any{"latitude": 1, "longitude": 1}, 400, "emergencyType: required"},
		{"emergency: type unknown", "POST", em + "postEmergency", map[string]any{"emergencyType": "Fire", "latitude": 1, "longitude": 1}, 400, `emergencyType: must be "911 Alert", "Ring The Bell", "Geo-fence Breached" or "In Contact", not "Fire"`},
		{"emergency: type type", "POST", em + "postEmergency", map[string]any{"emergencyType": 911, "latitude": 1, "longitude": 1}, 400, "emergencyType: must be a string"},
		{"emergency: latitude missing", "POST", em + "postEmergency", map[string]any{"emergencyType": "911 Alert", "longitude": 1}, 400, "latitude: required"},
		{"emergency: latitude out of range", "POST", em + "postEmergency", map[string]any{"emergencyType": "911 Alert", "latitude": 95, "longitude": 1}, 400, "latitude: must be a number between -90 and 90"},
		{"emergency: longitude out of range", "POST", em + "postEmergency", map[string]any{"emergencyType": "911 Alert", "latitude": 5, "longitude": -181}, 400, "longitude: must be a number between -180 and 180"},
		{"emergency: name control character", "POST", em + "postEmergency", map[string]any{"emergencyType": "911 Alert", "latitude": 5, "longitude": 1, "name": "a\nb"}, 400, "name: contains a control character"},
		{"emergency: remarks too long", "POST", em + "postEmergency", map[string]any{"emergencyType": "911 Alert", "latitude": 5, "longitude": 1, "remarks": strings.Repeat("r", 5000)}, 400, "remarks: longer than"},
		{"emergency: address without geocoder", "POST", em + "postEmergency", map[string]any{"emergencyType": "911 Alert", "address": "the old mill"}, 400, `address: "the old mill" is not a coordinate`},
		// deleteEmergency
		{"cancel: no body", "DELETE", em + "deleteEmergency", nil, 400, "uid: required"},
		{"cancel: uid missing", "DELETE", em + "deleteEmergency", map[string]any{}, 400, "uid: required"},
		{"cancel: uid type", "DELETE", em + "deleteEmergency", map[string]any{"uid": 5}, 400, "uid: must be a string"},
		{"cancel: malformed", "DELETE", em + "deleteEmergency", `{"uid":}`, 400, "malformed JSON"},
		{"cancel: unknown", "DELETE", em + "deleteEmergency", map[string]any{"uid": "nope-9-1-1"}, 404, `uid: no active emergency with uid "nope-9-1-1"`},
		{"cancel: a geo object", "DELETE", em + "deleteEmergency", map[string]any{"uid": plain}, 404, "uid: no active emergency"},
		{"cancel: wrong method", "POST", em + "deleteEmergency", nil, 405, "method POST not allowed"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			r := e.do(tc.method, tc.path, e.admin, tc.body, "Content-Type", "application/json")
			want(t, tc.name, r, tc.status)
			if !strings.HasPrefix(r.Message(), tc.field) {
				t.Fatalf("message %q does not start with %q", r.Message(), tc.field)
			}
			sameSnapshot(t, tc.name, before, e.snapshot())
		})
	}
	// A bad coordinate's message lists the accepted notations.
	r := e.do("POST", geo+"postGeoObject", e.admin, with(geoBody, "address", "59,3 18,1"))
	want(t, "decimal comma", r, 400)
	if !strings.Contains(r.Message(), "accepted notations: decimal degrees") || !strings.Contains(r.Message(), "MGRS") {
		t.Fatalf("no notations in %q", r.Message())
	}
	if len(e.repeated()) != 1 || len(e.emergencies()) != 1 {
		t.Fatal("refused requests changed the repeated messages or the emergencies")
	}

	// Nothing was sent: the first event after the refusals (other than the
	// seeded objects' re-broadcasts) is the next accepted object.
	sentinel := e.post("POST", geo+"postGeoObject", geoBody)
	for {
		ev, err := c.Next(wait)
		if err != nil {
			t.Fatal(err)
		}
		if seeded[ev.UID] {
			continue
		}
		if ev.UID != sentinel {
			t.Fatalf("a refused request sent %s", ev.AppendXML(nil))
		}
		break
	}
}
