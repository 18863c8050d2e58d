package config

import (
	"fmt"
	"time"
)

// Management is the management API's (api.md §5): its login tokens, the
// socket.io channel (docs/socketio.md) and the certificate packages offered
// to new users' clients.
type Management struct {
	LoginTokenLifetime time.Duration // loginTokenLifetime: validity of a token from POST /api/login
	// The socket.io channel: a socket that has not authenticated with
	// websocketkey this long after its handshake is closed; one address may
	// hold this many such sockets at once (the channel has 32;
	// authenticated sockets do not count).
	ChannelAuthTimeout              time.Duration // channelAuthTimeout
	ChannelUnauthenticatedPerSource int           // channelUnauthenticatedPerSource
	// certOfferWait: how long the certificate package of a user created
	// with Certs "true" waits for a client with the user's callsign, which
	// is then sent it (docs/api-management.md); 0: never sent.
	CertOfferWait time.Duration
}

// MaxChannelUnauthenticatedPerSource is the largest
// channelUnauthenticatedPerSource: half of the socket.io channel's 32
// sockets (mgmt.DefaultChannelSockets), so that no address can hold them
// all before authenticating.
const MaxChannelUnauthenticatedPerSource = 16

func defaultManagement() Management {
	return Management{
		LoginTokenLifetime:              12 * time.Hour,
		ChannelAuthTimeout:              10 * time.Second,
		ChannelUnauthenticatedPerSource: 4,
		CertOfferWait:                   0, // off: a callsign proves nothing (api-management.md)
	}
}

// Validate checks loginTokenLifetime, the channel's keys and certOfferWait.
func (m Management) Validate() error {
	if m.LoginTokenLifetime < time.Second || m.LoginTokenLifetime > 366*24*time.Hour {
		return keyErr("loginTokenLifetime", "must be between 1s and 366d")
	}
	if m.ChannelAuthTimeout < 100*time.Millisecond || m.ChannelAuthTimeout > time.Minute {
		return keyErr("channelAuthTimeout", "must be between 100ms and 1m")
	}
	if m.ChannelUnauthenticatedPerSource < 1 || m.ChannelUnauthenticatedPerSource > MaxChannelUnauthenticatedPerSource {
		return keyErr("channelUnauthenticatedPerSource", fmt.Sprintf(
			"must be between 1 and %d: the channel has 32 sockets, and one address must never hold them all", MaxChannelUnauthenticatedPerSource))
	}
	if m.CertOfferWait < 0 || m.CertOfferWait > 7*24*time.Hour {
		return keyErr("certOfferWait", "must be between 0 (never sent) and 7d")
	}
	return nil
}
