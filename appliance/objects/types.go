package objects

// The words of the API and their CoT codes: geo object types (api.md
// §2.5), attitudes (§2.4), how values (§2.6) and emergency types (§2.10).
// Words are matched without regard to letter case; answers use the
// contract's spelling.

import (
	"fmt"
	"strings"

	"outpost/appliance/logx"
)

// geoTypes is api.md §2.5 in the contract's order. The '.' after "a-" is
// the attitude letter's place.
var geoTypes = []struct{ name, code string }{
	{"Sniper", "a-.-G-U-C-I-d"},
	{"Medic", "a-.-G-U-i-m-etf"},
	{"Recon", "a-.-G-U-C-R"},
	{"LMG", "a-.-G-E-W-R"},
	{"Grenadier", "a-.-G-E-W-Z"},
	{"anti Tank", "a-.-G-U-C-A-A"},
	{"AA", "a-.-G-U-C-D"},
	{"Engineer", "a-.-G-U-C-E"},
	{"Mortar", "a-.-G-E-W-O"},
	{"Vehicle", "a-.-G-E-V-C"},
	{"Ambulance", "a-.-G-E-V-m"},
	{"Hospital", "a-.-G-I-X-H"},
	{"Police Station", "a-.-G-I-i-l"},
	{"Emergency Station", "a-.-G-I-i-e"},
	{"SAR", "a-.-A-M-F-Q-H"},
	{"Medevac", "a-.-G-U-C-V-R-E"},
	{"Incident", "a-.-X-i-o"},
	{"fire", "a-.-X-i-f"},
	{"earthquake", "a-.-X-i-g-e"},
	{"avalanche", "a-.-X-i-g-a"},
	{"vehicle accident", "a-.-X-i-t-v-a"},
	{"Ground", "a-.-G"},
}

var (
	geoCodeByName = map[string]string{} // lower-case name -> code
	geoNameByCode = map[string]string{} // code ("a-.-...") -> name
)

func init() {
	for _, t := range geoTypes {
		geoCodeByName[strings.ToLower(t.name)] = t.code
		geoNameByCode[t.code] = t.name
	}
}

// GeoTypeNames lists the names of api.md §2.5.
func GeoTypeNames() []string {
	out := make([]string, len(geoTypes))
	for i, t := range geoTypes {
		out[i] = t.name
	}
	return out
}

// maxTypeLen is the longest CoT type accepted from the API.
const maxTypeLen = 100

// GeoCoTType returns the CoT type of a geo object: geoObject is a name of
// api.md §2.5 (any letter case) or an atom type string ("a-f-G-U-C"), and
// the attitude letter replaces its second atom. The error says what is
// wrong with geoObject.
func GeoCoTType(geoObject string, attitude byte) (string, error) {
	code, ok := geoCodeByName[strings.ToLower(strings.TrimSpace(geoObject))]
	if !ok {
		if err := checkAtomType(geoObject); err != nil {
			return "", fmt.Errorf("%w; the names are %s", err, strings.Join(GeoTypeNames(), ", "))
		}
		code = geoObject
	}
	return code[:2] + string(attitude) + code[3:], nil
}

// checkAtomType accepts a CoT type of the atoms family: "a-", one letter
// (or '.') for the attitude, then atoms of letters and digits separated by
// '-' ("a-h-G-U-C-I").
func checkAtomType(s string) error {
	if len(s) > maxTypeLen {
		return fmt.Errorf("%q is not a geo object type: longer than %d bytes", logx.Cut(s, 60), maxTypeLen)
	}
	bad := fmt.Errorf("%q is neither a geo object name nor a CoT type like a-f-G-U-C", logx.Cut(s, 60))
	if len(s) < 3 || !strings.HasPrefix(s, "a-") {
		return bad
	}
	atoms := strings.Split(s[2:], "-")
	if len(atoms[0]) != 1 || !(atoms[0][0] == '.' || isAlnum(atoms[0][0])) {
		return bad
	}
	for _, a := range atoms[1:] {
		if a == "" {
			return bad
		}
		for i := 0; i < len(a); i++ {
			if !isAlnum(a[i]) && a[i] != '_' {
				return bad
			}
		}
	}
	return nil
}

func isAlnum(c byte) bool {
	return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9'
}

// GeoTypeName is the api.md §2.5 name of a CoT type (whatever its
// attitude), or "" when it has none.
func GeoTypeName(cotType string) string {
	if len(cotType) < 3 || !strings.HasPrefix(cotType, "a-") {
		return ""
	}
	return geoNameByCode[cotType[:2]+"."+cotType[3:]]
}

// Attitudes are the words of api.md §2.4 and their letters.
var attitudes = map[string]byte{"friendly": 'f', "friend": 'f', "hostile": 'h', "neutral": 'n', "unknown": 'u'}

// AttitudeWords lists the accepted attitude words.
const AttitudeWords = "friendly, friend, hostile, neutral or unknown"

// AttitudeLetter is the CoT letter of an attitude word (any letter case).
func AttitudeLetter(word string) (byte, bool) {
	l, ok := attitudes[strings.ToLower(strings.TrimSpace(word))]
	return l, ok
}

// AttitudeWord names the affiliation letter of an a- type (MIL-STD-2525
// affiliations; the API's four words for f, h, n and u).
func AttitudeWord(letter byte) string {
	switch letter {
	case 'f':
		return "friendly"
	case 'h':
		return "hostile"
	case 'n':
		return "neutral"
	case 'u':
		return "unknown"
	case 'a':
		return "assumed friend"
	case 's':
		return "suspect"
	case 'p':
		return "pending"
	case 'j':
		return "joker"
	case 'k':
		return "faker"
	case 'o':
		return "none"
	}
	return "unknown"
}

// hows maps the how values of api.md §2.6 (lower case) to CoT.
var hows = map[string]string{
	"gps": "m-g", "human": "h-e", "retyped": "h-t", "machine": "m", "mensurated": "m-i",
	"estimated": "h-e", "noncot": "h-g-i-g-o", "gigo": "h-g-i-g-o",
}

// HowWords lists the accepted how values.
const HowWords = "gps, human, retyped, machine, mensurated, estimated, nonCoT or gigo"

// HowCode is the CoT how of an api.md §2.6 value (any letter case).
func HowCode(v string) (string, bool) {
	c, ok := hows[strings.ToLower(strings.TrimSpace(v))]
	return c, ok
}

// emergencyTypes is api.md §2.10.
var emergencyTypes = []struct{ words, code string }{
	{"911 Alert", "b-a-o-tbl"},
	{"Ring The Bell", "b-a-o-pan"},
	{"Geo-fence Breached", "b-a-g"},
	{"In Contact", "b-a-o-opn"},
}

// EmergencyTypeWords lists the emergency types.
const EmergencyTypeWords = `"911 Alert", "Ring The Bell", "Geo-fence Breached" or "In Contact"`

// EmergencyType returns the contract's spelling and the CoT type of an
// emergency type (any letter case).
func EmergencyType(words string) (canonical, code string, ok bool) {
	w := strings.TrimSpace(words)
	for _, t := range emergencyTypes {
		if strings.EqualFold(w, t.words) {
			return t.words, t.code, true
		}
	}
	return "", "", false
}

// emergencyWords is the emergency type of a CoT type, or "".
func emergencyWords(code string) string {
	for _, t := range emergencyTypes {
		if t.code == code {
			return t.words
		}
	}
	return ""
}

// CoT types of the emergencies clients raise (protocol.md §1): the four of
// api.md §2.10, ATAK's custom alert, and the cancellation.
const (
	typeCustomAlert = "b-a-o-c"
	typeCancel      = "b-a-o-can"
)

func isRaise(typ string) bool { return typ == typeCustomAlert || emergencyWords(typ) != "" }

// clip shortens client text quoted in an error.
