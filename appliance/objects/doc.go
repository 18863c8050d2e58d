// Package objects owns the CoT objects the server itself puts on every map:
// geo objects made through the management API (api.md §2.4–2.7) and
// emergencies (api.md §2.10), raised through the API or by clients over CoT.
//
//   - types.go: the names the API speaks (geo object types, attitudes, how
//     values, emergency types) and their CoT codes;
//   - build.go: the events (geo object, emergency, cancellation, forced
//     delete), built as XML and decoded back, so they are exactly what a
//     client would read;
//   - service.go: Service, its options, start-up (Restore) and upkeep (Run:
//     expiry, persisting what clients raise);
//   - stores.go: what it uses of the store (ObjectStore, History), the
//     interfaces Options takes;
//   - geo.go: creating, moving, listing, deleting and finding geo objects;
//   - emergencies.go: raising, listing and cancelling emergencies, and
//     following those clients raise and cancel (Observe).
//
// Every object is kept in the store (server_objects), so it survives a
// restart, and published through the broker, so it reaches every client of
// both CoT listeners and the history. Objects every client must see whenever
// it connects (repeated and persistent geo objects, active emergencies) are
// retained in the broker (architecture.md "Retained events").
//
// Imports: broker, store, cot, geo, logx. The management API (and any other
// front end) calls it; it knows nothing of HTTP.
package objects
