// Package config owns Outpost's configuration: the Config struct, made of
// sections, one for each part of the server an operator sets up (server,
// listeners, the CoT relay, storage, missions, the management API, geo,
// federation, the field mesh, memory, certificates, secrets), each with its
// defaults and a Validate whose messages name the offending key; loading
// from a YAML file, OUTPOST_* environment variables and command-line flags
// (flags win over the environment, the environment over the file, the file
// over defaults) with flat keys; and the generated secrets persisted beside
// the data.
//
// It imports diskspace (its size-or-percentage values) and the leaves.
package config
