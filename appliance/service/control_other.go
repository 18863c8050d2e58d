//go:build !linux && !windows

package service

// DefaultDataDir is where the service keeps its data unless told otherwise.
func DefaultDataDir() string { return packagedDataDir }

func (c Controller) Install() error         { return ErrUnsupported }
func (c Controller) Uninstall() error       { return ErrUnsupported }
func (c Controller) Start() error           { return ErrUnsupported }
func (c Controller) Stop() error            { return ErrUnsupported }
func (c Controller) Restart() error         { return ErrUnsupported }
func (c Controller) Status() (State, error) { return StateUnknown, ErrUnsupported }
