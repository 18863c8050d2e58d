package logx

import (
	"log/slog"
	"strconv"
	"strings"
	"unicode/utf8"
)

// MaxField is the longest client-controlled value written to a log line, in
// bytes. Longer values are cut and marked with how much was left out.
const MaxField = 128

// Clip returns s cut to at most MaxField bytes (on a rune boundary), with a
// note of the original length when it was cut. Invalid UTF-8 and control
// characters are replaced, so a value cannot forge a line of its own.
func Clip(s string) string { return ClipN(s, MaxField) }

// ClipN is Clip with a limit of n bytes.
func ClipN(s string, n int) string {
	if len(s) <= n && clean(s) {
		return s
	}
	out := make([]byte, 0, min(len(s), n)+24)
	cut := false
	for i, r := range s {
		if i >= n {
			cut = true
			break
		}
		if r == utf8.RuneError || r < 0x20 || r == 0x7f {
			r = '?'
		}
		if len(out)+utf8.RuneLen(r) > n {
			cut = true
			break
		}
		out = utf8.AppendRune(out, r)
	}
	if cut {
		out = append(out, "…("...)
		out = strconv.AppendInt(out, int64(len(s)), 10)
		out = append(out, " bytes)"...)
	}
	return string(out)
}

// clean reports whether s is valid UTF-8 without control characters.
func clean(s string) bool {
	for _, r := range s {
		if r == utf8.RuneError || r < 0x20 || r == 0x7f {
			return false
		}
	}
	return true
}

// String is a slog attribute whose value is clipped.
func String(key, value string) slog.Attr { return slog.String(key, Clip(value)) }

// Truncate returns the longest prefix of s that is at most n bytes and ends
// on a character boundary, with invalid UTF-8 replaced by U+FFFD: for text
// of unknown origin that must fit a field.
func Truncate(s string, n int) string {
	if !utf8.ValidString(s) {
		s = strings.ToValidUTF8(s, "\uFFFD")
	}
	if len(s) <= n {
		return s
	}
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	return s[:n]
}

// Cut is Truncate marking the cut with "…": for quoting a client's value in
// an error message. The result is at most n bytes plus the mark.
func Cut(s string, n int) string {
	if len(s) <= n && utf8.ValidString(s) {
		return s
	}
	t := Truncate(s, n)
	if len(t) < len(s) {
		return t + "…"
	}
	return t
}
