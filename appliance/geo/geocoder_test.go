package geo

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"
)

// nominatim is a Nominatim-shaped /search server: it answers the queries
// in places (lower-cased) with the JSON given, [] for others, and counts
// the requests.
type nominatim struct {
	srv      *httptest.Server
	requests atomic.Int32
}

func newNominatim(t *testing.T, prefix string, places map[string]string) *nominatim {
	t.Helper()
	n := &nominatim{}
	n.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		n.requests.Add(1)
		if r.URL.Path != prefix+"/search" {
			http.NotFound(w, r)
			return
		}
		q := r.URL.Query()
		if q.Get("format") != "json" || q.Get("limit") != "1" || r.Header.Get("User-Agent") == "" {
			http.Error(w, "bad request", http.StatusBadRequest)
			return
		}
		body, ok := places[strings.ToLower(q.Get("q"))]
		switch {
		case body == "slow":
			<-r.Context().Done() // never answers: the client must give up
			return
		case body == "status 500":
			http.Error(w, "boom", http.StatusInternalServerError)
			return
		case body == "huge":
			w.Header().Set("Content-Type", "application/json")
			w.Write([]byte(`[{"lat":"1","lon":"2","display_name":"`))
			w.Write([]byte(strings.Repeat("x", MaxGeocodeResponse)))
			w.Write([]byte(`"}]`))
			return
		case !ok:
			body = "[]"
		}
		w.Header().Set("Content-Type", "application/json")
		w.Write([]byte(body))
	}))
	t.Cleanup(n.srv.Close)
	return n
}

var stockholmJSON = `[{"place_id":123,"licence":"Data © OpenStreetMap contributors","osm_type":"relation",` +
	`"lat":"59.3251172","lon":"18.0710935","display_name":"Stockholm, Sverige","class":"boundary",` +
	`"type":"administrative","importance":0.82}]`

func TestGeocoderLookup(t *testing.T) {
	n := newNominatim(t, "", map[string]string{
		"stockholm":             stockholmJSON,
		"numbers":               `[{"lat":-33.8688,"lon":151.2093}]`,
		"drottninggatan 1, ö":   `[{"lat":"59.33","lon":"18.06"}]`,
		"error object":          `{"error":"Unable to geocode"}`,
		"not json":              `<html>maintenance</html>`,
		"off the earth":         `[{"lat":"95","lon":"18"}]`,
		"no coordinates":        `[{"display_name":"somewhere"}]`,
		"bad number":            `[{"lat":"north","lon":"18"}]`,
		"slow":                  "slow",
		"fails":                 "status 500",
		"huge":                  "huge",
		"second place is later": `[{"lat":"1","lon":"2"},{"lat":"3","lon":"4"}]`,
	})
	g := &Geocoder{URL: n.srv.URL}
	ctx := context.Background()

	good := map[string]Point{
		"Stockholm":             {59.3251172, 18.0710935},
		"  stockholm  ":         {59.3251172, 18.0710935},
		"numbers":               {-33.8688, 151.2093},
		"Drottninggatan 1, Ö":   {59.33, 18.06}, // escaped in the query
		"second place is later": {1, 2},
	}
	for addr, want := range good {
		if p, err := g.Lookup(ctx, addr); err != nil || p != want {
			t.Errorf("Lookup(%q) = %v, %v; want %v", addr, p, err, want)
		}
	}

	bad := []struct {
		addr string
		is   error
		want string
	}{
		{"Atlantis", ErrNotFound, `"Atlantis"`},
		{"error object", ErrGeocoder, "not a JSON array"},
		{"not json", ErrGeocoder, "not a JSON array"},
		{"off the earth", ErrGeocoder, "latitude 95"},
		{"no coordinates", ErrGeocoder, "no usable lat/lon"},
		{"bad number", ErrGeocoder, "no usable lat/lon"},
		{"fails", ErrGeocoder, "HTTP status 500"},
		{"huge", ErrGeocoder, "larger than"},
	}
	for _, b := range bad {
		p, err := g.Lookup(ctx, b.addr)
		if !errors.Is(err, b.is) || !strings.Contains(err.Error(), b.want) {
			t.Errorf("Lookup(%q) = %v, %v; want %v with %q", b.addr, p, err, b.is, b.want)
		}
	}

	// A service that does not answer is given up on at the context's
	// deadline, or at the client's timeout.
	short, cancel := context.WithTimeout(ctx, 100*time.Millisecond)
	defer cancel()
	if _, err := g.Lookup(short, "slow"); !errors.Is(err, ErrGeocoder) || !errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("slow service: %v", err)
	}
	impatient := &Geocoder{URL: n.srv.URL, HTTPClient: &http.Client{Timeout: 100 * time.Millisecond}}
	if _, err := impatient.Lookup(ctx, "slow"); !errors.Is(err, ErrGeocoder) || !strings.Contains(err.Error(), "Timeout") {
		t.Errorf("slow service, client timeout: %v", err)
	}

	// Refused without asking.
	before := n.requests.Load()
	for addr, want := range map[string]string{"": "empty", "   ": "empty",
		strings.Repeat("a", MaxAddressLen+1): "longer than", "\xff\xfe": "UTF-8"} {
		if _, err := g.Lookup(ctx, addr); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("Lookup(%.20q): %v, want %q", addr, err, want)
		}
	}
	if got := n.requests.Load(); got != before {
		t.Errorf("%d requests for refused addresses", got-before)
	}
}

func TestGeocoderURLs(t *testing.T) {
	n := newNominatim(t, "/nominatim", map[string]string{"stockholm": stockholmJSON})
	for _, u := range []string{n.srv.URL + "/nominatim", n.srv.URL + "/nominatim/", n.srv.URL + "/nominatim/search"} {
		g := &Geocoder{URL: u}
		if p, err := g.Lookup(context.Background(), "Stockholm"); err != nil || p.Lat != 59.3251172 {
			t.Errorf("URL %q: %v, %v", u, p, err)
		}
	}
	for _, u := range []string{"ftp://example.org", "not a url", "http://", "://x"} {
		g := &Geocoder{URL: u}
		if _, err := g.Lookup(context.Background(), "Stockholm"); !errors.Is(err, ErrGeocoder) {
			t.Errorf("URL %q: %v, want ErrGeocoder", u, err)
		}
	}
	var nilG *Geocoder
	for _, g := range []*Geocoder{nilG, {}} {
		if _, err := g.Lookup(context.Background(), "Stockholm"); !errors.Is(err, ErrNoGeocoder) {
			t.Errorf("%+v: %v, want ErrNoGeocoder", g, err)
		}
	}
	// A service that is down.
	down := httptest.NewServer(http.NotFoundHandler())
	addr := down.URL
	down.Close()
	if _, err := (&Geocoder{URL: addr}).Lookup(context.Background(), "Stockholm"); !errors.Is(err, ErrGeocoder) {
		t.Errorf("closed server: %v", err)
	}
}

func TestResolve(t *testing.T) {
	n := newNominatim(t, "", map[string]string{"stockholm": stockholmJSON})
	g := &Geocoder{URL: n.srv.URL}
	ctx := context.Background()

	// Coordinates never reach the geocoder, malformed ones neither.
	for _, s := range []string{"59.3293, 18.0686", "33VXF7400080000", "33V 674000 6580000"} {
		if _, err := Resolve(ctx, s, g); err != nil {
			t.Errorf("Resolve(%q): %v", s, err)
		}
	}
	for s, want := range map[string]string{"91, 18": "latitude 91", "33VXF 74000 8000": "MGRS",
		"59 75 N 18 E": "minutes 75", "": "empty", "\xff": "UTF-8",
		strings.Repeat("x", MaxAddressLen+1): "longer than 256 bytes"} {
		var pe *ParseError
		if _, err := Resolve(ctx, s, g); !errors.As(err, &pe) || !strings.Contains(err.Error(), want) {
			t.Errorf("Resolve(%.20q): %v, want a *ParseError with %q", s, err, want)
		}
	}
	if got := n.requests.Load(); got != 0 {
		t.Fatalf("%d geocoder requests for coordinates", got)
	}

	// Addresses do.
	if p, err := Resolve(ctx, "Stockholm", g); err != nil || p != (Point{59.3251172, 18.0710935}) {
		t.Errorf("Resolve(Stockholm) = %v, %v", p, err)
	}
	if _, err := Resolve(ctx, "Atlantis", g); !errors.Is(err, ErrNotFound) {
		t.Errorf("Resolve(Atlantis): %v, want ErrNotFound", err)
	}
	if got := n.requests.Load(); got != 2 {
		t.Errorf("%d geocoder requests, want 2", got)
	}

	// Without a geocoder an address is refused, saying what is accepted.
	for _, none := range []*Geocoder{nil, {}} {
		_, err := Resolve(ctx, "Stockholm", none)
		var pe *ParseError
		if !errors.Is(err, ErrNoGeocoder) || !errors.As(err, &pe) ||
			!strings.Contains(err.Error(), `"Stockholm" is not a coordinate, and no geocoder is configured`) ||
			!strings.HasSuffix(err.Error(), Notations) {
			t.Errorf("no geocoder: %v", err)
		}
	}
}
