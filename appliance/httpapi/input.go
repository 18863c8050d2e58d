package httpapi

// Checks of request values shared by every HTTP interface: text fields and
// content hashes. Each refusal is a 400 naming the field.

import (
	"encoding/hex"
	"strings"
	"unicode"
	"unicode/utf8"

	"outpost/appliance/logx"
)

// CheckText accepts v when it is valid UTF-8 without control characters
// and at most max bytes; required also refuses "".
func CheckText(field, v string, required bool, max int) error {
	if v == "" {
		if required {
			return BadRequest(field, "required")
		}
		return nil
	}
	if len(v) > max {
		return BadRequest(field, "longer than %d bytes", max)
	}
	if !utf8.ValidString(v) {
		return BadRequest(field, "not valid UTF-8")
	}
	for _, r := range v {
		if unicode.IsControl(r) {
			return BadRequest(field, "contains a control character")
		}
	}
	return nil
}

// clipAt is how many bytes of a client's value an error message quotes.
const clipAt = 40

// ClipValue shortens a client's value for quoting in an error message: at
// most 40 bytes, cut on a character boundary, "…" marking the cut.
func ClipValue(s string) string { return logx.Cut(s, clipAt) }

// CheckHash accepts a SHA-256 in hex (any case) and returns it lower-case.
// "" is refused as required.
func CheckHash(field, h string) (string, error) {
	if h == "" {
		return "", BadRequest(field, "required")
	}
	if b, err := hex.DecodeString(h); err != nil || len(b) != 32 {
		return "", BadRequest(field, "must be a SHA-256 in hex (64 hex digits), not %q", ClipValue(h))
	}
	return strings.ToLower(h), nil
}
