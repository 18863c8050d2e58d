//go:build windows

package service

import (
	"context"
	"strings"
	"time"
	"unsafe"

	"golang.org/x/sys/windows"
	"golang.org/x/sys/windows/svc"
)

// Run runs the daemon. Started by the Windows service control manager it
// runs as the service: the manager sees StartPending until every listener
// is bound (Open returned), then Running; a stop or shutdown request
// closes the appliance in order within the shutdown timeout, and the
// manager sees Stopped only after that. Started from a console it runs in
// the foreground until Ctrl-C (or ctx ends). Errors wrap ErrStart or
// ErrShutdown.
//
// kardianos/service installs and controls the service (control_windows.go);
// the running side uses golang.org/x/sys/windows/svc directly, which
// kardianos wraps, to report progress (checkpoints and wait hints) while
// opening and closing, and to recognise a service under Wine (see
// isService).
func Run(ctx context.Context, d Daemon) error {
	if !isService() {
		return runForeground(ctx, d)
	}
	h := &handler{d: d}
	d.logger().Info("running under the Windows service manager", "service", Name)
	if err := svc.Run(Name, h); err != nil {
		return err
	}
	return h.err
}

// handler is the service's control handler.
type handler struct {
	d   Daemon
	err error // the error of Open or Close; read after svc.Run returns
}

// Service-specific exit codes reported to the manager; any of them counts
// as a failure for the recovery actions.
const (
	exitStartFailed    = 1
	exitShutdownFailed = 2
)

const accepted = svc.AcceptStop | svc.AcceptShutdown

func (h *handler) Execute(_ []string, requests <-chan svc.ChangeRequest, status chan<- svc.Status) (bool, uint32) {
	err := pending(status, svc.StartPending, 0, func() error { return h.d.open(context.Background()) })
	if err != nil {
		h.err = err
		return true, exitStartFailed
	}
	status <- svc.Status{State: svc.Running, Accepts: accepted}
	for req := range requests {
		switch req.Cmd {
		case svc.Interrogate:
			status <- req.CurrentStatus
		case svc.Stop, svc.Shutdown:
			h.d.logger().Info("service stop requested")
			if err := pending(status, svc.StopPending, accepted, h.d.close); err != nil {
				h.err = err
				return true, exitShutdownFailed
			}
			return false, 0
		}
	}
	return false, 0
}

// pending runs f while reporting state to the manager with a rising
// checkpoint every few seconds, so a slow start (migrations on a big
// database) or a slow orderly stop is not taken for a hung service.
func pending(status chan<- svc.Status, state svc.State, accepts svc.Accepted, f func() error) error {
	const hint = 30 * time.Second
	done := make(chan error, 1)
	go func() { done <- f() }()
	checkpoint := uint32(1)
	status <- svc.Status{State: state, Accepts: accepts, CheckPoint: checkpoint, WaitHint: uint32(hint / time.Millisecond)}
	t := time.NewTicker(5 * time.Second)
	defer t.Stop()
	for {
		select {
		case err := <-done:
			return err
		case <-t.C:
			checkpoint++
			status <- svc.Status{State: state, Accepts: accepts, CheckPoint: checkpoint, WaitHint: uint32(hint / time.Millisecond)}
		}
	}
}

// isService reports whether the service control manager started this
// process. svc.IsWindowsService requires the parent to be services.exe in
// session 0; Wine runs services.exe in session 1, so the parent's name
// alone is checked as well (only the manager's services.exe starts
// processes whose parent it is).
func isService() bool {
	if ok, err := svc.IsWindowsService(); err == nil && ok {
		return true
	}
	return parentImage() == "services.exe"
}

// parentImage is the lower-case image name of the parent process, or "".
func parentImage() string {
	var self windows.PROCESS_BASIC_INFORMATION
	size := uint32(unsafe.Sizeof(self))
	if err := windows.NtQueryInformationProcess(windows.CurrentProcess(), windows.ProcessBasicInformation,
		unsafe.Pointer(&self), size, &size); err != nil {
		return ""
	}
	snap, err := windows.CreateToolhelp32Snapshot(windows.TH32CS_SNAPPROCESS, 0)
	if err != nil {
		return ""
	}
	defer windows.CloseHandle(snap)
	var e windows.ProcessEntry32
	e.Size = uint32(unsafe.Sizeof(e))
	for err = windows.Process32First(snap, &e); err == nil; err = windows.Process32Next(snap, &e) {
		if uintptr(e.ProcessID) == self.InheritedFromUniqueProcessId {
			return strings.ToLower(windows.UTF16ToString(e.ExeFile[:]))
		}
	}
	return ""
}
