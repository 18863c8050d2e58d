//go:build windows

package service

import (
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"time"

	kservice "github.com/kardianos/service"
	"golang.org/x/sys/windows"
	"golang.org/x/sys/windows/svc/eventlog"
	"golang.org/x/sys/windows/svc/mgr"
)

// On Windows the controller registers the service itself (x/sys mgr:
// CreateService, three restart recovery actions, the Event Log source) and
// uses kardianos/service to start, stop, query and remove it.

const (
	displayName = "Outpost TAK server"
	description = "Relays Cursor-on-Target between ATAK, WinTAK and iTAK clients and serves their HTTP APIs."
)

// restartDelays are the recovery actions: restart after 5 s, then 10 s,
// then 30 s for every further failure; the failure count resets after a
// day without failures.
var restartDelays = []time.Duration{5 * time.Second, 10 * time.Second, 30 * time.Second}

const failureResetPeriod = 24 * 60 * 60 // seconds

// DefaultDataDir is where the service keeps its data unless told
// otherwise: %ProgramData%\Outpost.
func DefaultDataDir() string {
	pd := os.Getenv("ProgramData")
	if pd == "" {
		pd = `C:\ProgramData`
	}
	return filepath.Join(pd, "Outpost")
}

// noProgram satisfies kardianos' Interface for control actions (the
// service process itself runs through Run).
type noProgram struct{}

func (noProgram) Start(kservice.Service) error { return nil }
func (noProgram) Stop(kservice.Service) error  { return nil }

func (c Controller) kservice() (kservice.Service, error) {
	return kservice.New(noProgram{}, &kservice.Config{
		Name:        Name,
		DisplayName: displayName,
		Description: description,
		Executable:  c.Executable,
		Arguments:   c.Args,
	})
}

// Install registers the service (automatic start, restart on failure, an
// Event Log source) and starts it unless NoStart. The registration is done
// here rather than by kardianos' Install, so the recovery actions are set
// on the handle CreateService returned.
func (c Controller) Install() error {
	if !filepath.IsAbs(c.Executable) {
		return fmt.Errorf("executable %q is not an absolute path", c.Executable)
	}
	m, err := mgr.Connect()
	if err != nil {
		return fmt.Errorf("service manager: %w", err)
	}
	defer m.Disconnect()
	if s, err := m.OpenService(Name); err == nil {
		s.Close()
		return fmt.Errorf("the %s service is installed already (uninstall it first)", Name)
	}
	s, err := m.CreateService(Name, c.Executable, mgr.Config{
		DisplayName: displayName,
		Description: description,
		StartType:   mgr.StartAutomatic,
	}, c.Args...)
	if err != nil {
		return fmt.Errorf("install service: %w", err)
	}
	defer s.Close()
	if err := setRecovery(s, c.logger()); err != nil {
		s.Delete()
		return err
	}
	if err := eventlog.InstallAsEventCreate(Name, eventlog.Error|eventlog.Warning|eventlog.Info); err != nil &&
		!strings.Contains(err.Error(), "exists") {
		s.Delete()
		return fmt.Errorf("register the Event Log source: %w", err)
	}
	if c.NoStart {
		return nil
	}
	if err := s.Start(); err != nil {
		return fmt.Errorf("start service: %w", err)
	}
	return nil
}

// setRecovery makes the service manager restart the service after every
// failure, including an exit with an error code (not only a crash).
func setRecovery(s *mgr.Service, log *slog.Logger) error {
	actions := make([]mgr.RecoveryAction, len(restartDelays))
	for i, d := range restartDelays {
		actions[i] = mgr.RecoveryAction{Type: mgr.ServiceRestart, Delay: d}
	}
	if err := s.SetRecoveryActions(actions, failureResetPeriod); err != nil {
		return fmt.Errorf("set recovery actions: %w", err)
	}
	if err := s.SetRecoveryActionsOnNonCrashFailures(true); errors.Is(err, windows.ERROR_INVALID_LEVEL) {
		// Older service managers (and Wine) lack this setting: crashes
		// still restart the service, error exits do not.
		log.Warn("this service manager cannot restart the service after an error exit, only after a crash", "err", err)
	} else if err != nil {
		return fmt.Errorf("set recovery on error exits: %w", err)
	}
	return nil
}

// Uninstall stops the service when it runs and removes it. The
// configuration and the data stay.
func (c Controller) Uninstall() error {
	s, err := c.kservice()
	if err != nil {
		return err
	}
	st, err := s.Status()
	if errors.Is(err, kservice.ErrNotInstalled) {
		return ErrNotInstalled
	}
	if err == nil && st == kservice.StatusRunning {
		if err := s.Stop(); err != nil {
			return fmt.Errorf("stop service: %w", err)
		}
	}
	if err := s.Uninstall(); err != nil {
		return fmt.Errorf("remove service: %w", err)
	}
	return nil
}

func (c Controller) action(f func(kservice.Service) error, verb string) error {
	s, err := c.kservice()
	if err != nil {
		return err
	}
	if _, err := s.Status(); errors.Is(err, kservice.ErrNotInstalled) {
		return ErrNotInstalled
	}
	if err := f(s); err != nil {
		return fmt.Errorf("%s service: %w", verb, err)
	}
	return nil
}

// Start starts the service.
func (c Controller) Start() error { return c.action(kservice.Service.Start, "start") }

// Stop stops the service and waits until it has shut down.
func (c Controller) Stop() error { return c.action(kservice.Service.Stop, "stop") }

// Restart stops and starts the service.
func (c Controller) Restart() error { return c.action(kservice.Service.Restart, "restart") }

// Status reports the service's state.
func (c Controller) Status() (State, error) {
	s, err := c.kservice()
	if err != nil {
		return StateUnknown, err
	}
	st, err := s.Status()
	switch {
	case errors.Is(err, kservice.ErrNotInstalled):
		return StateNotInstalled, nil
	case err != nil:
		return StateUnknown, err
	case st == kservice.StatusRunning:
		return StateRunning, nil
	case st == kservice.StatusStopped:
		return StateStopped, nil
	}
	return StateUnknown, nil
}
