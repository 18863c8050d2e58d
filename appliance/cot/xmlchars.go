package cot

import (
	"bytes"
	"unicode/utf8"
)

// Byte classes of the hand-written XML scanner. A true entry means "an
// ordinary byte: keep going"; every other byte needs a closer look.
var (
	textPlain  = makeTable("<&]")         // character data
	attrPlain  = makeTable("<&\"'\t\n\r") // attribute values
	nameStart  = makeNameTable(false)     // first byte of a name
	nameChar   = makeNameTable(true)      // later bytes of a name
	spaceTable = [256]bool{' ': true, '\t': true, '\n': true, '\r': true}
)

// makeTable marks printable ASCII plus tab, newline and carriage return as
// plain, except the bytes in special. Control bytes and non-ASCII bytes are
// never plain: they are checked (legal XML character, valid UTF-8).
func makeTable(special string) (t [256]bool) {
	for c := 0x20; c < 0x80; c++ {
		t[c] = true
	}
	t['\t'], t['\n'], t['\r'] = true, true, true
	for i := 0; i < len(special); i++ {
		t[special[i]] = false
	}
	return t
}

// makeNameTable accepts ASCII names only: letters and '_' first, then also
// digits, '.' and '-'. A single ':' (namespace prefix) is handled by
// scanName. Non-ASCII names are rejected: CoT never uses them and not every
// client parser agrees on which ones are legal.
func makeNameTable(later bool) (t [256]bool) {
	for c := 'a'; c <= 'z'; c++ {
		t[c] = true
		t[c-'a'+'A'] = true
	}
	t['_'] = true
	if later {
		for c := '0'; c <= '9'; c++ {
			t[c] = true
		}
		t['.'], t['-'] = true, true
	}
	return t
}

func isSpace(c byte) bool { return spaceTable[c] }

// isBlank reports whether b holds only XML white space.
func isBlank(b []byte) bool {
	for _, c := range b {
		if !spaceTable[c] {
			return false
		}
	}
	return true
}

// trimBlank removes XML white space at both ends.
func trimBlank(b []byte) []byte {
	i, j := 0, len(b)
	for i < j && spaceTable[b[i]] {
		i++
	}
	for j > i && spaceTable[b[j-1]] {
		j--
	}
	return b[i:j]
}

// scanName reads an XML name at src[i:]: an ASCII NCName, optionally
// followed by one ':' and a second NCName. ok is false if no name starts at i.
func scanName(src []byte, i int) (end int, ok bool) {
	if i >= len(src) || !nameStart[src[i]] {
		return i, false
	}
	i++
	colon := false
	for i < len(src) {
		c := src[i]
		if nameChar[c] {
			i++
			continue
		}
		if c == ':' && !colon && i+1 < len(src) && nameStart[src[i+1]] {
			colon = true
			i += 2
			continue
		}
		break
	}
	return i, true
}

// isXMLChar reports whether r is a legal XML 1.0 character.
func isXMLChar(r rune) bool {
	switch {
	case r >= 0x20 && r <= 0xD7FF:
		return true
	case r == 0x09 || r == 0x0A || r == 0x0D:
		return true
	case r >= 0xE000 && r <= 0xFFFD:
		return true
	case r >= 0x10000 && r <= utf8.MaxRune:
		return true
	}
	return false
}

// charLen returns the length of the legal, valid UTF-8 character at b[0]
// (b[0] >= 0x80), or 0 if it is invalid UTF-8 or not an XML character.
func charLen(b []byte) int {
	r, size := utf8.DecodeRune(b)
	if r == utf8.RuneError && size <= 1 {
		return 0
	}
	if !isXMLChar(r) {
		return 0
	}
	return size
}

// validChars reports whether b is valid UTF-8 made of legal XML characters.
func validChars(b []byte) bool {
	for i := 0; i < len(b); {
		c := b[i]
		if c < 0x80 {
			if c < 0x20 && c != '\t' && c != '\n' && c != '\r' {
				return false
			}
			i++
			continue
		}
		n := charLen(b[i:])
		if n == 0 {
			return false
		}
		i += n
	}
	return true
}

// refLen returns the length of the well-formed character or entity reference
// at b (b[0] == '&'), with the rune it stands for, or 0 if there is none.
// Only the five predefined entities exist in CoT.
func refLen(b []byte) (int, rune) {
	if len(b) < 3 {
		return 0, 0
	}
	if b[1] != '#' {
		switch {
		case bytes.HasPrefix(b, []byte("&amp;")):
			return 5, '&'
		case bytes.HasPrefix(b, []byte("&lt;")):
			return 4, '<'
		case bytes.HasPrefix(b, []byte("&gt;")):
			return 4, '>'
		case bytes.HasPrefix(b, []byte("&quot;")):
			return 6, '"'
		case bytes.HasPrefix(b, []byte("&apos;")):
			return 6, '\''
		}
		return 0, 0
	}
	i := 2
	hex := false
	if b[i] == 'x' {
		hex = true
		i++
	}
	start := i
	v := 0
	for ; i < len(b); i++ {
		c := b[i]
		var d int
		switch {
		case c >= '0' && c <= '9':
			d = int(c - '0')
		case hex && c >= 'a' && c <= 'f':
			d = int(c-'a') + 10
		case hex && c >= 'A' && c <= 'F':
			d = int(c-'A') + 10
		default:
			d = -1
		}
		if d < 0 {
			break
		}
		if v <= utf8.MaxRune {
			if hex {
				v = v*16 + d
			} else {
				v = v*10 + d
			}
		}
	}
	if i == start || i >= len(b) || b[i] != ';' || v > utf8.MaxRune || !isXMLChar(rune(v)) {
		return 0, 0
	}
	return i + 1, rune(v)
}

// appendUnescaped appends raw (attribute value or character data) with its
// references replaced by the characters they stand for. An '&' that starts
// no well-formed reference is kept as a literal '&' (lenient, protocol.md §1).
func appendUnescaped(dst, raw []byte) []byte {
	for {
		i := bytes.IndexByte(raw, '&')
		if i < 0 {
			return append(dst, raw...)
		}
		dst = append(dst, raw[:i]...)
		raw = raw[i:]
		n, r := refLen(raw)
		if n == 0 {
			dst = append(dst, '&')
			raw = raw[1:]
			continue
		}
		dst = utf8.AppendRune(dst, r)
		raw = raw[n:]
	}
}

// appendEscaped appends s escaped for use inside a double-quoted attribute
// value or as character data. Tab, newline and carriage return are written
// as character references so that attribute-value normalization in the
// receiving parser keeps them. Bytes that are not legal XML characters
// (control bytes, invalid UTF-8) become U+FFFD, so the output is always
// well-formed.
func appendEscaped[S ~string | ~[]byte](dst []byte, s S) []byte {
	last := 0
	for i := 0; i < len(s); i++ {
		var rep string
		switch s[i] {
		case '&':
			rep = "&amp;"
		case '<':
			rep = "&lt;"
		case '>':
			rep = "&gt;"
		case '"':
			rep = "&quot;"
		case '\t':
			rep = "&#9;"
		case '\n':
			rep = "&#10;"
		case '\r':
			rep = "&#13;"
		default:
			c := s[i]
			if c >= 0x20 && c < 0x80 {
				continue
			}
			if c >= 0x80 {
				if n := charLen([]byte(s[i:min(i+utf8.UTFMax, len(s))])); n > 0 {
					i += n - 1
					continue
				}
			}
			rep = "\uFFFD" // an illegal character cannot be written: replace it
		}
		dst = append(dst, s[last:i]...)
		dst = append(dst, rep...)
		last = i + 1
	}
	return append(dst, s[last:]...)
}
