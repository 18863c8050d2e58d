package config

import (
	"fmt"
	"time"
)

// Listeners are the TCP listeners (architecture.md "The five listeners",
// and enrollment's): their ports, who may reach the client API over HTTP,
// and what they admit from the network, in total and per source address
// (RELIABILITY.md): TLS handshakes, HTTP connections and bodies, password
// checks. (The CoT listeners' own connections are the Relay's.) A port of
// -1 disables its listener, 0 picks a free port (and logs it).
type Listeners struct {
	RESTPort   int // restPort: management API, socket.io channel, console
	HTTPPort   int // httpPort: client API over HTTP
	HTTPSPort  int // httpsPort: client API over mutual TLS
	CoTPort    int // cotPort: CoT streaming over TCP
	SSLCoTPort int // sslCotPort: CoT streaming over mutual TLS
	EnrollPort int // enrollPort: certificate enrollment over TLS with HTTP Basic auth
	// HTTPAccess limits the client API over HTTP (httpPort), which has no
	// authentication (docs/access.md "The listeners"): HTTPAccessOpen,
	// HTTPAccessLoopback (bound to 127.0.0.1 only) or HTTPAccessOff.
	HTTPAccess string // httpAccess

	SSLHandshakeTimeout           time.Duration // WRAP_SSL_TIMEOUT: maximum TLS handshake time (api.md §8)
	MaxPendingHandshakes          int           // maxPendingHandshakes: TLS handshakes in flight, all TLS listeners together
	MaxPendingHandshakesPerSource int           // maxPendingHandshakesPerSource: TLS handshakes in flight from one address
	HTTPBodyTimeout               time.Duration // httpBodyTimeout: a request body that sends nothing this long is cut off
	HTTPMaxConnections            int           // httpMaxConnections: HTTP connections, all HTTP listeners together
	HTTPMaxConnectionsPerSource   int           // httpMaxConnectionsPerSource: HTTP connections from one address (0: none)
	// passwordChecksPerSecond: password checks (PBKDF2) per second, whoever asks, on any listener
	// (management login, enrollment, mission passwords; docs/access.md)
	PasswordChecksPerSecond int
}

func defaultListeners() Listeners {
	return Listeners{
		RESTPort: 19023, HTTPPort: 8080, HTTPSPort: 8443, CoTPort: 8087, SSLCoTPort: 8089, EnrollPort: 8446,
		HTTPAccess: HTTPAccessOpen,

		SSLHandshakeTimeout:           time.Second,
		MaxPendingHandshakes:          1024,
		MaxPendingHandshakesPerSource: 16,
		HTTPBodyTimeout:               30 * time.Second,
		HTTPMaxConnections:            1024,
		HTTPMaxConnectionsPerSource:   64,
		PasswordChecksPerSecond:       10,
	}
}

// The values of httpAccess.
const (
	HTTPAccessOpen     = "open"     // bound like every listener (bind)
	HTTPAccessLoopback = "loopback" // bound to 127.0.0.1: this machine's clients only
	HTTPAccessOff      = "off"      // not served, whatever httpPort says
)

type portKey struct {
	key   string
	value int
}

func (l Listeners) ports() []portKey {
	return []portKey{
		{"restPort", l.RESTPort}, {"httpPort", l.HTTPPort}, {"httpsPort", l.HTTPSPort},
		{"cotPort", l.CoTPort}, {"sslCotPort", l.SSLCoTPort}, {"enrollPort", l.EnrollPort},
	}
}

// Validate checks each port, that no two listeners share one, httpAccess,
// the timeouts, and that the limits without a "no limit" are at least 1
// and the others not negative.
func (l Listeners) Validate() error {
	if err := l.checkPorts(); err != nil {
		return err
	}
	switch l.HTTPAccess {
	case HTTPAccessOpen, HTTPAccessLoopback, HTTPAccessOff:
	default:
		return keyErr("httpAccess", fmt.Sprintf("%q is not open, loopback or off", l.HTTPAccess))
	}
	if err := checkPositive(
		durationKey{"WRAP_SSL_TIMEOUT", l.SSLHandshakeTimeout}, durationKey{"httpBodyTimeout", l.HTTPBodyTimeout},
	); err != nil {
		return err
	}
	return checkLimits(
		limitKey{"maxPendingHandshakes", l.MaxPendingHandshakes, 1},
		limitKey{"maxPendingHandshakesPerSource", l.MaxPendingHandshakesPerSource, 1},
		limitKey{"httpMaxConnections", l.HTTPMaxConnections, 1},
		limitKey{"httpMaxConnectionsPerSource", l.HTTPMaxConnectionsPerSource, 0},
		limitKey{"passwordChecksPerSecond", l.PasswordChecksPerSecond, 1},
	)
}

// checkPorts checks each port and that no two listeners share one.
func (l Listeners) checkPorts() error {
	seen := map[int]string{}
	for _, p := range l.ports() {
		if p.value < -1 || p.value > 65535 {
			return portErr(p.key, p.value)
		}
		if p.value > 0 {
			if other, dup := seen[p.value]; dup {
				return keyErr(p.key, fmt.Sprintf("port %d is already used by %s", p.value, other))
			}
			seen[p.value] = p.key
		}
	}
	return nil
}

// HTTPListen is where the client API over HTTP listens once httpAccess is
// applied: the address to bind and the port (-1: not served).
func (c *Config) HTTPListen() (host string, port int) {
	switch c.HTTPAccess {
	case HTTPAccessOff:
		return c.Bind, -1
	case HTTPAccessLoopback:
		return "127.0.0.1", c.HTTPPort
	}
	return c.Bind, c.HTTPPort
}
