package netx

// The names of the ports (architecture.md "The five listeners"), as they
// appear in the appliance's Addrs, in logs, in metrics and in the client
// registry. The mesh's and federation's listeners are named by their own
// packages.
const (
	ListenerREST   = "rest"    // management API, socket.io channel, console (19023)
	ListenerHTTP   = "http"    // client API over HTTP (8080)
	ListenerHTTPS  = "https"   // client API over mutual TLS (8443)
	ListenerCoTTCP = "cot-tcp" // CoT streaming over TCP (8087)
	ListenerCoTTLS = "cot-tls" // CoT streaming over mutual TLS (8089)
	ListenerEnroll = "enroll"  // certificate enrollment (8446)
)
