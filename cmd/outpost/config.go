package main

import (
	"flag"
	"fmt"
	"io"
	"strings"
	"text/tabwriter"

	"outpost/appliance/config"
)

// setupConfig: `outpost config` lists every configuration key; with
// --markdown, as the table docs/configuration.md "Every key" holds between
// its config:begin and config:end markers (TestConfigReference compares
// the two).
func setupConfig(fs *flag.FlagSet) func(*cmdContext) int {
	markdown := fs.Bool("markdown", false, "print the keys as the Markdown table of docs/configuration.md, with their defaults")
	return func(c *cmdContext) int {
		if *markdown {
			writeConfigMarkdown(c.stdout)
			return exitOK
		}
		tw := tabwriter.NewWriter(c.stdout, 0, 0, 1, ' ', 0)
		for _, k := range config.Describe() {
			flagName := ""
			if k.Flag != "" {
				flagName = "--" + k.Flag
			}
			fmt.Fprintf(tw, "%s\t%s\t%s\t%s\n", k.Key, k.Env, flagName, k.Usage)
		}
		tw.Flush()
		return exitOK
	}
}

// writeConfigMarkdown writes every key as one row of a Markdown table:
// key, environment variable, flag, default and meaning. It describes the
// code's defaults, never the configuration in force, and a secret's row
// says how it is made, never its value.
func writeConfigMarkdown(w io.Writer) {
	fmt.Fprintln(w, "| key | environment | flag | default | meaning |")
	fmt.Fprintln(w, "|---|---|---|---|---|")
	for _, k := range config.Describe() {
		flagName := "—"
		if k.Flag != "" {
			flagName = "`--" + k.Flag + "`"
		}
		def := "empty"
		switch {
		case k.DefaultNote != "":
			def = mdText(k.DefaultNote)
		case k.Default != "":
			def = "`" + k.Default + "`"
		}
		meaning := mdText(k.Usage)
		if k.Secret {
			meaning += " (a secret: never printed)"
		}
		fmt.Fprintf(w, "| `%s` | `%s` | %s | %s | %s |\n", k.Key, k.Env, flagName, def, meaning)
	}
}

// mdText escapes what would end a table cell or read as HTML.
var mdText = strings.NewReplacer("|", `\|`, "<", "&lt;", ">", "&gt;").Replace
