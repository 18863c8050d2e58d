package logx

import (
	"testing"
	"unicode/utf8"
)

func TestTruncateAndCutKeepCharactersWhole(t *testing.T) {
	tests := []struct {
		in       string
		n        int
		truncate string
		cut      string
	}{
		{"short", 10, "short", "short"},
		{"exactly10!", 10, "exactly10!", "exactly10!"},
		{"abcdefghijk", 10, "abcdefghij", "abcdefghij…"},
		// "é" is two bytes: a cut at byte 4 would split the second one.
		{"éééé", 5, "éé", "éé…"},
		{"ab\xffcd", 10, "ab\uFFFDcd", "ab\uFFFDcd"},
		{"", 3, "", ""},
	}
	for _, tc := range tests {
		if got := Truncate(tc.in, tc.n); got != tc.truncate || !utf8.ValidString(got) {
			t.Errorf("Truncate(%q, %d) = %q, want %q", tc.in, tc.n, got, tc.truncate)
		}
		if got := Cut(tc.in, tc.n); got != tc.cut || !utf8.ValidString(got) {
			t.Errorf("Cut(%q, %d) = %q, want %q", tc.in, tc.n, got, tc.cut)
		}
	}
}
