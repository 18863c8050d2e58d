package logx

import (
	"strings"
	"testing"
	"unicode/utf8"
)

func TestFileName(t *testing.T) {
	long := strings.Repeat("é", 500) // 1,000 bytes of two-byte runes
	for _, tc := range []struct{ in, fallback, want string }{
		{"route.kml", "", "route.kml"},
		{"../../../../tmp/x", "", "x"},
		{`..\..\x`, "", "x"},
		{"/etc/passwd", "", "passwd"},
		{`C:\Windows\x.exe`, "", "x.exe"},
		{"dir/sub/", "", "sub"},
		{`a/b\c/d.zip`, "", "d.zip"},
		{".hidden", "", "hidden"},
		{"...", "", "file"},
		{"..", "", "file"},
		{"./.x.zip", "", "x.zip"},
		{"name. . ", "", "name"},
		{"  spaced name.zip", "", "spaced name.zip"},
		{"tab\tnew\nline\rnul\x00del\x7fc1\u0085\u009b.txt", "", "tabnewlinenuldelc1.txt"},
		{"evil\u202egpj.exe", "", "evilgpj.exe"},
		{"\u2066a\u2069\u200e\u200f\u061c\u2028b", "", "ab"},
		{"bad\xffutf8.zip", "", "badutf8.zip"},
		{"Карта района.kmz", "", "Карта района.kmz"},
		{"地图.zip", "", "地图.zip"},
		{"👨‍👩‍👧 family.png", "", "👨‍👩‍👧 family.png"},
		{"Mission 10:30.zip", "", "Mission 10:30.zip"},
		{"", "", "file"},
		{"", "Recon.zip", "Recon.zip"},
		{"../..", "Recon.zip", "Recon.zip"},
		{"///", "", "file"},
		{`/\/\..`, "", "file"},
		{"..", "../mission/.zip", "zip"},
		{"\u202e", "\x00", "file"},
		{long + ".zip", "", strings.Repeat("é", 125) + ".zip"},
		{long, "", strings.Repeat("é", 127)},
		{strings.Repeat("a", 254) + "é.zip", "", strings.Repeat("a", 251) + ".zip"},
		{strings.Repeat("b", 300) + "." + strings.Repeat("x", 40), "", strings.Repeat("b", 255)},
		{strings.Repeat("c", 248) + " . .txt", "", strings.Repeat("c", 248) + " . .txt"},
		{strings.Repeat("c", 260) + ". . .txt", "", strings.Repeat("c", 251) + ".txt"},
	} {
		got := FileName(tc.in, tc.fallback)
		if got != tc.want {
			t.Errorf("FileName(%q, %q) = %q, want %q", tc.in, tc.fallback, got, tc.want)
		}
		if len(got) > MaxFileName || !utf8.ValidString(got) || strings.ContainsAny(got, `/\`) ||
			strings.HasPrefix(got, ".") || strings.HasSuffix(got, ".") || strings.HasSuffix(got, " ") {
			t.Errorf("FileName(%q) = %q is not a safe base name", tc.in, got)
		}
		if again := FileName(got, ""); again != got {
			t.Errorf("FileName is not idempotent: %q gives %q", got, again)
		}
	}
}
