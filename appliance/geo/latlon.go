package geo

import (
	"math"
	"strconv"
	"strings"
	"unicode/utf8"

	"outpost/appliance/logx"
)

// Reading latitude and longitude in decimal degrees, degrees and decimal
// minutes, or degrees, minutes and seconds.
//
// The text is cut into numbers (a sign may lead), unit marks (degrees,
// minutes, seconds), hemisphere letters and separators. It is then split
// into the latitude and the longitude: at the separator if there is one;
// else at the hemisphere letters (a letter begins its value or ends it, see
// llTok.lead); else where the unit marks show a new value begins; else by
// count (2, 4 or 6 numbers: half each).

type llKind int

const (
	llNum llKind = iota
	llUnit
	llHemi
	llSep
)

type llTok struct {
	kind llKind
	num  float64
	frac bool // the number has a decimal point
	sign byte // '+' or '-' before the number, or 0
	unit int  // 0 degrees, 1 minutes, 2 seconds (llUnit; on llNum: -1 none)
	hemi byte // 'N', 'S', 'E' or 'W'
	// lead: the hemisphere letter begins its value, else it ends it. It
	// begins it when it touches the next character but not the one before
	// ("E18"), ends it in the opposite case ("18E"), and otherwise follows
	// the text's style: letters lead when the text starts with one.
	lead         bool
	touchesLeft  bool
	touchesRight bool
	text         string // as written, for messages
}

// Unit marks: degrees, minutes (primes), seconds (double primes).
var unitMarks = map[rune]int{
	'°': 0, 'º': 0, '˚': 0,
	'\'': 1, '′': 1, '’': 1, '‘': 1, '´': 1, '`': 1,
	'"': 2, '″': 2, '”': 2, '“': 2,
}

var hemiWords = map[string]byte{"N": 'N', "S": 'S', "E": 'E', "W": 'W',
	"NORTH": 'N', "SOUTH": 'S', "EAST": 'E', "WEST": 'W'}

func parseLatLon(t string) (Point, error) {
	toks, err := llTokens(t)
	if err != nil {
		return Point{}, err
	}
	groups, err := llSplit(toks)
	if err != nil {
		return Point{}, err
	}
	var vals [2]float64
	var axes [2]byte // 'N' latitude, 'E' longitude, 0 unknown
	for g := range groups {
		vals[g], axes[g], err = llValue(groups[g])
		if err != nil {
			return Point{}, err
		}
	}
	switch {
	case axes[0] == 0 && axes[1] == 0:
		axes = [2]byte{'N', 'E'}
	case axes[0] == 0:
		axes[0] = 'N' + 'E' - axes[1]
	case axes[1] == 0:
		axes[1] = 'N' + 'E' - axes[0]
	case axes[0] == axes[1]:
		if axes[0] == 'N' {
			return Point{}, parseErr(NotationLatLon, "both values are latitudes (N or S)")
		}
		return Point{}, parseErr(NotationLatLon, "both values are longitudes (E or W)")
	}
	var p Point
	for g := range vals {
		if axes[g] == 'N' {
			p.Lat = vals[g]
		} else {
			p.Lon = vals[g]
		}
	}
	if math.Abs(p.Lat) > 90 {
		return Point{}, parseErr(NotationLatLon, "latitude %s is outside -90 to 90", fmtDeg(p.Lat))
	}
	if math.Abs(p.Lon) > 180 {
		return Point{}, parseErr(NotationLatLon, "longitude %s is outside -180 to 180", fmtDeg(p.Lon))
	}
	return p, nil
}

func fmtDeg(v float64) string { return strconv.FormatFloat(v, 'g', -1, 64) }

// llTokens cuts the text into tokens. A word other than a hemisphere or
// "d"/"deg" makes the text not a coordinate (Notation "").
func llTokens(t string) ([]llTok, error) {
	var toks []llTok
	for i := 0; i < len(t); {
		r, size := utf8.DecodeRuneInString(t[i:])
		switch {
		case r == ' ' || r == '\t' || r == '\u00a0':
			i += size
		case r == ',' || r == ';':
			toks = append(toks, llTok{kind: llSep, text: string(r)})
			i += size
		case r < utf8.RuneSelf && (isDigit(byte(r)) || r == '.') || r == '-' || r == '+' || r == '−':
			tok, n, err := llNumber(t[i:])
			if err != nil {
				return nil, err
			}
			toks = append(toks, tok)
			i += n
		case r < utf8.RuneSelf && isLetter(byte(r)):
			j := i
			for j < len(t) && isLetter(t[j]) {
				j++
			}
			w := strings.ToUpper(t[i:j])
			if h, ok := hemiWords[w]; ok {
				tk := llTok{kind: llHemi, hemi: h, text: t[i:j]}
				tk.touchesLeft, tk.touchesRight = touching(t, i, j)
				toks = append(toks, tk)
			} else if w == "D" || w == "DEG" {
				toks = append(toks, llTok{kind: llUnit, unit: 0, text: t[i:j]})
			} else {
				return nil, parseErr("", "%q is not a coordinate", logx.Cut(t, 24))
			}
			i = j
		default:
			u, ok := unitMarks[r]
			if !ok {
				return nil, parseErr(NotationLatLon, "unexpected %q", string(r))
			}
			// Two primes make seconds.
			if u == 1 && len(toks) > 0 && toks[len(toks)-1].kind == llUnit && toks[len(toks)-1].unit == 1 &&
				toks[len(toks)-1].text != "" && i > 0 && !isSpace(t[i-1]) {
				toks[len(toks)-1].unit = 2
				toks[len(toks)-1].text += string(r)
			} else {
				toks = append(toks, llTok{kind: llUnit, unit: u, text: string(r)})
			}
			i += size
		}
	}
	style := len(toks) > 0 && toks[0].kind == llHemi
	for k := range toks {
		if tk := &toks[k]; tk.kind == llHemi {
			tk.lead = style
			if tk.touchesLeft != tk.touchesRight {
				tk.lead = tk.touchesRight
			}
		}
	}
	return toks, nil
}

// touching reports whether the characters just before and after t[i:j]
// belong to the same value (anything but space and separators).
func touching(t string, i, j int) (left, right bool) {
	touches := func(r rune) bool { return r != ' ' && r != '\t' && r != '\u00a0' && r != ',' && r != ';' }
	if i > 0 {
		r, _ := utf8.DecodeLastRuneInString(t[:i])
		left = touches(r)
	}
	if j < len(t) {
		r, _ := utf8.DecodeRuneInString(t[j:])
		right = touches(r)
	}
	return left, right
}

// llNumber reads an optionally signed decimal number at the start of s.
func llNumber(s string) (llTok, int, error) {
	tok := llTok{kind: llNum, unit: -1}
	i := 0
	switch {
	case strings.HasPrefix(s, "−"): // U+2212 minus sign
		tok.sign, i = '-', len("−")
	case s[0] == '-' || s[0] == '+':
		tok.sign, i = s[0], 1
	}
	start, dots, digits := i, 0, 0
	for i < len(s) && (isDigit(s[i]) || s[i] == '.') {
		if s[i] == '.' {
			dots++
		} else {
			digits++
		}
		i++
	}
	text := s[:i]
	switch {
	case digits == 0:
		return tok, 0, parseErr(NotationLatLon, "%q is not a number", logx.Cut(text, 24))
	case dots > 1:
		return tok, 0, parseErr(NotationLatLon, "%q has more than one decimal point (the decimal mark is the point; a comma separates latitude and longitude)", logx.Cut(text, 24))
	case i-start > 40:
		return tok, 0, parseErr(NotationLatLon, "the number %q is too long", logx.Cut(text, 24))
	}
	v, err := strconv.ParseFloat(s[start:i], 64)
	if err != nil {
		return tok, 0, parseErr(NotationLatLon, "%q is not a number", logx.Cut(text, 24))
	}
	tok.num, tok.frac, tok.text = v, dots > 0, text
	return tok, i, nil
}

// llSplit splits the tokens into the two values.
func llSplit(toks []llTok) ([2][]llTok, error) {
	var out [2][]llTok
	// Units attach to the number before them.
	var items []llTok
	for _, tk := range toks {
		if tk.kind == llUnit {
			if len(items) == 0 || items[len(items)-1].kind != llNum || items[len(items)-1].unit >= 0 {
				return out, parseErr(NotationLatLon, "%q does not follow a number", tk.text)
			}
			items[len(items)-1].unit = tk.unit
			continue
		}
		items = append(items, tk)
	}
	var groups [][]llTok
	seps := 0
	for _, it := range items {
		if it.kind == llSep {
			seps++
		}
	}
	switch {
	case seps > 1:
		return out, parseErr(NotationLatLon, "more than one comma or semicolon (the decimal mark is the point; one comma separates latitude and longitude)")
	case seps == 1:
		for i, it := range items {
			if it.kind == llSep {
				groups = [][]llTok{items[:i], items[i+1:]}
			}
		}
	default:
		groups = splitAtHemispheres(items)
	}
	if len(groups) == 1 {
		groups = splitByUnits(groups[0])
	}
	if len(groups) == 1 {
		groups = splitByCount(groups[0])
	}
	if len(groups) != 2 {
		if countNums(items) < 2 {
			return out, parseErr(NotationLatLon, "a latitude and a longitude are needed")
		}
		return out, parseErr(NotationLatLon, "cannot tell where the latitude ends and the longitude begins: separate them with a comma, or give hemisphere letters")
	}
	for g := range groups {
		if countNums(groups[g]) == 0 {
			return out, parseErr(NotationLatLon, "a latitude and a longitude are needed, each with a number")
		}
	}
	out[0], out[1] = groups[0], groups[1]
	return out, nil
}

func countNums(items []llTok) int {
	n := 0
	for _, it := range items {
		if it.kind == llNum {
			n++
		}
	}
	return n
}

// splitAtHemispheres cuts before each hemisphere letter that begins its
// value and after each that ends one; empty pieces are dropped.
func splitAtHemispheres(items []llTok) [][]llTok {
	var groups [][]llTok
	cur := []llTok{}
	for _, it := range items {
		if it.kind == llHemi && it.lead && len(cur) > 0 {
			groups = append(groups, cur)
			cur = []llTok{}
		}
		cur = append(cur, it)
		if it.kind == llHemi && !it.lead {
			groups = append(groups, cur)
			cur = []llTok{}
		}
	}
	if len(cur) > 0 {
		groups = append(groups, cur)
	}
	return groups
}

// splitByUnits cuts where a number starts a new value by its unit mark: a
// degrees mark after any number, or any number after seconds, or a unit no
// finer than the one before it.
func splitByUnits(items []llTok) [][]llTok {
	marked := false
	for _, it := range items {
		marked = marked || it.kind == llNum && it.unit >= 0
	}
	if !marked {
		return [][]llTok{items}
	}
	var groups [][]llTok
	cur, last := []llTok{}, -1 // last: rank of the last number in cur
	for _, it := range items {
		if it.kind == llNum {
			rank := it.unit
			if rank < 0 {
				rank = last + 1
			}
			if last >= 0 && (rank <= last || rank > 2) {
				groups = append(groups, cur)
				cur, last = []llTok{}, -1
				if it.unit < 0 {
					rank = 0
				}
			}
			last = rank
		}
		cur = append(cur, it)
	}
	return append(groups, cur)
}

// splitByCount halves 2, 4 or 6 numbers with no other clue.
func splitByCount(items []llTok) [][]llTok {
	n := countNums(items)
	if n != 2 && n != 4 && n != 6 {
		return [][]llTok{items}
	}
	seen := 0
	for i, it := range items {
		if it.kind == llNum {
			seen++
			if seen == n/2 {
				// A hemisphere letter that ends a value stays with it.
				j := i + 1
				if j < len(items) && items[j].kind == llHemi && !items[j].lead {
					j++
				}
				return [][]llTok{items[:j], items[j:]}
			}
		}
	}
	return [][]llTok{items}
}

// llValue reads one value: an optional hemisphere letter before or after,
// then degrees, minutes and seconds. axis is 'N' for N/S, 'E' for E/W, 0
// when no letter says.
func llValue(items []llTok) (v float64, axis byte, err error) {
	var hemi byte
	var nums []llTok
	for i, it := range items {
		switch it.kind {
		case llHemi:
			if hemi != 0 || i != 0 && i != len(items)-1 {
				return 0, 0, parseErr(NotationLatLon, "misplaced hemisphere letter %q", it.text)
			}
			hemi = it.hemi
		case llNum:
			nums = append(nums, it)
		}
	}
	if len(nums) > 3 {
		return 0, 0, parseErr(NotationLatLon, "a value has more than degrees, minutes and seconds")
	}
	names := [3]string{"degrees", "minutes", "seconds"}
	for k, n := range nums {
		if n.unit >= 0 && n.unit != k {
			return 0, 0, parseErr(NotationLatLon, "%s is marked as %s but stands where %s belong", n.text, names[n.unit], names[k])
		}
		if k > 0 && n.sign != 0 {
			return 0, 0, parseErr(NotationLatLon, "only the degrees may have a sign, not %s", n.text)
		}
		if k > 0 && n.num >= 60 {
			return 0, 0, parseErr(NotationLatLon, "%s %s must be less than 60", names[k], n.text)
		}
		if k < len(nums)-1 && n.frac {
			return 0, 0, parseErr(NotationLatLon, "%s %s must be whole when %s follow", names[k], n.text, names[k+1])
		}
	}
	if nums[0].sign != 0 && hemi != 0 {
		return 0, 0, parseErr(NotationLatLon, "%s has both a sign and a hemisphere letter", nums[0].text)
	}
	scale := 1.0
	for _, n := range nums {
		v += n.num / scale
		scale *= 60
	}
	if nums[0].sign == '-' || hemi == 'S' || hemi == 'W' {
		v = -v
	}
	switch hemi {
	case 'N', 'S':
		axis = 'N'
	case 'E', 'W':
		axis = 'E'
	}
	return v, axis, nil
}
