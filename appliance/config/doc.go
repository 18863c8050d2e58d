// Package config owns Outpost's configuration: the Config struct, its
// defaults, loading from a YAML file, OUTPOST_* environment variables and
// command-line flags (flags win over the environment, the environment over
// the file, the file over defaults), validation with messages that name the
// offending key, and the generated secrets persisted beside the data.
//
// It imports no other package of this module.
package config
