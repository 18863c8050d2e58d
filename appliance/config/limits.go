package config

import "fmt"

// Limits bound what clients can cause (hostile clients on the mesh;
// RELIABILITY.md): the size of a CoT message, connections and TLS
// handshakes, in total and per source address, password checks, what
// clients add to the CoT history, and how fast one connection is read.
// 0 means no limit where noted.
type Limits struct {
	MaxMessageBytes               int // maxMessageBytes: one CoT message larger than this disconnects its sender
	MaxConnections                int // maxConnections: per CoT listener
	MaxPendingHandshakes          int // maxPendingHandshakes: TLS handshakes in flight, all TLS listeners together
	MaxPendingHandshakesPerSource int // maxPendingHandshakesPerSource: TLS handshakes in flight from one address
	HTTPMaxConnections            int // httpMaxConnections: HTTP connections, all HTTP listeners together
	PasswordChecksPerSecond       int // passwordChecksPerSecond: password checks (PBKDF2) per second, whoever asks
	MaxConnectionsPerSource       int // maxConnectionsPerSource: CoT connections from one address, both CoT listeners together (0: none)
	HTTPMaxConnectionsPerSource   int // httpMaxConnectionsPerSource: HTTP connections from one address (0: none)
	HistoryMaxBytes               int // historyMaxBytes: cap of stored CoT history; the heaviest uid's oldest events go first (0: none)
	HistoryClientRate             int // historyClientRate: events per second one connection may add to history (0: none)
	HistoryClientBytes            int // historyClientBytes: bytes per second one connection may add to history (0: none)
	HistoryTotalRate              int // historyTotalRate: events per second all connections may add (0: none)
	HistoryTotalBytes             int // historyTotalBytes: bytes per second all connections may add (0: none)
	ClientEventsPerSecond         int // clientEventsPerSecond: CoT events one connection may send per second before it is paced (0: none)
	ClientBytesPerSecond          int // clientBytesPerSecond: CoT bytes one connection may send per second before it is paced (0: none)
}

func defaultLimits() Limits {
	return Limits{
		MaxMessageBytes:               64 << 10,
		MaxConnections:                4096,
		MaxPendingHandshakes:          1024,
		MaxPendingHandshakesPerSource: 16,
		HTTPMaxConnections:            1024,
		PasswordChecksPerSecond:       10,
		MaxConnectionsPerSource:       64,
		HTTPMaxConnectionsPerSource:   64,
		HistoryMaxBytes:               1 << 30,
		HistoryClientRate:             10,
		HistoryClientBytes:            64 << 10,
		HistoryTotalRate:              1000,
		HistoryTotalBytes:             4 << 20,
		ClientEventsPerSecond:         100,
		ClientBytesPerSecond:          1 << 20,
	}
}

// Validate checks maxMessageBytes, that the limits without a "no limit"
// are at least 1, and that none of the others is negative.
func (l Limits) Validate() error {
	if l.MaxMessageBytes < 1024 || l.MaxMessageBytes > 8<<20 {
		return keyErr("maxMessageBytes", "must be between 1 KiB and 8 MiB (events over 64 KiB are never relayed)")
	}
	for _, n := range []struct {
		key      string
		v, least int
	}{
		{"maxConnections", l.MaxConnections, 1}, {"maxPendingHandshakes", l.MaxPendingHandshakes, 1},
		{"maxPendingHandshakesPerSource", l.MaxPendingHandshakesPerSource, 1},
		{"httpMaxConnections", l.HTTPMaxConnections, 1}, {"passwordChecksPerSecond", l.PasswordChecksPerSecond, 1},
		{"maxConnectionsPerSource", l.MaxConnectionsPerSource, 0}, {"httpMaxConnectionsPerSource", l.HTTPMaxConnectionsPerSource, 0},
		{"historyMaxBytes", l.HistoryMaxBytes, 0}, {"historyClientRate", l.HistoryClientRate, 0},
		{"historyClientBytes", l.HistoryClientBytes, 0}, {"historyTotalRate", l.HistoryTotalRate, 0},
		{"historyTotalBytes", l.HistoryTotalBytes, 0},
		{"clientEventsPerSecond", l.ClientEventsPerSecond, 0}, {"clientBytesPerSecond", l.ClientBytesPerSecond, 0},
	} {
		if n.v < n.least {
			if n.least == 0 {
				return keyErr(n.key, "must not be negative (0 means no limit)")
			}
			return keyErr(n.key, fmt.Sprintf("must be at least %d", n.least))
		}
	}
	return nil
}
