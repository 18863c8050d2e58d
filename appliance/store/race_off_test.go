//go:build !race

package store

// raceEnabled: the race detector is on (slow; the large-blob test skips).
const raceEnabled = false
