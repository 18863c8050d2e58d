package config

import (
	"fmt"
	"path/filepath"
	"time"
)

// Config is the whole configuration of one appliance, in sections, one
// for each part of the server an operator sets up. Each section is
// embedded, so its fields read as the Config's own (cfg.CoTPort), and each
// section validates its own keys. The zero value is not useful: start from
// Defaults (or Load) and call Validate.
//
// The sections come in the order Validate checks them; the keys of the
// file, the environment and the flags are flat (fields.go).
type Config struct {
	Server       // where the data lives, the address every listener binds to, the server's names, the log, the shutdown
	Listeners    // the listener ports, who may reach the client API over HTTP, what the listeners admit
	Relay        // CoT streaming: idle and write timeouts, message size, connections, each client's pace and queue
	Storage      // the CoT history, uploads, the budgets of the tables clients grow, audit records, the disk reserve
	Missions     // what one mission may hold and one address may write to mission logs
	Management   // the management API's login tokens, the socket.io channel, certificate offers, allow-lists
	Geo          // geo objects, emergencies, the geocoder, the offline basemap
	Federation   // the federation listeners, federates, trust and the outbound queue
	FieldMesh    // the multicast mesh bridge and the unicast UDP input
	Memory       // the Go heap and the collector
	Certificates // the certificate directory, its file names, the key type
	Secrets      // secrets generated on first run unless configured
}

// Defaults returns the configuration used when nothing is configured.
// PublicHost and CertsPath are derived later by Finish when left empty.
func Defaults() Config {
	return Config{
		Server:       defaultServer(),
		Listeners:    defaultListeners(),
		Relay:        defaultRelay(),
		Storage:      defaultStorage(),
		Missions:     defaultMissions(),
		Management:   defaultManagement(),
		Geo:          defaultGeo(),
		Federation:   defaultFederation(),
		FieldMesh:    defaultFieldMesh(),
		Memory:       defaultMemory(),
		Certificates: defaultCertificates(),
		Secrets:      Secrets{}, // no fixed defaults: generated on first run (EnsureSecrets)
	}
}

// Finish fills the values derived from others: CertsPath (default
// <DataDir>/certs) and PublicHost (default: the first non-loopback address).
func (c *Config) Finish() {
	if c.CertsPath == "" && c.DataDir != "" {
		c.CertsPath = filepath.Join(c.DataDir, "certs")
	}
	if c.PublicHost == "" {
		c.PublicHost = DetectPublicHost()
	}
}

// section is one part of the configuration that checks its own keys.
type section interface{ Validate() error }

// sections lists the Config's sections in the order Validate checks them.
func (c *Config) sections() []section {
	return []section{
		&c.Server, &c.Listeners, &c.Relay, &c.Storage, &c.Missions, &c.Management,
		&c.Geo, &c.Federation, &c.FieldMesh, &c.Memory, &c.Certificates, &c.Secrets,
	}
}

// Validate checks every value and returns an error naming the first bad
// key: each section in turn, each checking its keys in its own order. No
// rule spans two sections.
func (c *Config) Validate() error {
	for _, s := range c.sections() {
		if err := s.Validate(); err != nil {
			return err
		}
	}
	return nil
}

// Error is a configuration error that names its key.
type Error struct {
	Key string
	Msg string
}

func (e *Error) Error() string { return fmt.Sprintf("config %s: %s", e.Key, e.Msg) }

func keyErr(key, msg string) error { return &Error{Key: key, Msg: msg} }

// portErr is the error of a port key whose value is not a port.
func portErr(key string, v int) error {
	return keyErr(key, fmt.Sprintf("%d is not a port (use 1-65535, 0 for any free port, -1 to disable)", v))
}

// durationKey is a duration key and its value.
type durationKey struct {
	key string
	v   time.Duration
}

// checkPositive reports the first key whose duration is not positive.
func checkPositive(ds ...durationKey) error {
	for _, d := range ds {
		if d.v <= 0 {
			return keyErr(d.key, "must be a positive duration")
		}
	}
	return nil
}

// limitKey is a limit key, its value and the least value it may take: 1
// for a limit that must exist, 0 where 0 means no limit.
type limitKey struct {
	key      string
	v, least int
}

// checkLimits reports the first key whose value is below its least.
func checkLimits(ls ...limitKey) error {
	for _, l := range ls {
		if l.v < l.least {
			if l.least == 0 {
				return keyErr(l.key, "must not be negative (0 means no limit)")
			}
			return keyErr(l.key, fmt.Sprintf("must be at least %d", l.least))
		}
	}
	return nil
}
