package geo

import (
	"errors"
	"fmt"
	"math"
	"strconv"
	"strings"

	"outpost/appliance/logx"
)

// Military Grid Reference System (NGA.STND.0037, "Universal Grids and Grid
// Reference Systems"): a grid zone designation (UTM zone number and
// latitude band, or the UPS zone letter), the letters of a 100 km square,
// then 0 to 5 digits of easting and as many of northing inside the square.
// The 100 km square letters are those of the WGS-84 ("AA") scheme.

// colSets are the UTM column letters, 100 km squares from easting
// 100 000 m, chosen by (zone-1) mod 3.
var colSets = [3]string{"ABCDEFGH", "JKLMNPQR", "STUVWXYZ"}

// rowLetters are the UTM row letters, 100 km squares from northing 0 in a
// 2 000 km cycle; odd zones start the cycle with A, even zones with F.
const rowLetters = "ABCDEFGHJKLMNPQRSTUV"

// upsSquares are the 100 km squares of one UPS zone: column letters from
// easting east0, row letters from northing north0. UPS columns skip D, E,
// M, N, V and W as well as I and O.
type upsSquares struct {
	cols, rows    string
	east0, north0 float64
}

var upsGrid = map[byte]upsSquares{
	'A': {cols: "JKLPQRSTUXYZ", rows: "ABCDEFGHJKLMNPQRSTUVWXYZ", east0: 800000, north0: 800000},
	'B': {cols: "ABCFGHJKLPQR", rows: "ABCDEFGHJKLMNPQRSTUVWXYZ", east0: 2000000, north0: 800000},
	'Y': {cols: "JKLPQRSTUXYZ", rows: "ABCDEFGHJKLMNP", east0: 800000, north0: 1300000},
	'Z': {cols: "ABCFGHJ", rows: "ABCDEFGHJKLMNP", east0: 2000000, north0: 1300000},
}

// ToMGRS returns the MGRS reference of the cell holding p, with digits (0
// to 5) digits each of easting and northing: 5 names a 1 m cell, 0 the
// 100 km square. Coordinates are truncated, not rounded (the cell's
// south-west corner is its name). The form is compact, "33VXF7400080000";
// polar references have no zone number, "ZAH0000000000".
func ToMGRS(p Point, digits int) (string, error) {
	if digits < 0 || digits > 5 {
		return "", fmt.Errorf("MGRS precision %d is outside 0 to 5 digits", digits)
	}
	if err := p.Check(); err != nil {
		return "", err
	}
	var b strings.Builder
	var e, n float64
	if p.Lat >= utmMinLat && p.Lat <= utmMaxLat {
		u, err := ToUTM(p)
		if err != nil {
			return "", err
		}
		e, n = u.Easting, u.Northing
		col := int(math.Floor(e/100000)) - 1
		set := colSets[(u.Zone-1)%3]
		if col < 0 || col >= len(set) { // not reached in the standard zones
			return "", fmt.Errorf("easting %s is outside the 100 km squares of zone %d", metres(e), u.Zone)
		}
		row := int(math.Floor(n/100000)) % 20
		if u.Zone%2 == 0 {
			row = (row + 5) % 20
		}
		b.WriteString(strconv.Itoa(u.Zone))
		b.WriteByte(u.Band)
		b.WriteByte(set[col])
		b.WriteByte(rowLetters[row])
	} else {
		north := p.Lat > 0
		e, n = upsForward(north, p.Lat, p.Lon)
		zone := upsZone(north, e)
		g := upsGrid[zone]
		col := int(math.Floor((e - g.east0) / 100000))
		row := int(math.Floor((n - g.north0) / 100000))
		if col < 0 || col >= len(g.cols) || row < 0 || row >= len(g.rows) { // not reached in the polar caps
			return "", fmt.Errorf("UPS position %s %s is outside the 100 km squares of zone %c", metres(e), metres(n), zone)
		}
		b.WriteByte(zone)
		b.WriteByte(g.cols[col])
		b.WriteByte(g.rows[row])
	}
	if digits > 0 {
		scale := int(math.Pow10(5 - digits))
		fmt.Fprintf(&b, "%0*d%0*d", digits, int(math.Floor(e))%100000/scale, digits, int(math.Floor(n))%100000/scale)
	}
	return b.String(), nil
}

// FromMGRS returns the south-west corner of the cell an MGRS reference
// names. Spaces between its parts are optional and letters may be lower
// case: "33VXF7400080000", "33V XF 74000 80000", "4QFJ1234", "ZAH".
func FromMGRS(s string) (Point, error) {
	r, err := parseMGRS(s)
	if err != nil {
		return Point{}, err
	}
	return r.point()
}

// mgrsRef is a parsed MGRS reference.
type mgrsRef struct {
	zone     int  // UTM zone, 0 for UPS
	band     byte // UTM latitude band, or UPS zone letter
	col, row byte // 100 km square letters
	e, n     float64
	digits   int // per coordinate, 0 to 5
}

var errNotMGRS = errors.New("not an MGRS reference")

// parseMGRS reads the syntax of an MGRS reference; errNotMGRS (wrapped)
// means the text does not have its shape at all.
func parseMGRS(s string) (mgrsRef, error) {
	var r mgrsRef
	i := skipSpace(s, 0)
	j := i
	for j < len(s) && isDigit(s[j]) {
		j++
	}
	if j-i > 2 {
		return r, fmt.Errorf("%w: expected a grid zone and two 100 km square letters", errNotMGRS)
	}
	zoneDigits := s[i:j]
	var letters [3]byte
	k := 0
	for i = j; k < 3; k++ {
		i = skipSpace(s, i)
		if i >= len(s) || !isLetter(s[i]) {
			return r, fmt.Errorf("%w: expected a grid zone and two 100 km square letters", errNotMGRS)
		}
		letters[k] = upper(s[i])
		i++
	}
	r.band, r.col, r.row = letters[0], letters[1], letters[2]
	if zoneDigits == "" && r.band != 'A' && r.band != 'B' && r.band != 'Y' && r.band != 'Z' {
		return r, fmt.Errorf("%w: expected a UTM zone number or a UPS zone letter (A, B, Y, Z)", errNotMGRS)
	}
	// The letters end a word: nothing follows, or digits.
	if k := skipSpace(s, i); i < len(s) && isLetter(s[i]) || k < len(s) && !isDigit(s[k]) {
		return r, fmt.Errorf("%w: expected digits after the 100 km square letters", errNotMGRS)
	}
	if zoneDigits != "" {
		r.zone, _ = strconv.Atoi(zoneDigits)
		if r.zone == 0 {
			return r, errors.New("UTM zone 0 is outside 1 to 60")
		}
	}
	var groups []string
	for i = skipSpace(s, i); i < len(s); i = skipSpace(s, i) {
		j = i
		for j < len(s) && isDigit(s[j]) {
			j++
		}
		if j == i || j < len(s) && !isSpace(s[j]) {
			return r, fmt.Errorf("unexpected %q after the 100 km square", logx.Cut(s[i:], 24))
		}
		groups = append(groups, s[i:j])
		i = j
	}
	var es, ns string
	switch len(groups) {
	case 0:
	case 1:
		g := groups[0]
		if len(g)%2 != 0 || len(g) > 10 {
			return r, fmt.Errorf("MGRS needs an even number of digits, 0 to 10, not %d", len(g))
		}
		es, ns = g[:len(g)/2], g[len(g)/2:]
	case 2:
		es, ns = groups[0], groups[1]
		if len(es) != len(ns) || len(es) > 5 {
			return r, fmt.Errorf("MGRS easting and northing need the same number of digits, 1 to 5, not %d and %d", len(es), len(ns))
		}
	default:
		return r, fmt.Errorf("MGRS has one easting and one northing, not %d numbers", len(groups))
	}
	r.digits = len(es)
	if r.digits > 0 {
		scale := math.Pow10(5 - r.digits)
		ev, _ := strconv.Atoi(es)
		nv, _ := strconv.Atoi(ns)
		r.e, r.n = float64(ev)*scale, float64(nv)*scale
	}
	return r, nil
}

// point converts the reference to the south-west corner of its cell. The
// latitude band (or polar area) must agree with the position to within the
// size of the cell plus 0.1°: more would mean a mistyped letter.
func (r mgrsRef) point() (Point, error) {
	cell := math.Pow10(5 - r.digits) // metres
	tol := 0.1 + cell/111000         // degrees
	e, n, err := r.grid()
	if err != nil {
		return Point{}, err
	}
	if r.zone == 0 {
		return fromUPS(UPS{Zone: r.band, Easting: e, Northing: n}, tol)
	}
	p := utmReverse(r.zone, r.band >= 'N', e, n)
	if err := checkBand(p.Lat, r.band, tol); err != nil {
		return Point{}, err
	}
	return p, nil
}

// grid returns the UTM (in r.zone) or UPS (zone 0) easting and northing of
// the reference's south-west corner.
func (r mgrsRef) grid() (e, n float64, err error) {
	if r.zone == 0 {
		g, ok := upsGrid[r.band]
		if !ok {
			return 0, 0, fmt.Errorf("%q is not a UPS zone letter (A, B south; Y, Z north); a UTM reference starts with its zone number", r.band)
		}
		ci, ri := strings.IndexByte(g.cols, r.col), strings.IndexByte(g.rows, r.row)
		if ci < 0 || ri < 0 {
			return 0, 0, fmt.Errorf("%c%c is not a 100 km square of UPS zone %c", r.col, r.row, r.band)
		}
		return g.east0 + float64(ci)*100000 + r.e, g.north0 + float64(ri)*100000 + r.n, nil
	}
	if err := checkZoneBand(r.zone, r.band); err != nil {
		return 0, 0, err
	}
	set := colSets[(r.zone-1)%3]
	ci := strings.IndexByte(set, r.col)
	if ci < 0 {
		return 0, 0, fmt.Errorf("100 km column letter %c is not used in zone %d (its letters are %s)", r.col, r.zone, set)
	}
	ri := strings.IndexByte(rowLetters, r.row)
	if ri < 0 {
		return 0, 0, fmt.Errorf("%c is not a 100 km row letter (A to V, without I and O)", r.row)
	}
	if r.zone%2 == 0 {
		ri = (ri + 15) % 20
	}
	// The row letter gives the northing modulo 2000 km; the band picks the
	// cycle: the first northing not below the band's lowest, less 100 km
	// for squares that reach across the band's southern edge. The lowest
	// northing of a band is on the central meridian north of the equator
	// and at the zone's edge south of it (parallels bow towards the pole).
	south, _ := bandRange(r.band)
	edge := centralMeridian(r.zone)
	if south < 0 {
		edge += 3
	}
	_, minN := utmForward(south, edge, r.zone)
	nmod := float64(ri)*100000 + r.n
	n = nmod + 2000000*math.Ceil((minN-100000-nmod)/2000000)
	return float64(ci+1)*100000 + r.e, n, nil
}

func isDigit(c byte) bool  { return c >= '0' && c <= '9' }
func isLetter(c byte) bool { return c >= 'A' && c <= 'Z' || c >= 'a' && c <= 'z' }
func isSpace(c byte) bool  { return c == ' ' || c == '\t' }
func upper(c byte) byte {
	if c >= 'a' && c <= 'z' {
		return c - 'a' + 'A'
	}
	return c
}

func skipSpace(s string, i int) int {
	for i < len(s) && isSpace(s[i]) {
		i++
	}
	return i
}
