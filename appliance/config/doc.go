// Package config owns Outpost's configuration: the Config struct, made of
// sections that each validate their own keys (server, listeners, logging,
// timeouts, retention, management, geo, storage, limits, missions,
// federation, the field mesh, memory, certificates, secrets, allow-lists),
// its defaults, loading from a YAML file, OUTPOST_* environment variables and
// command-line flags (flags win over the environment, the environment over
// the file, the file over defaults) with flat keys, validation with messages
// that name the offending key, and the generated secrets persisted beside
// the data.
//
// It imports diskspace (its size-or-percentage values) and the leaves.
package config
