package config

import (
	"fmt"
	"path/filepath"
)

// Config is the whole configuration of one appliance, in sections. Each
// section is embedded, so its fields read as the Config's own
// (cfg.CoTPort), and each section validates its own keys. The zero value is
// not useful: start from Defaults (or Load) and call Validate.
//
// The sections come in the order Validate checks them; the keys of the
// file, the environment and the flags are flat (fields.go).
type Config struct {
	Server       // where the data lives, the address every listener binds to, the server's names
	Listeners    // the listener ports and who may reach the client API over HTTP
	Logging      // the log's format and level
	Timeouts     // how long the server waits for a client, a handshake, a write, a body, a shutdown
	Retention    // how long the CoT history and the audit records are kept
	Management   // the management API's login tokens, the socket.io channel, certificate offers
	Geo          // geo objects, emergencies, the geocoder, the offline basemap
	Storage      // uploads, the budgets of the tables clients grow, the disk reserve
	Limits       // what clients can cause: message size, connections, handshakes, password checks, history, reading
	Missions     // what one mission may hold and one address may write to mission logs
	Federation   // the federation listeners, federates, trust and the outbound queue
	FieldMesh    // the multicast mesh bridge and the unicast UDP input
	Memory       // the Go heap, the collector, and each client's queue
	Certificates // the certificate directory, its file names, the key type
	Secrets      // secrets generated on first run unless configured
	AllowLists   // who may call /Clients and use the local command-line interface
}

// Defaults returns the configuration used when nothing is configured.
// PublicHost and CertsPath are derived later by Finish when left empty.
func Defaults() Config {
	return Config{
		Server:       defaultServer(),
		Listeners:    defaultListeners(),
		Logging:      defaultLogging(),
		Timeouts:     defaultTimeouts(),
		Retention:    defaultRetention(),
		Management:   defaultManagement(),
		Geo:          defaultGeo(),
		Storage:      defaultStorage(),
		Limits:       defaultLimits(),
		Missions:     defaultMissions(),
		Federation:   defaultFederation(),
		FieldMesh:    defaultFieldMesh(),
		Memory:       defaultMemory(),
		Certificates: defaultCertificates(),
		Secrets:      Secrets{}, // no fixed defaults: generated on first run (EnsureSecrets)
		AllowLists:   defaultAllowLists(),
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
		&c.Server, &c.Listeners, &c.Logging, &c.Timeouts, &c.Retention, &c.Management, &c.Geo, &c.Storage,
		&c.Limits, &c.Missions, &c.Federation, &c.FieldMesh, &c.Memory, &c.Certificates, &c.Secrets, &c.AllowLists,
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
