//go:build race

package stream

// raceEnabled: the race detector makes every stack frame larger, so stack
// sizes are not measured under it.
const raceEnabled = true
