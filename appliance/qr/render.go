package qr

import (
	"errors"
	"fmt"
	"strings"

	qrcode "github.com/skip2/go-qrcode"
)

// MaxText is the longest text this package encodes (bytes). Invitation
// texts are a few hundred bytes; a QR code at level M holds up to 2331.
const MaxText = 1024

// ErrTooLong: the text is longer than MaxText.
var ErrTooLong = errors.New("qr: text too long")

// level is the error correction of every code: M (15 %) survives a
// scratched screen or a printout without making the code dense.
const level = qrcode.Medium

func encode(text string) (*qrcode.QRCode, error) {
	if len(text) > MaxText {
		return nil, fmt.Errorf("%w (%d bytes, at most %d)", ErrTooLong, len(text), MaxText)
	}
	if text == "" {
		return nil, errors.New("qr: empty text")
	}
	return qrcode.New(text, level)
}

// PNG renders text as a black-on-white PNG image about size pixels wide,
// with the quiet zone scanners need.
func PNG(text string, size int) ([]byte, error) {
	q, err := encode(text)
	if err != nil {
		return nil, err
	}
	return q.PNG(size)
}

// Terminal renders text as lines of Unicode half blocks (two modules per
// character cell, one above the other), dark modules drawn as spaces on a
// light background so that the code reads on dark and light terminals
// alike, with a quiet zone of two modules. Each line ends in a newline.
func Terminal(text string) (string, error) {
	q, err := encode(text)
	if err != nil {
		return "", err
	}
	q.DisableBorder = true
	bits := q.Bitmap()
	const quiet = 2
	n := len(bits) + 2*quiet
	dark := func(y, x int) bool {
		y, x = y-quiet, x-quiet
		return y >= 0 && x >= 0 && y < len(bits) && x < len(bits) && bits[y][x]
	}
	var b strings.Builder
	for y := 0; y < n; y += 2 {
		for x := 0; x < n; x++ {
			top, bottom := dark(y, x), y+1 < n && dark(y+1, x)
			// Light is drawn, dark is left blank: "█" both light, "▀" only
			// the top light, "▄" only the bottom light, " " both dark.
			switch {
			case !top && !bottom:
				b.WriteString("█")
			case !top:
				b.WriteString("▀")
			case !bottom:
				b.WriteString("▄")
			default:
				b.WriteString(" ")
			}
		}
		b.WriteByte('\n')
	}
	return b.String(), nil
}
