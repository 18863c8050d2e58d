// Package smoke holds the smoke tests of the cross-compiled binaries, run
// by `make smoke` (they are built only with -tags smoke): linux/arm (GOARM=6) and linux/arm64
// under qemu-user-static, and windows/amd64 under Wine, as the run
// command and as a Windows service. Each test builds its binary, starts it
// on free ports, checks /Alive, relays a CoT event between two TCP
// clients, stops it the way its platform does, and checks the SQLite file.
//
// It has test files only and imports nothing of ours outside them.
package smoke
