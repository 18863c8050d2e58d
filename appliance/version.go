package appliance

import "runtime/debug"

// Set at build time with -ldflags "-X outpost/appliance.version=... -X outpost/appliance.commit=...".
var (
	version = "0.1.0-dev"
	commit  = ""
)

// Version is the release version of this build.
func Version() string { return version }

// Commit is the source revision of this build: stamped by the Makefile, or
// read from the Go build information when built from a checkout.
func Commit() string {
	if commit != "" {
		return commit
	}
	if bi, ok := debug.ReadBuildInfo(); ok {
		rev, dirty := "", false
		for _, s := range bi.Settings {
			switch s.Key {
			case "vcs.revision":
				rev = s.Value
			case "vcs.modified":
				dirty = s.Value == "true"
			}
		}
		if len(rev) > 12 {
			rev = rev[:12]
		}
		if rev != "" && dirty {
			rev += "-dirty"
		}
		if rev != "" {
			return rev
		}
	}
	return "unknown"
}
