// Package netx is the connection intake shared by every listener of Outpost
// (architecture.md "The five listeners"): one accept loop per port, with an
// interruptible back-off on accept errors; per-source and total connection
// limits shared across listeners, so one host cannot take the file
// descriptors another listener needs; and, on TLS ports, every handshake in
// its own goroutine under the handshake timeout (api.md §8: WRAP_SSL_TIMEOUT)
// with its own per-source and total caps on handshakes in flight. What
// Accept returns is ready to use: a plain TCP connection, or a *tls.Conn
// whose handshake completed. Refusals and failures are counted by cause and
// logged at a bounded rate with every client-controlled value clipped.
// On Linux an accepted connection can also read nonblocking and be armed
// on a Waiter that reports it when input arrives (park.go), which is how
// the stream listeners hold an idle client without a goroutine.
//
// It also names the ports (names.go).
//
// Imports: logx only.
package netx
