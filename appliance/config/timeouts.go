package config

import "time"

// Timeouts are how long the server waits: for a silent CoT client, a TLS
// handshake, a blocked write, a silent request body, an orderly shutdown.
type Timeouts struct {
	CoTIdleTimeout      time.Duration // cotIdleTimeout: a TCP CoT client silent this long is closed
	SSLSockTimeout      time.Duration // SSL_SOCK_TIMEOUT: same for TLS clients (api.md §8)
	SSLHandshakeTimeout time.Duration // WRAP_SSL_TIMEOUT: maximum TLS handshake time (api.md §8)
	WriteTimeout        time.Duration // writeTimeout: a write blocked this long closes the client as a slow consumer
	ShutdownTimeout     time.Duration // shutdownTimeout: the whole orderly shutdown
	HTTPBodyTimeout     time.Duration // httpBodyTimeout: a request body that sends nothing this long is cut off
}

func defaultTimeouts() Timeouts {
	return Timeouts{
		CoTIdleTimeout:      60 * time.Second,
		SSLSockTimeout:      60 * time.Second,
		SSLHandshakeTimeout: time.Second,
		WriteTimeout:        15 * time.Second,
		ShutdownTimeout:     10 * time.Second,
		HTTPBodyTimeout:     30 * time.Second,
	}
}

// Validate checks that every timeout is positive.
func (t Timeouts) Validate() error {
	for _, d := range []struct {
		key string
		v   time.Duration
	}{
		{"cotIdleTimeout", t.CoTIdleTimeout}, {"SSL_SOCK_TIMEOUT", t.SSLSockTimeout},
		{"WRAP_SSL_TIMEOUT", t.SSLHandshakeTimeout}, {"writeTimeout", t.WriteTimeout},
		{"shutdownTimeout", t.ShutdownTimeout}, {"httpBodyTimeout", t.HTTPBodyTimeout},
	} {
		if d.v <= 0 {
			return keyErr(d.key, "must be a positive duration")
		}
	}
	return nil
}

// Retention is how long what the server records is kept.
type Retention struct {
	HistoryRetention time.Duration // historyRetention: how long relayed CoT is kept (0 keeps it forever)
	AuditRetention   time.Duration // auditRetention: how long audit records are kept (0 keeps them forever)
}

func defaultRetention() Retention {
	return Retention{HistoryRetention: 7 * 24 * time.Hour, AuditRetention: 90 * 24 * time.Hour}
}

// Validate checks that neither retention is negative.
func (r Retention) Validate() error {
	if r.HistoryRetention < 0 {
		return keyErr("historyRetention", "must not be negative (0 keeps history forever)")
	}
	if r.AuditRetention < 0 {
		return keyErr("auditRetention", "must not be negative (0 keeps audit records forever)")
	}
	return nil
}
