//go:build large

package marti_test

// largeMode: TestLargeFileStreaming moves 1 GiB (make large-sync builds
// with -tags large).
const largeMode = true
