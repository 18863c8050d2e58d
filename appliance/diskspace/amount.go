package diskspace

import (
	"fmt"
	"math"
	"strconv"
	"strings"
)

// Amount is a size given in bytes or as a percentage of the filesystem:
// the value of the diskReserve and diskFloor settings. The zero value is
// Auto: the default of the setting (DefaultReserve, DefaultFloor).
type Amount struct {
	Set     bool    // false: the setting's default
	Bytes   int64   // when Percent is 0
	Percent float64 // of the filesystem's size, (0, MaxPercent]
}

// MaxPercent is the largest percentage an Amount may take: a reserve of
// more than half the disk would leave nothing to store.
const MaxPercent = 50

// The default reserve and floor (operations.md "Free disk space").
const (
	defaultReservePercent = 5
	defaultReserveBytes   = 256 << 20
	// A small filesystem (under 2.5 GiB) keeps 10 % of itself instead of
	// 256 MiB, which could be all of it.
	smallReservePercent = 10
	defaultFloorBytes   = 16 << 20
)

// ParseAmount reads "auto" (or ""), a whole number of bytes with an
// optional KiB, MiB or GiB suffix ("0" turns the limit off), or a
// percentage of the filesystem ("5%", at most 50).
func ParseAmount(s string) (Amount, error) {
	s = strings.TrimSpace(s)
	if s == "" || s == "auto" {
		return Amount{}, nil
	}
	if p, ok := strings.CutSuffix(s, "%"); ok {
		f, err := strconv.ParseFloat(strings.TrimSpace(p), 64)
		if err != nil || math.IsNaN(f) || f <= 0 || f > MaxPercent {
			return Amount{}, fmt.Errorf("%q is not a percentage between 0 and %d (e.g. 5%%)", s, MaxPercent)
		}
		return Amount{Set: true, Percent: f}, nil
	}
	num, mult := s, int64(1)
	for _, u := range []struct {
		suffix string
		m      int64
	}{{"KiB", 1 << 10}, {"MiB", 1 << 20}, {"GiB", 1 << 30}} {
		if v, ok := strings.CutSuffix(s, u.suffix); ok {
			num, mult = strings.TrimSpace(v), u.m
			break
		}
	}
	n, err := strconv.ParseInt(num, 10, 64)
	if err != nil || n < 0 || n > math.MaxInt64/mult {
		return Amount{}, fmt.Errorf("%q is not auto, a size (e.g. 512MiB; 0: none) or a percentage (e.g. 5%%)", s)
	}
	return Amount{Set: true, Bytes: n * mult}, nil
}

// String is the amount as ParseAmount reads it.
func (a Amount) String() string {
	switch {
	case !a.Set:
		return "auto"
	case a.Percent > 0:
		return strconv.FormatFloat(a.Percent, 'f', -1, 64) + "%"
	}
	return strconv.FormatInt(a.Bytes, 10)
}

// of is the amount in bytes on a filesystem of total bytes; def is used
// when the amount is Auto.
func (a Amount) of(total int64, def int64) int64 {
	switch {
	case !a.Set:
		return def
	case a.Percent > 0:
		return int64(float64(total) * a.Percent / 100)
	}
	return a.Bytes
}

// DefaultReserve is the reserve of a filesystem of total bytes: the larger
// of 5 % and 256 MiB, but never more than 10 % (a filesystem under
// 2.5 GiB keeps 10 % of itself).
func DefaultReserve(total int64) int64 {
	r := max(total/100*defaultReservePercent, defaultReserveBytes)
	return min(r, total/100*smallReservePercent)
}

// DefaultFloor is the hard floor under a reserve: 16 MiB, but never more
// than half the reserve.
func DefaultFloor(reserve int64) int64 {
	return min(int64(defaultFloorBytes), reserve/2)
}

// Limits resolves a reserve and a floor on a filesystem of total bytes.
// The floor is never above the reserve.
func Limits(reserve, floor Amount, total int64) (r, f int64) {
	r = reserve.of(total, DefaultReserve(total))
	f = floor.of(total, DefaultFloor(r))
	return r, min(f, r)
}
