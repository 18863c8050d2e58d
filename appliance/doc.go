// Package appliance is Outpost's composition root. Appliance.Open builds
// everything from a config.Config — data directory, generated secrets, the
// SQLite store and its CoT history writer, the broker, the certificate
// authority and the listeners — binds every listener synchronously, then
// serves in the background; Ready reports when all are bound and Addrs
// where. Close shuts down in the documented order (architecture.md "The five
// listeners"): stop accepting → stop reading and drain client queues →
// stop the broker → flush the CoT history → close the store.
//
// Only package cmd/outpost imports this package. It imports every other
// package of the module except service.
package appliance
