package marti

// Query parameters the client API shares: booleans, whole numbers with
// the official server's -1 for "not given", one of two words, and times.
// Each bad value is a 400 naming the parameter.

import (
	"net/http"
	"strconv"
	"strings"

	"outpost/appliance/httpapi"
)

// boolParam reads the query parameter name as true or false (def when
// absent).
func boolParam(r *http.Request, name string, def bool) (bool, error) {
	v := r.URL.Query().Get(name)
	if v == "" {
		return def, nil
	}
	b, err := strconv.ParseBool(v)
	if err != nil {
		return false, httpapi.BadRequest(name, "must be true or false, not %q", httpapi.ClipValue(v))
	}
	return b, nil
}

// intParam reads the query parameter name as a whole number from min to
// max, or -1, the official server's "not given", which is also what an
// absent one reads as.
func intParam(r *http.Request, name string, min, max int) (int, error) {
	v := r.URL.Query().Get(name)
	if v == "" {
		return -1, nil
	}
	n, err := strconv.Atoi(v)
	if err != nil || (n != -1 && (n < min || n > max)) {
		return 0, httpapi.BadRequest(name, "must be -1 or a whole number from %d to %d, not %q", min, max, httpapi.ClipValue(v))
	}
	return n, nil
}

// wordParam reads the query parameter name as one of two words, in any
// case (the first when absent), and reports whether it is the second.
func wordParam(r *http.Request, name, first, second string) (bool, error) {
	switch v := r.URL.Query().Get(name); strings.ToUpper(v) {
	case "", first:
		return false, nil
	case second:
		return true, nil
	default:
		return false, httpapi.BadRequest(name, "must be %s or %s, not %q", first, second, httpapi.ClipValue(v))
	}
}
