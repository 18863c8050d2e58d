// Package service integrates Outpost with the operating system:
//
//   - Run runs the server in the foreground or, on Windows, under the
//     service control manager (golang.org/x/sys/windows/svc): it applies the
//     memory limit, opens the appliance, reports readiness (systemd READY=1
//     through go-systemd, or the Windows Running state) only after every
//     listener is bound, pings the systemd watchdog while the health check
//     passes, and shuts down in order on SIGINT/SIGTERM or a service stop
//     request.
//   - LogHandler builds the slog handler for the process: plain text or
//     JSON on stderr; under journald, without the redundant timestamp and
//     with a syslog priority prefix; under the Windows service manager, the
//     Windows Event Log.
//   - Controller installs, removes, starts, stops and queries the system
//     service: our own systemd unit through systemctl on Linux; on Windows
//     a service with restart-on-failure recovery actions, registered with
//     x/sys mgr and controlled through kardianos/service.
//
// Only cmd/outpost imports it. It imports no other package of this module:
// the command passes the appliance in as callbacks (Daemon) and the unit
// text as bytes (Controller.Unit).
package service
