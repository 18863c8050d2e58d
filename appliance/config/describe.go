package config

import (
	"strconv"
	"strings"
	"time"

	"outpost/appliance/diskspace"
)

// KeyInfo describes one configuration key: what `outpost config` lists and
// docs/configuration.md "Every key" holds.
type KeyInfo struct {
	Key, Env, Flag, Usage string
	// Default is the default as it would be written in the file ("" when
	// empty); DefaultNote, when set, says in words what the default is
	// instead (derived from another key, or generated). A secret's value is
	// never read: its Default is always "".
	Default, DefaultNote string
	Secret               bool
}

// Describe lists every key with its environment variable, flag, default and
// meaning, in the order of `outpost run -h`. Secrets are marked, never
// printed.
func Describe() []KeyInfo {
	def := Defaults()
	out := make([]KeyInfo, 0, len(fields))
	for _, fd := range fields {
		k := KeyInfo{Key: fd.key, Env: fd.env, Flag: fd.flag, Usage: fd.usage, Secret: fd.secret}
		k.Default, k.DefaultNote = fd.defaultText(&def)
		out = append(out, k)
	}
	return out
}

// defaultText is the field's default in def: as it would be written in the
// file, or in words when it is derived or generated. A secret's value is
// never read.
func (f field) defaultText(def *Config) (value, note string) {
	switch {
	case defaultNotes[f.key] != "":
		return "", defaultNotes[f.key]
	case derivedDefaults[f.key] != "":
		return derivedDefaults[f.key], ""
	case f.secret:
		return "", ""
	}
	return f.format(def), ""
}

// derivedDefaults are the defaults filled in from other keys when a key is
// left empty (Finish, and the certificate authority's file names).
var derivedDefaults = map[string]string{
	"certsPath":      "<dataDir>/certs",
	"keyDir":         "<certsPath>/server.key",
	"pemDir":         "<certsPath>/server.pem",
	"unencryptedKey": "<certsPath>/server.key.unencrypted",
	"p12Dir":         "<certsPath>/server.p12",
	"CA":             "<certsPath>/ca.pem",
	"CAkey":          "<certsPath>/ca.key",
	"CRLFile":        "<certsPath>/crl.json",
	"ClientPackages": "<certsPath>/clientpackages",
	"federationName": "<serverName>",
}

// defaultNotes say in words what an empty key means.
var defaultNotes = map[string]string{
	"publicHost":            "the first non-loopback address",
	"SecretKey":             "generated on first run (secrets.yaml)",
	"websocketkey":          "generated on first run (secrets.yaml)",
	"password":              "generated on first run (secrets.yaml)",
	"federationKeyPassword": "none",
	"federationCert":        "the server certificate",
	"federationKey":         "the server key",
}

// format writes the field's value in c the way the file would: sizes with
// a KiB/MiB/GiB suffix when whole, durations in the largest whole unit
// (7d, 12h, 5m, 10s), lists separated by ", ".
func (f field) format(c *Config) string {
	switch p := f.ptr(c).(type) {
	case *string:
		return *p
	case *int:
		return f.formatInt(int64(*p))
	case *int64:
		return f.formatInt(*p)
	case *time.Duration:
		return formatDuration(*p)
	case *[]string:
		return strings.Join(*p, ", ")
	case *diskspace.Amount:
		return p.String()
	}
	return ""
}

// isSize reports whether the key is a number of bytes.
func (f field) isSize() bool {
	return strings.Contains(f.key, "Bytes") || f.key == "memoryLimit" || f.key == "meshMaxDatagram"
}

func (f field) formatInt(n int64) string {
	if f.isSize() && n != 0 {
		for _, u := range []struct {
			suffix string
			m      int64
		}{{"GiB", 1 << 30}, {"MiB", 1 << 20}, {"KiB", 1 << 10}} {
			if n%u.m == 0 {
				return strconv.FormatInt(n/u.m, 10) + u.suffix
			}
		}
	}
	return strconv.FormatInt(n, 10)
}

// formatDuration writes d in the largest unit that divides it, as
// ParseDuration reads it back.
func formatDuration(d time.Duration) string {
	if d == 0 {
		return "0"
	}
	for _, u := range []struct {
		suffix string
		d      time.Duration
	}{{"d", 24 * time.Hour}, {"h", time.Hour}, {"m", time.Minute}, {"s", time.Second}, {"ms", time.Millisecond}} {
		if d%u.d == 0 {
			return strconv.FormatInt(int64(d/u.d), 10) + u.suffix
		}
	}
	return d.String()
}
