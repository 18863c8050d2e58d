package geo

import (
	"fmt"
	"math"
)

// FormatDMS formats p as degrees, minutes and seconds (to the millisecond
// of arc, about 3 cm) with hemisphere letters, as in
// 59°19'45.500"N 18°04'07.000"E. Parse reads it back.
func FormatDMS(p Point) string {
	return dmsPart(p.Lat, 'N', 'S') + " " + dmsPart(p.Lon, 'E', 'W')
}

func dmsPart(v float64, pos, neg byte) string {
	h := pos
	if v < 0 || v == 0 && math.Signbit(v) {
		h, v = neg, -v
	}
	ms := int64(math.Round(v * 3600 * 1000)) // milliseconds of arc
	return fmt.Sprintf("%d°%02d'%02d.%03d\"%c", ms/3600000, ms/60000%60, ms/1000%60, ms%1000, h)
}
