package geo

import (
	"errors"
	"fmt"
	"strings"
	"unicode/utf8"
)

// Notations lists the coordinate notations Parse accepts, with an example
// of each. Every *ParseError's text ends with it, so an API can answer a
// bad coordinate with the error text alone.
const Notations = `decimal degrees: 59.3293, 18.0686 or -33.8688 151.2093; ` +
	`degrees, minutes and seconds: 59°19'45.5"N 18°4'7"E or 59 19 45.5 N 18 04 07 E; ` +
	`degrees and decimal minutes: N59 19.758 E018 04.117; ` +
	`UTM (zone, latitude band letter, easting, northing): 33V 674000 6580000; ` +
	`UPS (zone letter, easting, northing): Z 2426773 1530125; ` +
	`MGRS: 33VXF7400080000 or 33V XF 74000 80000`

// MaxInputLen is the longest text (bytes) Parse reads.
const MaxInputLen = 200

// Notation names, as in ParseError.Notation.
const (
	NotationLatLon = "latitude/longitude"
	NotationUTM    = "UTM"
	NotationUPS    = "UPS"
	NotationMGRS   = "MGRS"
)

// ParseError says why Parse did not accept a text.
type ParseError struct {
	// Notation is the notation the text was read as (NotationLatLon,
	// NotationUTM, NotationUPS, NotationMGRS), or "" when it does not look
	// like a coordinate at all (an address, say).
	Notation string
	// Reason says what is wrong, naming the offending part.
	Reason string
	err    error // what Unwrap gives, such as ErrNoGeocoder
}

// Unwrap returns the cause the error wraps, if any.
func (e *ParseError) Unwrap() error { return e.err }

func (e *ParseError) Error() string {
	if e.Notation == "" {
		return e.Reason + "; accepted notations: " + Notations
	}
	return "not a valid " + e.Notation + " coordinate: " + e.Reason + "; accepted notations: " + Notations
}

func parseErr(notation, format string, args ...any) *ParseError {
	return &ParseError{Notation: notation, Reason: fmt.Sprintf(format, args...)}
}

// Parse reads a position typed in any of the notations listed in
// Notations. Latitude comes first unless hemisphere letters say otherwise;
// hemisphere letters may come before or after each value, signs only where
// there is no letter. One pair of enclosing brackets is ignored. The decimal mark is the point; a comma or semicolon
// separates latitude from longitude. Grid references are WGS-84; MGRS reads
// to the south-west corner of its cell (see FromMGRS). Parse never fails
// other than with a *ParseError.
func Parse(s string) (Point, error) {
	if len(s) > MaxInputLen {
		return Point{}, parseErr("", "the text is longer than %d bytes", MaxInputLen)
	}
	if !utf8.ValidString(s) {
		return Point{}, parseErr("", "the text is not valid UTF-8")
	}
	t := strings.TrimSpace(s)
	// Copied coordinates often come in brackets: "(59.3293, 18.0686)".
	if len(t) >= 2 && (t[0] == '(' && t[len(t)-1] == ')' || t[0] == '[' && t[len(t)-1] == ']') {
		t = strings.TrimSpace(t[1 : len(t)-1])
	}
	if t == "" {
		return Point{}, parseErr("", "the text is empty")
	}
	if p, ok, err := parseGrid(t); ok {
		return p, err
	}
	return parseLatLon(t)
}

// parseGrid reads the grid notations: MGRS, UTM and UPS, each optionally
// preceded by its name. ok is false when the text has none of their shapes.
func parseGrid(t string) (p Point, ok bool, err error) {
	word, rest := firstWord(t)
	switch strings.ToUpper(word) {
	case "MGRS":
		return readMGRS(rest, true)
	case "UTM":
		if p, ok, err := parseUTMText(rest); ok {
			return p, true, err
		}
		return Point{}, true, parseErr(NotationUTM, "expected a zone and latitude band, an easting and a northing, as in \"33V 674000 6580000\"")
	case "UPS":
		if p, ok, err := parseUPSText(rest); ok {
			return p, true, err
		}
		return Point{}, true, parseErr(NotationUPS, "expected a zone letter (A, B, Y or Z), an easting and a northing, as in \"Z 2426773 1530125\"")
	}
	if p, ok, err := readMGRS(t, false); ok {
		return p, ok, err
	}
	if p, ok, err := parseUTMText(t); ok {
		return p, ok, err
	}
	return parseUPSText(t)
}

// readMGRS reads an MGRS reference; ok is false when the text does not
// have the shape of one and was not named as one. A reference without
// digits (a whole 100 km square) must be in capitals unless named, so that
// a short word such as "Bay" is not taken for one.
func readMGRS(t string, named bool) (p Point, ok bool, err error) {
	r, err := parseMGRS(t)
	if !named && (errors.Is(err, errNotMGRS) ||
		err == nil && !hasDigitAfterLetters(t) && t != strings.ToUpper(t)) {
		return Point{}, false, nil
	}
	if err == nil {
		p, err = r.point()
	}
	if err != nil {
		return Point{}, true, parseErr(NotationMGRS, "%s", strings.TrimPrefix(err.Error(), errNotMGRS.Error()+": "))
	}
	return p, true, nil
}

func hasDigitAfterLetters(t string) bool {
	seen := false
	for i := 0; i < len(t); i++ {
		switch {
		case isLetter(t[i]):
			seen = true
		case seen && isDigit(t[i]):
			return true
		}
	}
	return false
}

// firstWord splits off a leading run of ASCII letters followed by a space
// or a colon; word is "" when there is none.
func firstWord(t string) (word, rest string) {
	i := 0
	for i < len(t) && isLetter(t[i]) {
		i++
	}
	if i == 0 || i == len(t) || !(isSpace(t[i]) || t[i] == ':') {
		return "", t
	}
	return t[:i], strings.TrimLeft(t[i:], " \t:")
}
