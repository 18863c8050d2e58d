package httpapi

// The Content-Disposition of a download (RFC 6266).

import (
	"strings"

	"outpost/appliance/logx"
)

// Attachment is a Content-Disposition value offering the file under name,
// reduced to a safe base name first (logx.FileName), whatever a stored row
// holds: `attachment; filename="name"` for a plain ASCII name, and for any
// other an ASCII fallback (each other character as '_') followed by the
// name itself in RFC 8187 encoding, which clients that know it prefer:
// `attachment; filename="caf_.zip"; filename*=UTF-8”caf%C3%A9.zip`.
func Attachment(name string) string {
	name = logx.FileName(name, "")
	var fallback strings.Builder
	ascii := true
	for _, r := range name {
		if r > 0x7e || r < 0x20 {
			r, ascii = '_', false
		}
		if r == '"' || r == '\\' {
			fallback.WriteByte('\\')
		}
		fallback.WriteRune(r)
	}
	cd := `attachment; filename="` + fallback.String() + `"`
	if !ascii {
		cd += "; filename*=UTF-8''" + extValue(name)
	}
	return cd
}

// extValue percent-encodes s as an RFC 8187 value: every byte but the
// attr-chars.
func extValue(s string) string {
	const hex = "0123456789ABCDEF"
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		c := s[i]
		if isAttrChar(c) {
			b.WriteByte(c)
			continue
		}
		b.WriteByte('%')
		b.WriteByte(hex[c>>4])
		b.WriteByte(hex[c&15])
	}
	return b.String()
}

// isAttrChar is RFC 8187's attr-char: ALPHA, DIGIT and !#$&+-.^_`|~.
func isAttrChar(c byte) bool {
	switch {
	case 'a' <= c && c <= 'z', 'A' <= c && c <= 'Z', '0' <= c && c <= '9':
		return true
	}
	return strings.IndexByte("!#$&+-.^_`|~", c) >= 0
}
