package store

import (
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
