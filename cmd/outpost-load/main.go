// Command outpost-load is Outpost's load tool: it connects many simulated
// TAK clients to a CoT port (TCP 8087 or mutual TLS 8089), has them send
// position reports (SA) to each other the way ATAK does, and reports what
// arrived: deliveries, latency percentiles, coalesced and missing reports,
// disconnects, the time until every client held every other client's SA,
// and, given the server's pid, the server's CPU time and resident memory.
// It also reports its own CPU time, to show it is not the bottleneck.
//
//	outpost-load --addr 127.0.0.1:8087 --clients 200 --rate 5 --duration 30s --pid $(pidof outpost)
//	outpost-load --addr 127.0.0.1:8089 --tls --cert c.pem --key c.key --ca ca.pem --clients 50 --idle
//	outpost-load summarize run1.json run2.json run3.json
//
// BENCHMARKS.md ("Load tool and scenarios") describes the measurements and
// scripts/bench runs the scenarios.
package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"runtime/pprof"
)

func main() { os.Exit(realMain(os.Args[1:], os.Stdout, os.Stderr)) }

// Exit codes.
const (
	exitOK      = 0
	exitFailure = 1
	exitUsage   = 2
)

func realMain(args []string, stdout, stderr io.Writer) int {
	if len(args) > 0 && args[0] == "summarize" {
		if err := summarize(args[1:], stdout); err != nil {
			fmt.Fprintln(stderr, "outpost-load summarize:", err)
			return exitUsage
		}
		return exitOK
	}
	o, err := parseOptions(args, stderr)
	if errors.Is(err, flag.ErrHelp) {
		return exitOK
	}
	if err != nil {
		fmt.Fprintln(stderr, "outpost-load:", err)
		return exitUsage
	}
	if o.CPUProfile != "" {
		f, err := os.Create(o.CPUProfile)
		if err != nil {
			fmt.Fprintln(stderr, "outpost-load: --cpuprofile:", err)
			return exitFailure
		}
		defer f.Close()
		if err := pprof.StartCPUProfile(f); err != nil {
			fmt.Fprintln(stderr, "outpost-load: --cpuprofile:", err)
			return exitFailure
		}
		defer pprof.StopCPUProfile()
	}
	rep, err := run(o, stderr)
	if err != nil {
		fmt.Fprintln(stderr, "outpost-load:", err)
		return exitFailure
	}
	rep.print(stdout)
	if o.JSON != "" {
		if err := rep.writeJSON(o.JSON); err != nil {
			fmt.Fprintln(stderr, "outpost-load:", err)
			return exitFailure
		}
	}
	return exitOK
}
