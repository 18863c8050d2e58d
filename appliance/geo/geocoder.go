package geo

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"outpost/appliance/logx"
)

// Geocoder is a client for a Nominatim-compatible geocoding service,
// typically one on the local network (a mesh has no internet): it asks
// GET <URL>/search?q=<address>&format=json&limit=1 and takes the first
// place's "lat" and "lon" (strings, as Nominatim sends them, or numbers).
type Geocoder struct {
	// URL is the service's base address, such as "http://10.0.0.5:8080"
	// or "http://maps.local/nominatim"; "/search" is appended unless the
	// path already ends with it.
	URL string
	// HTTPClient makes the requests; nil means a client with the
	// GeocodeTimeout.
	HTTPClient *http.Client
}

const (
	// GeocodeTimeout bounds a lookup when the context has no earlier
	// deadline.
	GeocodeTimeout = 5 * time.Second
	// MaxGeocodeResponse is the largest answer read (bytes); a larger one
	// is an error.
	MaxGeocodeResponse = 1 << 20
	// MaxAddressLen is the longest address looked up (bytes).
	MaxAddressLen = 256
)

var (
	// ErrNotFound: the geocoder knows no place for the address.
	ErrNotFound = errors.New("no place matches the address")
	// ErrGeocoder: the geocoder could not be asked or its answer was
	// unusable (unreachable, timeout, HTTP status other than 200, bad or
	// oversized JSON, a position off the earth).
	ErrGeocoder = errors.New("the geocoder failed")
	// ErrNoGeocoder: an address needs a geocoder and none is configured.
	ErrNoGeocoder = errors.New("no geocoder is configured")
)

var defaultGeocodeClient = &http.Client{Timeout: GeocodeTimeout}

// Lookup returns the position of the first place the geocoder finds for
// the address. Errors wrap ErrNotFound (no place: the address's fault),
// ErrGeocoder (the service's fault) or ErrNoGeocoder (g is nil or has no
// URL); an empty or over-long address is refused without asking.
func (g *Geocoder) Lookup(ctx context.Context, address string) (Point, error) {
	address = strings.TrimSpace(address)
	switch {
	case address == "":
		return Point{}, errors.New("the address is empty")
	case len(address) > MaxAddressLen:
		return Point{}, fmt.Errorf("the address is longer than %d bytes", MaxAddressLen)
	case !utf8.ValidString(address):
		return Point{}, errors.New("the address is not valid UTF-8")
	case g == nil || g.URL == "":
		return Point{}, ErrNoGeocoder
	}
	u, err := url.Parse(g.URL)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return Point{}, fmt.Errorf("%w: the geocoder URL %q is not an http(s) address", ErrGeocoder, g.URL)
	}
	if !strings.HasSuffix(u.Path, "/search") {
		u.Path = strings.TrimSuffix(u.Path, "/") + "/search"
	}
	q := u.Query()
	q.Set("q", address)
	q.Set("format", "json")
	q.Set("limit", "1")
	u.RawQuery = q.Encode()

	if _, ok := ctx.Deadline(); !ok {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, GeocodeTimeout)
		defer cancel()
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u.String(), nil)
	if err != nil {
		return Point{}, fmt.Errorf("%w: %v", ErrGeocoder, err)
	}
	req.Header.Set("Accept", "application/json")
	req.Header.Set("User-Agent", "Outpost TAK server geocoder")
	client := g.HTTPClient
	if client == nil {
		client = defaultGeocodeClient
	}
	resp, err := client.Do(req)
	if err != nil {
		return Point{}, fmt.Errorf("%w: %w", ErrGeocoder, err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		io.Copy(io.Discard, io.LimitReader(resp.Body, 64<<10)) // let the connection be reused
		return Point{}, fmt.Errorf("%w: HTTP status %d", ErrGeocoder, resp.StatusCode)
	}
	body, err := io.ReadAll(io.LimitReader(resp.Body, MaxGeocodeResponse+1))
	if err != nil {
		return Point{}, fmt.Errorf("%w: reading the answer: %w", ErrGeocoder, err)
	}
	if len(body) > MaxGeocodeResponse {
		return Point{}, fmt.Errorf("%w: the answer is larger than %d bytes", ErrGeocoder, MaxGeocodeResponse)
	}
	var places []struct {
		Lat json.RawMessage `json:"lat"`
		Lon json.RawMessage `json:"lon"`
	}
	if err := json.Unmarshal(body, &places); err != nil {
		return Point{}, fmt.Errorf("%w: the answer is not a JSON array of places: %v", ErrGeocoder, err)
	}
	if len(places) == 0 {
		return Point{}, fmt.Errorf("%w: %q", ErrNotFound, logx.Cut(address, 24))
	}
	lat, err1 := jsonDegrees(places[0].Lat)
	lon, err2 := jsonDegrees(places[0].Lon)
	if err := errors.Join(err1, err2); err != nil {
		return Point{}, fmt.Errorf("%w: the first place has no usable lat/lon: %v", ErrGeocoder, err)
	}
	p := Point{Lat: lat, Lon: lon}
	if err := p.Check(); err != nil {
		return Point{}, fmt.Errorf("%w: the first place is off the earth: %v", ErrGeocoder, err)
	}
	return p, nil
}

// jsonDegrees reads a coordinate sent as a JSON string ("59.3293") or
// number.
func jsonDegrees(raw json.RawMessage) (float64, error) {
	var s string
	if err := json.Unmarshal(raw, &s); err == nil {
		return strconv.ParseFloat(strings.TrimSpace(s), 64)
	}
	var v float64
	if err := json.Unmarshal(raw, &v); err != nil {
		return 0, fmt.Errorf("%s is neither a number nor a string", logx.Cut(string(raw), 24))
	}
	return v, nil
}

// Resolve reads s as a coordinate (Parse) and, only when s does not look
// like one (an address), asks the geocoder g. A malformed coordinate gets
// Parse's error, not a lookup. With no geocoder (g nil or without URL) an
// address gets a *ParseError that wraps ErrNoGeocoder and lists the
// accepted notations.
func Resolve(ctx context.Context, s string, g *Geocoder) (Point, error) {
	p, err := Parse(s)
	if err == nil {
		return p, nil
	}
	var pe *ParseError
	if !errors.As(err, &pe) || pe.Notation != "" || strings.TrimSpace(s) == "" || !utf8.ValidString(s) {
		return Point{}, err
	}
	if len(s) > MaxAddressLen {
		return Point{}, parseErr("", "the text is longer than %d bytes", MaxAddressLen)
	}
	if g == nil || g.URL == "" {
		return Point{}, &ParseError{
			Reason: fmt.Sprintf("%q is not a coordinate, and no geocoder is configured to look up addresses", logx.Cut(strings.TrimSpace(s), 24)),
			err:    ErrNoGeocoder,
		}
	}
	return g.Lookup(ctx, s)
}
