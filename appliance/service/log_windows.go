//go:build windows

package service

import (
	"log/slog"
	"strings"

	"golang.org/x/sys/windows/svc/eventlog"
)

func underJournald() bool { return false }

// Event identifiers of our Event Log entries, by level.
const (
	eventInfo    = 1
	eventWarning = 2
	eventError   = 3
)

// platformLogHandler sends records to the Windows Event Log when the
// process runs as a service (it has no console then). The event source is
// registered by `outpost service install`; when the log cannot be opened
// the caller falls back to stderr.
func platformLogHandler(json bool, opts *slog.HandlerOptions) slog.Handler {
	if !isService() {
		return nil
	}
	el, err := eventlog.Open(Name)
	if err != nil {
		return nil
	}
	return newLineHandler(json, withoutTime(opts), func(level slog.Level, line []byte) {
		msg := strings.TrimRight(string(line), "\r\n")
		switch {
		case level >= slog.LevelError:
			el.Error(eventError, msg)
		case level >= slog.LevelWarn:
			el.Warning(eventWarning, msg)
		default:
			el.Info(eventInfo, msg)
		}
	})
}
