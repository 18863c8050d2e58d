// Package appliance is Outpost's composition root (architecture.md "The
// root composes"): it decides which parts run and with what, and owns what
// it starts. Appliance.Open builds everything from a config.Config — data
// directory, generated secrets, the SQLite store and its CoT history
// writer, the certificate authority, access, the broker, the server's own
// objects, federation and the listeners — binds every listener
// synchronously, then serves in the background and starts its workers; when
// Open returns nil all are bound, and Addrs says where. Close shuts down in
// the documented order (architecture.md "Shutdown order"), waiting for every
// goroutine it started.
//
// Files, each using only those after it: open.go (Open and its steps),
// listeners.go (the listeners wired), close.go (Close, in order), bound.go
// (what the listeners bound), health.go (the watchdog's check),
// appliance.go (the type), lifecycle.go (the goroutines it owns by stage),
// version.go.
//
// Only package cmd/outpost imports this package.
package appliance
