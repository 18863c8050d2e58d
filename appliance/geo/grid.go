package geo

import (
	"strconv"
	"strings"
)

// Reading UTM and UPS positions typed as text. The shapes are strict
// enough never to be mistaken for latitude and longitude: a UTM easting
// has six digits before any decimals (100000 to 900000 m), a UPS position
// starts with the zone letter A, B, Y or Z.

// parseUTMText reads "33V 674000 6580000", also "33 V 674000.5, 6580000",
// "33V 674000E 6580000N" and "33V 674000mE 6580000mN". ok is false when the
// text does not have that shape.
func parseUTMText(t string) (p Point, ok bool, err error) {
	j := 0
	for j < len(t) && isDigit(t[j]) {
		j++
	}
	if j == 0 || j > 2 {
		return Point{}, false, nil
	}
	zone, _ := strconv.Atoi(t[:j])
	i := skipSpace(t, j)
	if i >= len(t) || !isLetter(t[i]) || i+1 >= len(t) || !isSpace(t[i+1]) {
		return Point{}, false, nil
	}
	band := upper(t[i])
	e, n, ok := scanEastNorth(t, i+1, 6, 6, 1, 8)
	if !ok {
		return Point{}, false, nil
	}
	p, err = FromUTM(UTM{Zone: zone, Band: band, Easting: e, Northing: n})
	if err != nil {
		reason := err.Error()
		if band == 'N' || band == 'S' {
			reason += " (the letter after the zone number is the latitude band, not the hemisphere)"
		}
		return Point{}, true, parseErr(NotationUTM, "%s", reason)
	}
	return p, true, nil
}

// parseUPSText reads "Z 2426773 1530125" (zone letter, easting, northing),
// with the same optional decorations as UTM.
func parseUPSText(t string) (p Point, ok bool, err error) {
	if len(t) < 2 || !isSpace(t[1]) {
		return Point{}, false, nil
	}
	zone := upper(t[0])
	if zone != 'A' && zone != 'B' && zone != 'Y' && zone != 'Z' {
		return Point{}, false, nil
	}
	e, n, ok := scanEastNorth(t, 1, 6, 7, 6, 7)
	if !ok {
		return Point{}, false, nil
	}
	p, err = FromUPS(UPS{Zone: zone, Easting: e, Northing: n})
	if err != nil {
		return Point{}, true, parseErr(NotationUPS, "%v", err)
	}
	return p, true, nil
}

// scanEastNorth reads the rest of t from i as an easting and a northing,
// each with its number of digits before the decimal point in the given
// range, optionally followed by E / mE and N / mN, separated by spaces or a
// comma.
func scanEastNorth(t string, i, eMin, eMax, nMin, nMax int) (e, n float64, ok bool) {
	e, i, ok = scanGridNumber(t, skipSpace(t, i), eMin, eMax, "E")
	if !ok {
		return 0, 0, false
	}
	i = skipSpace(t, i)
	if i < len(t) && t[i] == ',' {
		i = skipSpace(t, i+1)
	}
	n, i, ok = scanGridNumber(t, i, nMin, nMax, "N")
	if !ok || skipSpace(t, i) != len(t) {
		return 0, 0, false
	}
	return e, n, true
}

// scanGridNumber reads digits (minInt to maxInt before the point, at most
// 9 after it) and an optional unit suffix (suffix or "m"+suffix, any case).
func scanGridNumber(t string, i, minInt, maxInt int, suffix string) (v float64, next int, ok bool) {
	start := i
	for i < len(t) && isDigit(t[i]) {
		i++
	}
	if n := i - start; n < minInt || n > maxInt {
		return 0, 0, false
	}
	if i < len(t) && t[i] == '.' {
		j := i + 1
		for j < len(t) && isDigit(t[j]) {
			j++
		}
		if j == i+1 || j-i-1 > 9 {
			return 0, 0, false
		}
		i = j
	}
	v, err := strconv.ParseFloat(t[start:i], 64)
	if err != nil {
		return 0, 0, false
	}
	// A unit suffix, attached or after one space: E, mE (N, mN).
	k := i
	if k < len(t) && isSpace(t[k]) {
		k++
	}
	for _, u := range []string{"m" + suffix, suffix} {
		if len(t)-k >= len(u) && strings.EqualFold(t[k:k+len(u)], u) &&
			(k+len(u) == len(t) || isSpace(t[k+len(u)]) || t[k+len(u)] == ',') {
			return v, k + len(u), true
		}
	}
	return v, i, true
}
