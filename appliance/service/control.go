package service

import (
	"errors"
	"fmt"
	"log/slog"
)

// Controller installs, removes, starts, stops and queries the Outpost
// system service.
type Controller struct {
	// Executable is the absolute path of the binary the service runs.
	Executable string
	// Args follow the executable ("run", "--config", FILE, "--data-dir", DIR).
	Args []string
	// DataDir is the service's data directory (absolute). On Linux a
	// directory other than /var/lib/outpost is created for the service
	// user and made writable in the unit.
	DataDir string
	// Unit is the systemd unit to install on Linux (the shipped
	// systemd/outpost.service); its ExecStart is replaced (RenderUnit).
	Unit []byte
	// Root is the directory the systemd files are installed under (Linux
	// only; default "/"). Below another root nothing is started and the
	// unit is enabled offline (systemctl --root): for image builders and
	// tests.
	Root string
	// NoStart installs without starting the service.
	NoStart bool
	// Log receives warnings (default slog.Default()).
	Log *slog.Logger
}

func (c Controller) logger() *slog.Logger {
	if c.Log == nil {
		return slog.Default()
	}
	return c.Log
}

// State is what Status reports.
type State string

// States.
const (
	StateRunning      State = "running"
	StateStopped      State = "stopped"
	StateFailed       State = "failed"
	StateStarting     State = "starting"
	StateStopping     State = "stopping"
	StateNotInstalled State = "not installed"
	StateUnknown      State = "unknown"
)

// ErrNotInstalled: the service is not installed.
var ErrNotInstalled = errors.New("the outpost service is not installed")

// ErrUnsupported: this operating system has no service integration.
var ErrUnsupported = errors.New("service control is supported on Linux (systemd) and Windows only")

// Do runs one action by name: install, uninstall, start, stop or restart.
func (c Controller) Do(action string) error {
	switch action {
	case "install":
		return c.Install()
	case "uninstall":
		return c.Uninstall()
	case "start":
		return c.Start()
	case "stop":
		return c.Stop()
	case "restart":
		return c.Restart()
	}
	return fmt.Errorf("unknown service action %q (install, uninstall, start, stop, restart, status)", action)
}
