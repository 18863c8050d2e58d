package admin

import (
	"strings"
	"testing"
	"time"
)

// TestDoctorClock: skew beyond two minutes either way is a warning naming
// the direction; an unknown server clock is a warning too.
func TestDoctorClock(t *testing.T) {
	now := time.Date(2026, 11, 26, 12, 0, 0, 0, time.UTC)
	for _, tc := range []struct {
		server time.Time
		level  Level
		want   string
	}{
		{now.Add(90 * time.Second), LevelOK, "within 2m0s"},
		{now.Add(3 * time.Minute), LevelWarn, "3m0s ahead of"},
		{now.Add(-10 * time.Minute), LevelWarn, "10m0s behind"},
		{time.Time{}, LevelWarn, "unknown"},
	} {
		f := clockFinding(tc.server, now)
		if f.Level != tc.level || !strings.Contains(f.Detail, tc.want) {
			t.Errorf("server %v: %s %q, want %s with %q", tc.server, f.Level, f.Detail, tc.level, tc.want)
		}
	}
}
