package mgmt

// Request checks shared by the routes: text fields, the loosely typed
// values FreeTAKServer's clients send (booleans as strings, keys as numbers
// or strings), and the refusals the routes return.

import (
	"encoding/json"
	"net/http"
	"strconv"
	"strings"

	"outpost/appliance/httpapi"
	"outpost/appliance/store"
)

// checkText is the shared check of text fields of every HTTP interface
// (httpapi), named for this package's many call sites.
var checkText = httpapi.CheckText

// notFound is a 404 refusal with msg as its message.
func notFound(msg string) error {
	return &httpapi.Error{Status: http.StatusNotFound, Msg: msg}
}

// str dereferences an optional string field.
func str(p *string) string {
	if p == nil {
		return ""
	}
	return *p
}

// checkToken applies the rules of a token a client chooses itself: long
// enough not to be guessed, short enough to be stored.
func checkToken(field, v string) error {
	if err := checkText(field, v, true, 256); err != nil {
		return err
	}
	if len(v) < minClientToken {
		return httpapi.BadRequest(field, "must be at least %d characters (leave it out to have one generated)", minClientToken)
	}
	if strings.TrimSpace(v) != v || strings.ContainsAny(v, " \t") {
		return httpapi.BadRequest(field, "must not contain spaces")
	}
	return nil
}

// asBool reads a flag sent as "true"/"false" (any case) or a JSON boolean;
// absent is false.
func asBool(field string, v any) (bool, error) {
	switch t := v.(type) {
	case nil:
		return false, nil
	case bool:
		return t, nil
	case string:
		switch strings.ToLower(strings.TrimSpace(t)) {
		case "true":
			return true, nil
		case "false", "":
			return false, nil
		}
	}
	return false, httpapi.BadRequest(field, `must be "true" or "false"`)
}

// asKey reads a PrimaryKey sent as a number or a string of digits.
func asKey(field string, v any) (int64, error) {
	var s string
	switch t := v.(type) {
	case nil:
		return 0, httpapi.BadRequest(field, "required")
	case json.Number:
		s = t.String()
	case string:
		s = strings.TrimSpace(t)
		if s == "" {
			return 0, httpapi.BadRequest(field, "required")
		}
	default:
		return 0, httpapi.BadRequest(field, "must be a whole number or a string of digits, not %s", kindOf(v))
	}
	n, err := strconv.ParseInt(s, 10, 64)
	if err != nil || n < 1 {
		return 0, httpapi.BadRequest(field, "must be a positive whole number, not %q", httpapi.ClipValue(s))
	}
	return n, nil
}

// asPrivacy reads Privacy: 0 (public) or 1 (private), as a number or a string.
func asPrivacy(field string, v any) (bool, error) {
	var s string
	switch t := v.(type) {
	case json.Number:
		s = t.String()
	case string:
		s = strings.TrimSpace(t)
	default:
		return false, httpapi.BadRequest(field, "must be 0 (public) or 1 (private), not %s", kindOf(v))
	}
	switch s {
	case "0":
		return false, nil
	case "1":
		return true, nil
	}
	return false, httpapi.BadRequest(field, "must be 0 (public) or 1 (private), not %q", httpapi.ClipValue(s))
}

// asKeywords reads Keywords: a comma-separated string (api.md §2.8) or an
// array of strings.
func asKeywords(field string, v any) ([]string, error) {
	var items []string
	switch t := v.(type) {
	case string:
		items = strings.Split(t, ",")
	case []any:
		for i, it := range t {
			s, ok := it.(string)
			if !ok {
				return nil, httpapi.BadRequest(field+"["+strconv.Itoa(i)+"]", "must be a string, not %s", kindOf(it))
			}
			items = append(items, s)
		}
	default:
		return nil, httpapi.BadRequest(field, "must be a comma-separated string or an array of strings, not %s", kindOf(v))
	}
	kw, err := store.CleanKeywords(items)
	if err != nil {
		return nil, httpapi.InField(field, err)
	}
	return kw, nil
}

// kindOf names a decoded JSON value's type.
func kindOf(v any) string {
	switch v.(type) {
	case nil:
		return "null"
	case bool:
		return "a boolean"
	case json.Number, float64:
		return "a number"
	case string:
		return "a string"
	case []any:
		return "an array"
	default:
		return "an object"
	}
}
