// Package service integrates Outpost with the operating system: shutdown
// signals, and systemd's notify protocol (READY=1, STOPPING=1, watchdog
// keep-alives) when started by systemd with Type=notify.
//
// Only cmd/outpost imports it. It imports no other package of this module.
package service
