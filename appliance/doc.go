// Package appliance is Outpost's composition root. Appliance.Open builds
// everything from a config.Config — data directory, generated secrets, the
// SQLite store and its CoT history writer, the broker, the certificate
// authority and the listeners — binds every listener synchronously, then
// serves in the background; when Open returns nil all are bound, and Addrs
// says where. Close shuts down in the documented order (architecture.md
// "Shutdown order"): the broker drains (no departures) → listeners stop
// accepting and reading and drain client queues for half the time → the
// broker stops → the CoT history is flushed → the store closes.
//
// Only package cmd/outpost imports this package. It imports every other
// package of the module except service.
package appliance
