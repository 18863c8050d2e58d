// Package journey holds one test, TestFiveMinuteJourney (README "Five
// minutes to a connected team"): a new user's first minutes with an
// appliance, from its first start to a phone enrolled by QR code and
// exchanging positions, on the real binary with third-party clients. Test
// files only; Linux only (network namespaces).
package journey
