//go:build !windows

package service

import (
	"log/slog"

	"github.com/coreos/go-systemd/v22/journal"
)

// underJournald reports whether stderr is connected to the journal.
func underJournald() bool {
	ok, err := journal.StderrIsJournalStream()
	return err == nil && ok
}

// platformLogHandler: nothing special outside Windows.
func platformLogHandler(bool, *slog.HandlerOptions) slog.Handler { return nil }
