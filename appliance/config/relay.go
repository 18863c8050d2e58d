package config

import "time"

// Relay is CoT streaming over the CoT listeners (cotPort, sslCotPort): how
// long a silent or a stuck client is kept, the largest message, how many
// clients connect, in total and per source address, how fast one client is
// read (RELIABILITY.md), and each client's queue (architecture.md "Queues
// and the slow-consumer policy"). 0 means no limit where noted.
type Relay struct {
	CoTIdleTimeout          time.Duration // cotIdleTimeout: a TCP CoT client silent this long is closed
	SSLSockTimeout          time.Duration // SSL_SOCK_TIMEOUT: same for TLS clients (api.md §8)
	WriteTimeout            time.Duration // writeTimeout: a write blocked this long closes the client as a slow consumer
	MaxMessageBytes         int           // maxMessageBytes: one CoT message larger than this disconnects its sender
	MaxConnections          int           // maxConnections: per CoT listener
	MaxConnectionsPerSource int           // maxConnectionsPerSource: CoT connections from one address, both CoT listeners together (0: none)
	ClientEventsPerSecond   int           // clientEventsPerSecond: CoT events one connection may send per second before it is paced (0: none)
	ClientBytesPerSecond    int           // clientBytesPerSecond: CoT bytes one connection may send per second before it is paced (0: none)
	QueueSoftBytes          int           // queueSoftBytes: above this, position reports are coalesced per uid
	QueueHardBytes          int           // queueHardBytes: above this, the client is closed as a slow consumer
}

func defaultRelay() Relay {
	return Relay{
		CoTIdleTimeout:          60 * time.Second,
		SSLSockTimeout:          60 * time.Second,
		WriteTimeout:            15 * time.Second,
		MaxMessageBytes:         64 << 10,
		MaxConnections:          4096,
		MaxConnectionsPerSource: 64,
		ClientEventsPerSecond:   100,
		ClientBytesPerSecond:    1 << 20,
		QueueSoftBytes:          1 << 20,
		QueueHardBytes:          16 << 20,
	}
}

// Validate checks that the timeouts are positive, maxMessageBytes, that
// maxConnections is at least 1 and the other limits not negative, and the
// queue sizes (the hard one above the soft one).
func (r Relay) Validate() error {
	if err := checkPositive(
		durationKey{"cotIdleTimeout", r.CoTIdleTimeout}, durationKey{"SSL_SOCK_TIMEOUT", r.SSLSockTimeout},
		durationKey{"writeTimeout", r.WriteTimeout},
	); err != nil {
		return err
	}
	if r.MaxMessageBytes < 1024 || r.MaxMessageBytes > 8<<20 {
		return keyErr("maxMessageBytes", "must be between 1 KiB and 8 MiB (events over 64 KiB are never relayed)")
	}
	if err := checkLimits(
		limitKey{"maxConnections", r.MaxConnections, 1},
		limitKey{"maxConnectionsPerSource", r.MaxConnectionsPerSource, 0},
		limitKey{"clientEventsPerSecond", r.ClientEventsPerSecond, 0},
		limitKey{"clientBytesPerSecond", r.ClientBytesPerSecond, 0},
	); err != nil {
		return err
	}
	if r.QueueSoftBytes < 4096 {
		return keyErr("queueSoftBytes", "must be at least 4096")
	}
	if r.QueueHardBytes <= r.QueueSoftBytes {
		return keyErr("queueHardBytes", "must be larger than queueSoftBytes")
	}
	return nil
}
