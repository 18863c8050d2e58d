package main

import (
	"errors"
	"flag"
	"fmt"
	"os"
	"path/filepath"

	"outpost/appliance/config"
	"outpost/appliance/service"
	"outpost/systemd"
)

// Exit status of `outpost service status` when the service is not running
// (the LSB "program is not running" code).
const exitNotRunning = 3

// setupService: `outpost service install|uninstall|start|stop|restart|status`.
func setupService(fs *flag.FlagSet) func(*cmdContext) int {
	root := fs.String("root", "/", "Linux: install the systemd files below this directory, enabled but not started (image builds)")
	noStart := fs.Bool("no-start", false, "install without starting the service")
	return func(c *cmdContext) int {
		if len(c.args) != 1 {
			fmt.Fprintln(c.stderr, "usage: outpost service install|uninstall|start|stop|restart|status [--config FILE] [--data-dir DIR]")
			return exitUsage
		}
		ctl, err := serviceController(c, fs, *root, *noStart)
		if err != nil {
			fmt.Fprintf(c.stderr, "outpost service: %v\n", err)
			return exitFailure
		}
		action := c.args[0]
		if action == "status" {
			st, err := ctl.Status()
			fmt.Fprintf(c.stdout, "outpost service: %s\n", st)
			if err != nil {
				fmt.Fprintf(c.stderr, "outpost service: %v\n", err)
			}
			if st != service.StateRunning {
				return exitNotRunning
			}
			return exitOK
		}
		if err := ctl.Do(action); err != nil {
			fmt.Fprintf(c.stderr, "outpost service %s: %v\n", action, err)
			if errors.Is(err, service.ErrUnsupported) {
				return exitUsage
			}
			return exitFailure
		}
		fmt.Fprintf(c.stdout, "outpost service %s: done\n", action)
		if action == "install" {
			fmt.Fprintf(c.stdout, "  runs: %s %q\n", ctl.Executable, ctl.Args)
			st, err := ctl.Status()
			if err != nil {
				fmt.Fprintf(c.stdout, "  state: %s (%v)\n", st, err)
			} else {
				fmt.Fprintf(c.stdout, "  state: %s\n", st)
			}
		}
		return exitOK
	}
}

// serviceController describes the service this binary would run: itself,
// `run` with the given configuration file and the data directory (the
// platform's default unless one was configured), all as absolute paths
// since a service does not start in the current directory.
func serviceController(c *cmdContext, fs *flag.FlagSet, root string, noStart bool) (service.Controller, error) {
	exe, err := os.Executable()
	if err != nil {
		return service.Controller{}, fmt.Errorf("locate this program: %w", err)
	}
	if exe, err = filepath.EvalSymlinks(exe); err != nil {
		return service.Controller{}, fmt.Errorf("locate this program: %w", err)
	}
	dataDir := c.cfg.DataDir
	if dataDir == config.Defaults().DataDir {
		dataDir = service.DefaultDataDir()
	}
	if dataDir, err = filepath.Abs(dataDir); err != nil {
		return service.Controller{}, err
	}
	args := []string{"run"}
	configFile := fs.Lookup("config").Value.String()
	if configFile == "" {
		configFile, _ = c.lookupEnv("OUTPOST_CONFIG")
	}
	if configFile != "" {
		if configFile, err = filepath.Abs(configFile); err != nil {
			return service.Controller{}, err
		}
		args = append(args, "--config", configFile)
	}
	args = append(args, "--data-dir", dataDir)
	return service.Controller{
		Executable: exe, Args: args, DataDir: dataDir,
		Unit: systemd.Unit, Root: root, NoStart: noStart, Log: c.log,
	}, nil
}
