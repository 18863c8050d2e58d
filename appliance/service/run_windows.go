//go:build windows

package service

import (
	"context"
	"sync"

	kservice "github.com/kardianos/service"
	"golang.org/x/sys/windows/svc"
)

// Run runs the daemon. Started by the Windows service control manager it
// runs as the service (kardianos/service): the manager sees StartPending
// until every listener is bound (Open returned), then Running; a stop or
// shutdown request closes the appliance in order within the shutdown
// timeout before the manager sees Stopped. Started from a console it runs
// in the foreground until Ctrl-C (or ctx ends). Errors wrap ErrStart or
// ErrShutdown.
func Run(ctx context.Context, d Daemon) error {
	isService, err := svc.IsWindowsService()
	if err != nil || !isService {
		return runForeground(ctx, d)
	}
	p := &program{d: d}
	s, err := kservice.New(p, &kservice.Config{Name: Name})
	if err != nil {
		return err
	}
	d.logger().Info("running under the Windows service manager", "service", Name)
	if err := s.Run(); err != nil {
		p.mu.Lock()
		defer p.mu.Unlock()
		if p.err != nil {
			return p.err // ErrStart or ErrShutdown, with its cause
		}
		return err
	}
	return nil
}

// program adapts Daemon to kardianos/service's Interface.
type program struct {
	d Daemon

	mu  sync.Mutex // guards err
	err error      // the first error of Start or Stop
}

func (p *program) keep(err error) error {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.err == nil {
		p.err = err
	}
	return err
}

// Start blocks until the appliance is open: kardianos reports Running to
// the service manager only when Start returns.
func (p *program) Start(kservice.Service) error {
	return p.keep(p.d.open(context.Background()))
}

// Stop closes the appliance in order; the manager sees StopPending until
// it returns.
func (p *program) Stop(kservice.Service) error {
	p.d.logger().Info("service stop requested")
	return p.keep(p.d.close())
}
