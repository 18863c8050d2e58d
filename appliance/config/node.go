package config

import (
	"crypto/sha256"
	"encoding/hex"
)

// NodeID derives this server's stable node identifier from its secret key
// (one-way, so the identifier reveals nothing of the key).
func NodeID(secretKey string) string {
	sum := sha256.Sum256([]byte("outpost node id\x00" + secretKey))
	return hex.EncodeToString(sum[:16])
}

// ServerUID is the uid of the events this server sends itself (pongs, the
// negotiation reply, departures) and its id in federation's provenance.
func ServerUID(secretKey string) string { return "outpost-" + NodeID(secretKey) }
