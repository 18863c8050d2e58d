// Command outpost-load is Outpost's load tool: it connects many simulated
// TAK clients to a CoT port (TCP 8087 or mutual TLS 8089), has them send
// position reports (SA) to each other the way ATAK does, and reports what
// arrived: deliveries, latency percentiles, coalesced and missing reports,
// disconnects, the time until every client held every other client's SA,
// and, given the server's pid, the server's CPU time and resident memory.
// It also reports its own CPU time, to show it is not the bottleneck. The
// rest subcommand (rest.go) loads the management API instead. The mesh
// subcommand (mesh.go) loads the mesh bridge: simulated mesh devices, each
// a UDP socket on its own loopback address, send SAs to the SA multicast
// group as XML or TAK protocol v1 datagrams, and TCP receivers count what
// the bridge delivered (lost, duplicated, latency; with --pid the server's
// CPU per bridged event and per delivery, and its peak RSS). It needs
// multicast on loopback: scripts/bench/mesh.sh runs it in a network
// namespace of its own.
//
//	outpost-load --addr 127.0.0.1:8087 --clients 200 --rate 5 --duration 30s --pid $(pidof outpost)
//	outpost-load --addr 127.0.0.1:8089 --tls --cert c.pem --key c.key --ca ca.pem --clients 50 --idle
//	outpost-load summarize run1.json run2.json run3.json
//	outpost-load rest --url http://127.0.0.1:19023 --token-file DATA/admin.token --clients 50
//	outpost-load mesh --addr 127.0.0.1:8087 --clients 200 --devices 100 --rate 1 --format xml --pid $(pidof outpost)
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
		if err := summarizeReports(args[1:], stdout); err != nil {
			fmt.Fprintln(stderr, "outpost-load summarize:", err)
			return exitUsage
		}
		return exitOK
	}
	if len(args) > 0 && args[0] == "rest" {
		return runREST(args[1:], stdout, stderr)
	}
	if len(args) > 0 && args[0] == "mesh" {
		return runMesh(args[1:], stdout, stderr)
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
