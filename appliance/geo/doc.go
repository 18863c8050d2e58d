// Package geo owns positions on the earth: geodesy on the WGS-84 ellipsoid,
// reading coordinates as people type them, the UTM, UPS and MGRS grids, and
// an optional client for a Nominatim-compatible geocoder on the local
// network. It is a pure library: no state, no logging, no goroutines, and
// no network access but the geocoder's, when asked.
//
// Geodesy (geodesy.go, antipodal.go, bbox.go): Distance, InitialBearing,
// Inverse and Destination solve the geodesic problems on WGS-84 by
// Vincenty's method (the inverse iteration accelerated by secant steps),
// with a bisection solver for the nearly antipodal pairs where Vincenty's
// iteration fails, so every pair gets an answer. Distances are good to a
// fraction of a millimetre for any two points on the earth (checked against
// GeographicLib's exact values and Vincenty's own test lines); bearings to
// about 1e-8°, 1e-6° for nearly antipodal points, where they are
// ill-conditioned. Origin prepares one point for many distances (a radius
// search). BoundingBox gives a latitude/longitude box that surely holds a
// radius search, for a cheap SQL prefilter before exact distances, correct
// at the poles and across the antimeridian.
//
// Grids (tm.go, utm.go, ups.go, mgrs.go): ToUTM/FromUTM, ToUPS/FromUPS and
// ToMGRS/FromMGRS convert both ways. Transverse Mercator uses Krüger's
// series to fourth order in n (well under a micrometre inside a UTM zone);
// polar stereographic is exact. UTM covers 80°S to 84°N (both included)
// with the standard zone rules, including the widened zone 32V (Norway) and
// the Svalbard zones 31X, 33X, 35X and 37X (there is no 32X, 34X or 36X);
// the caps beyond are UPS (zones A and B south, Y and Z north). MGRS uses
// the 100 km square letters of the WGS-84 ("AA") scheme and 0 to 5 digits,
// truncated, never rounded: a reference names the south-west corner of the
// cell that holds the point, and FromMGRS returns that corner.
//
// Notations (parse.go, latlon.go, grid.go, format.go): Parse reads decimal
// degrees, degrees-minutes-seconds and degrees-decimal-minutes with
// hemisphere letters before or after and the usual marks (° ' " ′ ″ or
// none), UTM as zone plus latitude band letter ("33V 674000 6580000"; the
// letter is never read as a hemisphere), UPS ("Z 2426773 1530125") and
// MGRS ("33VXF7400080000", spaces optional). Text it cannot read yields a
// *ParseError whose message says what is wrong and lists Notations, fit for
// a 400 answer. Point.String and FormatDMS write positions Parse reads back.
//
// Geocoder (geocoder.go): Geocoder.Lookup asks a Nominatim-compatible
// /search endpoint, with a timeout and a response size limit; Resolve reads
// a coordinate first and asks the geocoder only for text that is not one.
//
// Imports: nothing of ours (the standard library only).
package geo
