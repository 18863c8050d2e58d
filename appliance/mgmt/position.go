package mgmt

// Positions and numbers in geo object and emergency requests (api.md §2.4,
// §2.10): coordinates as JSON numbers or strings holding one, an address in
// any coordinate notation (read offline) or, with a geocoder configured, a
// street address, and the optional geodesic offset.

import (
	"context"
	"encoding/json"
	"errors"
	"math"
	"net/http"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"

	"outpost/appliance/geo"
	"outpost/appliance/httpapi"
	"outpost/appliance/logx"
)

// Limits of geo object and emergency requests.
const (
	maxNameLen    = 256               // name, link_uid, uid
	maxRemarksLen = 4096              // remarks
	maxAddressLen = geo.MaxAddressLen // address
	maxDistance   = 20_000_000.0      // metres: about half the earth's circumference
	maxTimeout    = 10 * 365 * 86400  // seconds: ten years
)

// asNumber reads a number sent as a JSON number or as a string holding one
// (what form-minded clients send). Absent, null or "" is not present.
func asNumber(field string, v any) (f float64, present bool, err error) {
	var s string
	switch t := v.(type) {
	case nil:
		return 0, false, nil
	case json.Number:
		s = t.String()
	case string:
		s = strings.TrimSpace(t)
		if s == "" {
			return 0, false, nil
		}
	default:
		return 0, true, httpapi.BadRequest(field, "must be a number, not %s", kindOf(v))
	}
	f, err = strconv.ParseFloat(s, 64)
	if err != nil || math.IsNaN(f) || math.IsInf(f, 0) {
		return 0, true, httpapi.BadRequest(field, "must be a number, not %q", httpapi.ClipValue(s))
	}
	return f, true, nil
}

// numberIn reads an optional number within [lo, hi]; def when absent.
func numberIn(field string, v any, lo, hi, def float64, what string) (float64, error) {
	f, ok, err := asNumber(field, v)
	if err != nil {
		return 0, err
	}
	if !ok {
		return def, nil
	}
	if f < lo || f > hi {
		return 0, httpapi.BadRequest(field, "must be %s, not %v", what, f)
	}
	return f, nil
}

// checkLatLon reads a required latitude and longitude; missing says what
// to add to a request that lacks one.
func checkLatLon(lat, lon any, missing string) (geo.Point, error) {
	var p geo.Point
	var ok bool
	var err error
	if p.Lat, ok, err = asNumber("latitude", lat); err != nil {
		return p, httpapi.BadRequest("latitude", "must be a number between -90 and 90")
	} else if !ok {
		return p, httpapi.BadRequest("latitude", "%s", missing)
	}
	if p.Lon, ok, err = asNumber("longitude", lon); err != nil {
		return p, httpapi.BadRequest("longitude", "must be a number between -180 and 180")
	} else if !ok {
		return p, httpapi.BadRequest("longitude", "%s", missing)
	}
	if p.Lat < -90 || p.Lat > 90 {
		return p, httpapi.BadRequest("latitude", "must be a number between -90 and 90, not %v", p.Lat)
	}
	if p.Lon < -180 || p.Lon > 180 {
		return p, httpapi.BadRequest("longitude", "must be a number between -180 and 180, not %v", p.Lon)
	}
	return p, nil
}

// where is the position part of a request: an address, or coordinates.
type where struct {
	address  string
	lat, lon any
}

// needLatLon is what a request without coordinates or an address lacks.
const needLatLon = "required (or give an address)"

// check refuses what no geocoder answer could make right: missing or bad
// coordinates; an address too long, not UTF-8 or with control characters.
func (w where) check() error {
	if w.address == "" {
		_, err := checkLatLon(w.lat, w.lon, needLatLon)
		return err
	}
	return checkText("address", w.address, false, maxAddressLen)
}

// resolve turns w into a position: coordinates as given, or the address
// read as a coordinate in any notation (offline) or looked up by the
// geocoder. A non-empty address wins over coordinates. Errors are 400s
// naming the field (the geo package's message lists the accepted
// notations), or 502 when the geocoder failed.
func (a *API) resolve(ctx context.Context, w where) (geo.Point, error) {
	if w.address == "" {
		return checkLatLon(w.lat, w.lon, needLatLon)
	}
	p, err := a.opts.Objects.Resolve(ctx, w.address)
	var pe *geo.ParseError
	switch {
	case err == nil:
		return p, nil
	case errors.As(err, &pe):
		return p, httpapi.BadRequest("address", "%s", pe.Error())
	case errors.Is(err, geo.ErrNotFound):
		return p, httpapi.BadRequest("address", "the geocoder knows no place called %q", httpapi.ClipValue(w.address))
	case errors.Is(err, geo.ErrGeocoder):
		a.log.Warn("the geocoder failed", "address", logx.Clip(w.address), "err", err)
		return p, httpapi.Errorf(http.StatusBadGateway, "address: the geocoder failed: %s", logx.ClipN(err.Error(), 200))
	case ctx.Err() != nil:
		return p, err
	default:
		return p, httpapi.BadRequest("address", "%s", logx.ClipN(err.Error(), 300))
	}
}

// checkNote accepts free text (remarks): valid UTF-8, at most max bytes,
// line breaks and tabs allowed, other control characters not.
func checkNote(field, v string, max int) error {
	if len(v) > max {
		return httpapi.BadRequest(field, "longer than %d bytes", max)
	}
	if !utf8.ValidString(v) {
		return httpapi.BadRequest(field, "not valid UTF-8")
	}
	for _, r := range v {
		if unicode.IsControl(r) && r != '\n' && r != '\r' && r != '\t' {
			return httpapi.BadRequest(field, "contains a control character")
		}
	}
	return nil
}
