//go:build linux

package service

import (
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"strconv"
	"strings"

	"outpost/appliance/atomicfile"
)

// On Linux the controller installs our own unit (systemd/outpost.service,
// rendered by RenderUnit) into /etc/systemd/system and drives it with
// systemctl. kardianos/service is not used here: it cannot install below
// another root, and on a machine where systemd is not PID 1 it would
// install a SysV script instead of our hardened unit.

const unitName = Name + ".service"

// DefaultDataDir is where the service keeps its data unless told otherwise:
// the unit's StateDirectory.
func DefaultDataDir() string { return packagedDataDir }

func (c Controller) root() string {
	if c.Root == "" {
		return "/"
	}
	return c.Root
}

// live reports whether systemd runs this machine's services: only then is
// anything started, stopped or reloaded.
func (c Controller) live() bool {
	if filepath.Clean(c.root()) != "/" {
		return false
	}
	st, err := os.Stat("/run/systemd/system")
	return err == nil && st.IsDir()
}

// unitPath is where Install writes the unit.
func (c Controller) unitPath() string {
	return filepath.Join(c.root(), "etc/systemd/system", unitName)
}

// packagedUnit is the unit the .deb installed, or "".
func (c Controller) packagedUnit() string {
	for _, dir := range []string{"lib/systemd/system", "usr/lib/systemd/system"} {
		p := filepath.Join(c.root(), dir, unitName)
		if _, err := os.Stat(p); err == nil {
			return p
		}
	}
	return ""
}

func exists(p string) bool {
	_, err := os.Lstat(p)
	return err == nil
}

func (c Controller) systemctl(args ...string) error {
	if !c.live() {
		args = append([]string{"--root=" + c.root()}, args...)
	}
	out, err := exec.Command("systemctl", args...).CombinedOutput()
	if err != nil {
		return fmt.Errorf("systemctl %s: %w: %s", strings.Join(args, " "), err, bytes.TrimSpace(out))
	}
	return nil
}

// Install writes the unit, enables it, and (unless NoStart, and only when
// systemd runs this machine) starts it. Installing into the real root also
// creates the system user "outpost" and, for a data directory other than
// /var/lib/outpost, creates that directory for it.
func (c Controller) Install() (err error) {
	if p := c.packagedUnit(); p != "" {
		return fmt.Errorf("the outpost package already installed %s: use `systemctl enable --now %s` instead", p, unitName)
	}
	up := c.unitPath()
	if exists(up) {
		return fmt.Errorf("%s exists: the service is installed already (uninstall it first)", up)
	}
	text, err := RenderUnit(c.Unit, c.Executable, c.Args, c.DataDir)
	if err != nil {
		return err
	}
	if filepath.Clean(c.root()) == "/" {
		if os.Geteuid() != 0 {
			return errors.New("installing the service needs root (sudo)")
		}
		if err := ensureUser(); err != nil {
			return err
		}
		if err := ensureDataDir(c.DataDir); err != nil {
			return err
		}
	}
	if err := os.MkdirAll(filepath.Dir(up), 0o755); err != nil {
		return fmt.Errorf("unit directory: %w", err)
	}
	if err := atomicfile.Write(up, text, 0o644); err != nil {
		return err
	}
	defer func() {
		if err != nil {
			os.Remove(up)
		}
	}()
	if c.live() {
		if err := c.systemctl("daemon-reload"); err != nil {
			return err
		}
	}
	if err := c.systemctl("enable", unitName); err != nil {
		return err
	}
	if c.live() && !c.NoStart {
		return c.systemctl("start", unitName)
	}
	return nil
}

// Uninstall stops and disables the service and removes the unit Install
// wrote. The user, the configuration and the data stay.
func (c Controller) Uninstall() error {
	up := c.unitPath()
	if !exists(up) {
		if p := c.packagedUnit(); p != "" {
			return fmt.Errorf("%s belongs to the outpost package: remove the package instead (apt remove outpost)", p)
		}
		return ErrNotInstalled
	}
	args := []string{"disable", unitName}
	if c.live() {
		args = []string{"disable", "--now", unitName}
	}
	if err := c.systemctl(args...); err != nil {
		return err
	}
	if err := os.Remove(up); err != nil {
		return fmt.Errorf("remove unit: %w", err)
	}
	if c.live() {
		return c.systemctl("daemon-reload")
	}
	return nil
}

func (c Controller) action(verb string) error {
	if !exists(c.unitPath()) && c.packagedUnit() == "" {
		return ErrNotInstalled
	}
	if !c.live() {
		return fmt.Errorf("systemd is not running here: cannot %s the service", verb)
	}
	return c.systemctl(verb, unitName)
}

// Start starts the service.
func (c Controller) Start() error { return c.action("start") }

// Stop stops the service (systemd sends SIGTERM; Outpost shuts down in
// order).
func (c Controller) Stop() error { return c.action("stop") }

// Restart restarts the service.
func (c Controller) Restart() error { return c.action("restart") }

// Status reports the service's state as systemd sees it.
func (c Controller) Status() (State, error) {
	if !exists(c.unitPath()) && c.packagedUnit() == "" {
		return StateNotInstalled, nil
	}
	if !c.live() {
		return StateUnknown, errors.New("installed, but systemd is not running here")
	}
	// is-active exits non-zero for every state but active; its output
	// names the state either way.
	out, _ := exec.Command("systemctl", "is-active", unitName).Output()
	switch strings.TrimSpace(string(out)) {
	case "active":
		return StateRunning, nil
	case "activating", "reloading":
		return StateStarting, nil
	case "deactivating":
		return StateStopping, nil
	case "failed":
		return StateFailed, nil
	case "inactive":
		return StateStopped, nil
	}
	return StateUnknown, fmt.Errorf("systemctl is-active %s answered %q", unitName, bytes.TrimSpace(out))
}

// ensureUser creates the system user and group "outpost" when missing.
func ensureUser() error {
	if _, err := user.Lookup(Name); err == nil {
		return nil
	} else if !errors.As(err, new(user.UnknownUserError)) {
		return fmt.Errorf("look up user %s: %w", Name, err)
	}
	out, err := exec.Command("useradd", "--system", "--user-group", "--home-dir", packagedDataDir,
		"--no-create-home", "--shell", "/usr/sbin/nologin", "--comment", "Outpost TAK server", Name).CombinedOutput()
	if err != nil {
		return fmt.Errorf("create user %s: %w: %s", Name, err, bytes.TrimSpace(out))
	}
	return nil
}

// ensureDataDir creates a data directory other than the unit's
// StateDirectory and hands it (recursively) to the service user.
func ensureDataDir(dir string) error {
	if dir == "" || filepath.Clean(dir) == packagedDataDir {
		return nil // StateDirectory: systemd creates it and fixes ownership
	}
	u, err := user.Lookup(Name)
	if err != nil {
		return fmt.Errorf("look up user %s: %w", Name, err)
	}
	uid, _ := strconv.Atoi(u.Uid)
	gid, _ := strconv.Atoi(u.Gid)
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return fmt.Errorf("data directory: %w", err)
	}
	return filepath.WalkDir(dir, func(p string, _ fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if err := os.Lchown(p, uid, gid); err != nil {
			return fmt.Errorf("data directory: %w", err)
		}
		return nil
	})
}
