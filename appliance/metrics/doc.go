// Package metrics is the appliance's Prometheus metrics (architecture.md
// "Metrics"), served as text at GET /metrics on the management port. The
// relay keeps plain atomic counters on its hot path; the collector reads
// their snapshots, and the listeners', the history's, the mesh's and
// federation's, only when scraped. HTTP requests are counted by a
// middleware around every HTTP listener's handler, by the route pattern
// that answered (never the raw path).
//
// Imports: broker, diskspace, federation, httpapi, marti, mesh, netx, store,
// stream (the sources it reads).
package metrics
