package main

import (
	"flag"
	"fmt"
	"strings"
)

// `outpost COMMAND -h` shows how the command is called, its arguments and
// its own flags, and says in one line that the configuration flags are
// accepted too; only `outpost run -h` lists those (every command still
// parses them: they are registered on every command's flag set).

// The synopses of the commands without a usage text of their own (the
// others use the text they print on bad arguments).
const (
	runSynopsis = `usage: outpost [run] [--config FILE] [flags]
      run the server (the default command; ` + "`outpost help`" + ` lists the others). Every flag
      below sets the configuration key it names; the file, OUTPOST_* variables and
      the keys without a flag: ` + "`outpost config`"
	backupSynopsis = `usage: outpost backup FILE
      write a consistent copy of the database to FILE (which must not exist) while
      the server runs; copy certs/ and secrets.yaml beside it as well`
	restoreSynopsis = `usage: outpost restore FILE
      replace the database with the backup FILE once the copy checks out (the server
      must be stopped); the replaced database is kept as outpost.db.before-restore-TIME`
	configSynopsis = `usage: outpost config [--markdown]
      list every configuration key with its environment variable, flag and meaning;
      --markdown prints the table of docs/configuration.md, defaults included
      (secrets are never printed)`
	statusSynopsis = `usage: outpost status
      what the server running on this machine is doing: listeners, connections, events
      by class, close reasons, history, HTTP requests, memory and disk (its /metrics)`
	serviceSynopsis = `usage: outpost service install|uninstall|start|stop|restart|status
      the system service: a systemd unit on Linux, a Windows service on Windows.
      install carries --config and --data-dir into the service; status exits 3
      when the service is not running`
	healthcheckSynopsis = `usage: outpost healthcheck [--timeout D]
      exit 0 only when /Alive answers on the management port and every enabled
      listener accepts a TCP connection; otherwise 1, with one line per listener`
	doctorSynopsis = `usage: outpost doctor [--host H] [--token-file F] [--timeout D]
      check a running server as a device meets it: every enabled port on the public
      host, the TLS certificates against the CA, the CRL, the clock and the disk
      reserve; each check says OK, WARN or FAIL and what to fix (exit 1 on a FAIL)`
)

// configFlagsNote ends every command's help but run's.
const configFlagsNote = "The configuration flags (--config FILE, --data-dir DIR and the rest) are accepted too: `outpost run -h` lists them, `outpost config` lists every key."

// ownFlags copies the flags registered on fs so far (the command's own,
// registered before the configuration flags) into a flag set of their own,
// for the help to print.
func ownFlags(fs *flag.FlagSet) *flag.FlagSet {
	own := flag.NewFlagSet(fs.Name(), flag.ContinueOnError)
	fs.VisitAll(func(f *flag.Flag) {
		own.Var(f.Value, f.Name, f.Usage)
		own.Lookup(f.Name).DefValue = f.DefValue
	})
	return own
}

// commandHelp is the usage function of a command's flag set fs: the
// command's synopsis, then its own flags (all of fs for run), then the
// note on the configuration flags.
func commandHelp(name string, cmd command, own, fs *flag.FlagSet) func() {
	return func() {
		w := fs.Output()
		fmt.Fprintln(w, strings.TrimRight(cmd.synopsis, "\n"))
		if name == "run" {
			fmt.Fprintln(w, "\nflags:")
			fs.PrintDefaults()
			return
		}
		n := 0
		own.VisitAll(func(*flag.Flag) { n++ })
		if n == 0 {
			fmt.Fprintln(w, "\nIt has no flags of its own.")
		} else {
			fmt.Fprintln(w, "\nflags:")
			own.SetOutput(w)
			own.PrintDefaults()
		}
		fmt.Fprintln(w, "\n"+configFlagsNote)
	}
}

// wantsHelp reports whether args ask for help (-h, -help, --help).
func wantsHelp(args []string) bool {
	for _, a := range args {
		switch a {
		case "-h", "-help", "--help":
			return true
		}
	}
	return false
}
