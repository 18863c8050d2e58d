package config

import (
	"fmt"
	"net/url"
	"time"
)

// Geo is the map side: the geo objects and emergencies the server keeps on
// the map (api.md §2.4, §2.10), the geocoder, the web console's offline
// basemap (console.md "Web console").
type Geo struct {
	GeocoderURL             string        // geocoderURL: a Nominatim-compatible service for street addresses ("" none)
	RepeatInterval          time.Duration // repeatInterval: re-broadcast period of geo objects posted with repeat
	EmergencyRepeatInterval time.Duration // emergencyRepeatInterval: re-broadcast period of active emergencies
	BasemapPath             string        // basemapPath: an MBTiles file served as the offline basemap (empty: an uploaded one)
}

func defaultGeo() Geo {
	return Geo{RepeatInterval: 60 * time.Second, EmergencyRepeatInterval: 3 * time.Second}
}

// Validate checks geocoderURL and the repeat intervals.
func (g Geo) Validate() error {
	if err := checkGeocoderURL(g.GeocoderURL); err != nil {
		return keyErr("geocoderURL", err.Error())
	}
	if g.RepeatInterval < time.Second || g.RepeatInterval > 24*time.Hour {
		return keyErr("repeatInterval", "must be between 1s and 24h")
	}
	if g.EmergencyRepeatInterval < time.Second || g.EmergencyRepeatInterval > time.Hour {
		return keyErr("emergencyRepeatInterval", "must be between 1s and 1h")
	}
	return nil
}

// checkGeocoderURL accepts "" (no geocoder) or an http(s) URL with a host
// and without credentials, query or fragment.
func checkGeocoderURL(s string) error {
	if s == "" {
		return nil
	}
	u, err := url.Parse(s)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return fmt.Errorf("%q is not an http:// or https:// address (leave it empty for no geocoder)", s)
	}
	if u.User != nil || u.RawQuery != "" || u.Fragment != "" {
		return fmt.Errorf("%q must be the service's base address, without credentials, query or fragment", u.Redacted())
	}
	return nil
}
