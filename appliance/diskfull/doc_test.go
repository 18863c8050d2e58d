// Package diskfull runs the real outpost binary with its data directory on
// a filesystem of a few tens of MiB (testkit.SmallFS), fills that
// filesystem, cuts the power (SIGKILL) and starts the server again on the
// full disk (RELIABILITY.md "Starting on a full disk"): it must start, relay
// CoT, answer every read, refuse uploads clearly, and take them again as
// soon as space is freed, without a restart.
//
// Linux only, and as root (mounting a tmpfs); elsewhere the test skips and
// says why. It has test files only and imports nothing of ours outside
// them.
package diskfull
