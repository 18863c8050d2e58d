package cot

import (
	"testing"
	"time"
)

// FormatTime (the hand-unrolled appendTime) must write exactly what the
// standard library writes for TimeFormat, in and out of the four-digit years.
func TestFormatTimeMatchesTheLayout(t *testing.T) {
	times := []time.Time{
		time.Date(2026, 11, 25, 9, 8, 7, 123456789, time.UTC),
		time.Date(2024, 2, 29, 23, 59, 59, 999999999, time.FixedZone("X", 5*3600+1800)),
		time.Date(1, 1, 1, 0, 0, 0, 0, time.UTC),
		time.Date(9999, 12, 31, 23, 59, 59, 0, time.UTC),
		time.Unix(0, 0),
	}
	for _, tm := range times {
		if got, want := FormatTime(tm), tm.UTC().Format(TimeFormat); got != want {
			t.Errorf("FormatTime(%v) = %q, want %q", tm, got, want)
		}
	}
}
