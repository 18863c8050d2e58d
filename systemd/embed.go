// Package systemd holds Outpost's systemd unit, embedded so that
// `outpost service install` writes the same unit the .deb ships. It
// imports no other package of ours.
package systemd

import _ "embed"

// Unit is outpost.service: Type=notify, watchdog, restart on failure and
// the hardening.
//
//go:embed outpost.service
var Unit []byte
