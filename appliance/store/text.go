package store

import (
	"crypto/rand"
	"fmt"
	"unicode"
	"unicode/utf8"
)

// checkText enforces the common rules for a stored text field: valid UTF-8,
// no control characters, length in bytes within [min, max].
func checkText(field, v string, min, max int) error {
	if len(v) < min || len(v) > max {
		if min > 0 && len(v) == 0 {
			return fmt.Errorf("%w: %s is required", ErrInvalid, field)
		}
		return fmt.Errorf("%w: %s must be %d to %d bytes, got %d", ErrInvalid, field, min, max, len(v))
	}
	if !utf8.ValidString(v) {
		return fmt.Errorf("%w: %s is not valid UTF-8", ErrInvalid, field)
	}
	for _, r := range v {
		if unicode.IsControl(r) {
			return fmt.Errorf("%w: %s contains a control character", ErrInvalid, field)
		}
	}
	return nil
}

// newUUID returns a random (version 4, RFC 9562) UUID from crypto/rand.
func newUUID() (string, error) {
	var b [16]byte
	if _, err := rand.Read(b[:]); err != nil {
		return "", fmt.Errorf("store: random uuid: %w", err)
	}
	b[6] = b[6]&0x0f | 0x40 // version 4
	b[8] = b[8]&0x3f | 0x80 // variant 10
	return fmt.Sprintf("%x-%x-%x-%x-%x", b[0:4], b[4:6], b[6:8], b[8:10], b[10:16]), nil
}
