// Command outpost is the Outpost TAK server appliance. With no subcommand it
// runs the server (`outpost run`). Every subcommand accepts --config and
// --data-dir and reads the same configuration as run, so an operator can act
// on a running appliance's data.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"os"
	"runtime"
	"sort"
	"strings"

	"outpost/appliance"
	"outpost/appliance/config"
	"outpost/appliance/service"
)

func main() {
	os.Exit(run(os.Args[1:], os.Stdin, os.Stdout, os.Stderr, os.LookupEnv))
}

// command is one subcommand. usage is its line in `outpost help`; synopsis
// is what `outpost COMMAND -h` prints above the command's own flags: how it
// is called and its arguments. setup registers the command's own flags (on
// top of the configuration flags every command has) and returns the
// function that runs it.
type command struct {
	usage    string
	synopsis string
	setup    func(fs *flag.FlagSet) func(c *cmdContext) int
}

// plain is the setup of a command without flags of its own.
func plain(run func(c *cmdContext) int) func(*flag.FlagSet) func(*cmdContext) int {
	return func(*flag.FlagSet) func(*cmdContext) int { return run }
}

// cmdContext carries what every subcommand needs.
type cmdContext struct {
	args      []string // positional arguments, flags removed
	stdin     io.Reader
	stdout    io.Writer
	stderr    io.Writer
	lookupEnv func(string) (string, bool)
	cfg       config.Config
	log       *slog.Logger
}

var commands = map[string]command{
	"run":      {"run the server (the default)", runSynopsis, plain(cmdRun)},
	"version":  {"print version and commit", "usage: outpost version", plain(cmdVersion)},
	"backup":   {"backup FILE: write a consistent copy of the database while the server runs", backupSynopsis, plain(cmdBackup)},
	"config":   {"list every configuration key with its environment variable and flag", configSynopsis, setupConfig},
	"status":   {"print what a running server is doing (its /metrics, for people)", statusSynopsis, plain(cmdStatus)},
	"cert":     {"cert issue|revoke|list|enrollment-package: client certificates and connection packages", certUsage, setupCert},
	"user":     {"user add|delete|list|role|groups: system users (who may enroll for a certificate), their roles and groups", userUsage, setupUser},
	"group":    {"group add|list|remove: groups (TAK channels)", groupUsage, setupGroup},
	"invite":   {"invite NAME | --list | --revoke ID: one-time enrollment tokens and the QR codes ATAK, iTAK and WinTAK join with", inviteUsage, setupInvite},
	"token":    {"token create|list|revoke: API users and their bearer tokens (management API)", tokenUsage, setupToken},
	"audit":    {"audit [--since D] [--user NAME]: management API calls made as system users", auditUsage, setupAudit},
	"federate": {"federate list|add|remove|trust|groups: federation identity and fingerprint, trusted CAs, federates (managed ones too)", federateUsage, setupFederate},
	"ca":       {"ca import --cert CA.pem --key KEY.pem [--chain ISSUERS.pem]: bring your own CA (the server must be stopped)", caUsage, setupCA},

	"service":     {"service install|uninstall|start|stop|restart|status: the system service (systemd or Windows)", serviceSynopsis, setupService},
	"healthcheck": {"exit 0 only when /Alive answers and every enabled listener accepts connections", healthcheckSynopsis, setupHealthcheck},
	"doctor":      {"doctor [--host H] [--token-file F]: check a running server as a client would (ports, certificate, CRL, clock, disk) and say what to fix", doctorSynopsis, setupDoctor},
	"restore":     {"restore FILE: replace the database with a checked backup (the server must be stopped)", restoreSynopsis, plain(cmdRestore)},
}

// Exit codes.
const (
	exitOK      = 0
	exitFailure = 1 // the command ran and failed
	exitUsage   = 2 // bad flags, arguments or configuration
)

func run(args []string, stdin io.Reader, stdout, stderr io.Writer, lookupEnv func(string) (string, bool)) int {
	name := "run"
	if len(args) > 0 && !strings.HasPrefix(args[0], "-") {
		name, args = args[0], args[1:]
	}
	if name == "help" || name == "-h" || name == "--help" {
		if len(args) == 1 {
			if _, ok := commands[args[0]]; ok {
				// `outpost help COMMAND` is `outpost COMMAND -h` on standard output.
				return run([]string{args[0], "-h"}, stdin, stdout, stdout, lookupEnv)
			}
		}
		usage(stdout)
		return exitOK
	}
	cmd, ok := commands[name]
	if !ok {
		fmt.Fprintf(stderr, "outpost: unknown command %q\n\n", name)
		usage(stderr)
		return exitUsage
	}
	if name == "version" {
		if wantsHelp(args) {
			fmt.Fprintln(stderr, cmd.synopsis)
			return exitOK
		}
		return cmdVersion(&cmdContext{args: args, stdout: stdout, stderr: stderr})
	}
	fs := flag.NewFlagSet("outpost "+name, flag.ContinueOnError)
	fs.SetOutput(stderr)
	runCmd := cmd.setup(fs)
	own := ownFlags(fs)
	flags := config.Register(fs)
	fs.Usage = commandHelp(name, cmd, own, fs)
	positional, err := parseInterspersed(fs, args)
	if err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return exitOK
		}
		return exitUsage
	}
	cfg, err := flags.Load(lookupEnv)
	if err != nil {
		fmt.Fprintf(stderr, "outpost: %v\n", err)
		return exitUsage
	}
	log, err := newLogger(cfg, stderr)
	if err != nil {
		fmt.Fprintf(stderr, "outpost: %v\n", err)
		return exitUsage
	}
	return runCmd(&cmdContext{args: positional, stdin: stdin, stdout: stdout, stderr: stderr, lookupEnv: lookupEnv, cfg: cfg, log: log})
}

// parseInterspersed parses flags wherever they stand among the positional
// arguments ("cert issue alice --device itak"). Everything after "--" is
// positional.
func parseInterspersed(fs *flag.FlagSet, args []string) ([]string, error) {
	var positional []string
	for {
		before := len(args)
		if err := fs.Parse(args); err != nil {
			return nil, err
		}
		rest := fs.Args()
		if len(rest) == 0 {
			return positional, nil
		}
		if consumed := before - len(rest); consumed > 0 && args[consumed-1] == "--" {
			return append(positional, rest...), nil
		}
		positional = append(positional, rest[0])
		args = rest[1:]
	}
}

func usage(w io.Writer) {
	fmt.Fprintln(w, "usage: outpost [command] [--config FILE] [--data-dir DIR] [flags]")
	fmt.Fprintln(w, "\ncommands:")
	names := make([]string, 0, len(commands))
	for n := range commands {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, n := range names {
		fmt.Fprintf(w, "  %-11s %s\n", n, commands[n].usage)
	}
	fmt.Fprintln(w, "\n`outpost COMMAND -h` (or `outpost help COMMAND`) shows how a command is called and its own flags;")
	fmt.Fprintln(w, "`outpost run -h` lists the configuration flags every command accepts; `outpost config` lists every key.")
	fmt.Fprintln(w, "Flags may come before or after the command's arguments.")
}

func newLogger(cfg config.Config, w io.Writer) (*slog.Logger, error) {
	var level slog.Level
	if err := level.UnmarshalText([]byte(cfg.LogLevel)); err != nil {
		return nil, fmt.Errorf("config logLevel: %w", err)
	}
	opts := &slog.HandlerOptions{Level: level}
	return slog.New(service.LogHandler(w, cfg.LogFormat == "json", opts)), nil
}

func cmdVersion(c *cmdContext) int {
	fmt.Fprintf(c.stdout, "outpost %s (commit %s, %s, %s/%s)\n", appliance.Version(), appliance.Commit(),
		runtime.Version(), runtime.GOOS, runtime.GOARCH)
	return exitOK
}

func cmdRun(c *cmdContext) int {
	if len(c.args) > 0 {
		fmt.Fprintf(c.stderr, "outpost run: unexpected argument %q\n", c.args[0])
		return exitUsage
	}
	app := appliance.New(c.cfg, c.log)
	err := service.Run(context.Background(), service.Daemon{
		Open: app.Open, Close: app.Close, Healthy: app.Healthy,
		ShutdownTimeout: c.cfg.ShutdownTimeout, MemoryLimit: int64(c.cfg.MemoryLimit), GCPercent: c.cfg.GCPercent,
		IdleMemoryReturn: c.cfg.IdleMemoryReturn, Log: c.log,
	})
	switch {
	case errors.Is(err, service.ErrStart):
		c.log.Error("Outpost could not start", "err", err)
		return exitFailure
	case err != nil:
		c.log.Error("shutdown was not clean", "err", err)
		return exitFailure
	}
	return exitOK
}
