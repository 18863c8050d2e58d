//go:build !race && linux

// Package hostile reproduces, against the real outpost binary on loopback,
// what a hostile client on the mesh tries (RELIABILITY.md "Hostile
// clients"), one test per attack, while a well-behaved TCP client and a TLS
// client keep exchanging position reports. Each test asserts that the
// bystanders stay connected with a p95 latency under 100 ms and no report
// slower than 1 s, and that the server's peak memory, its database and its
// log grow no more than stated.
//
// The tests run without the race detector (`make hostile`, part of `make
// test`): they measure latency. Linux only: they read the server's peak
// memory from /proc and set the umask. The soak build (`make soak`: -tags
// soak) runs the long versions.
package hostile
