package logx

import (
	"strings"
	"unicode"
	"unicode/utf8"
)

// MaxFileName is the longest name FileName returns, in bytes of UTF-8: what
// most file systems allow in one path element.
const MaxFileName = 255

// maxKeptExt is the longest extension (with its dot, in bytes) FileName keeps
// when it shortens a name; a longer "extension" is just part of the name.
const maxKeptExt = 32

// FileName reduces a file name a client gave to a base name that is safe to
// store, list and offer for saving (architecture.md "File names"):
//
//   - only what follows the last '/' or '\' (trailing separators ignored),
//     so "../../x", "..\\..\\x", "/etc/passwd" and "C:\\Windows\\x.exe" keep
//     x, x, passwd and x.exe;
//   - without invalid UTF-8, control characters (C0, DEL, C1), line and
//     paragraph separators, and the bidirectional controls that make a name
//     display other than it is ("exe.txt" shown for "txt.exe");
//   - without leading dots or spaces (no "..", no hidden file) and without
//     trailing dots or spaces (which Windows drops);
//   - at most MaxFileName bytes, cut on a character boundary, keeping the
//     extension when it is short.
//
// Other characters, Unicode included, are kept. When nothing is left, the
// result is fallback reduced the same way, or "file". FileName is
// idempotent: a name it returns comes back unchanged.
func FileName(name, fallback string) string {
	if s := baseName(name); s != "" {
		return s
	}
	if s := baseName(fallback); s != "" {
		return s
	}
	return "file"
}

// baseName is FileName without the fallback; "" when nothing is left.
func baseName(name string) string {
	var b strings.Builder
	b.Grow(len(name))
	for _, r := range strings.TrimRight(name, `/\`) {
		switch {
		case r == '/' || r == '\\':
			b.Reset() // a directory part: only what follows counts
		case r == utf8.RuneError, unsafeInName(r):
			// dropped
		default:
			b.WriteRune(r)
		}
	}
	s := trimName(b.String())
	if len(s) <= MaxFileName {
		return s
	}
	ext := ""
	if i := strings.LastIndexByte(s, '.'); i > 0 && len(s)-i <= maxKeptExt {
		ext = s[i:]
	}
	return trimName(Truncate(s[:len(s)-len(ext)], MaxFileName-len(ext))) + ext
}

// trimName removes leading dots and spaces and trailing dots and spaces.
func trimName(s string) string {
	dotOrSpace := func(r rune) bool { return r == '.' || unicode.IsSpace(r) }
	return strings.TrimRightFunc(strings.TrimLeftFunc(s, dotOrSpace), dotOrSpace)
}

// unsafeInName reports the characters FileName removes besides separators.
func unsafeInName(r rune) bool {
	switch r {
	case '\u061c', // Arabic letter mark
		'\u200e', '\u200f', // left-to-right and right-to-left marks
		'\u202a', '\u202b', '\u202c', '\u202d', '\u202e', // embeddings and overrides
		'\u2066', '\u2067', '\u2068', '\u2069', // isolates
		'\u2028', '\u2029': // line and paragraph separators
		return true
	}
	return unicode.IsControl(r)
}
