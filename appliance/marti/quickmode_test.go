//go:build !large

package marti_test

// largeMode: TestLargeFileStreaming moves 64 MiB (`make test`).
const largeMode = false
