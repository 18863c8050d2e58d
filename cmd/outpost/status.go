package main

import (
	"context"
	"fmt"
	"sort"
	"strings"
	"text/tabwriter"
	"time"

	"outpost/appliance/admin"
)

// cmdStatus prints what a running server's /metrics says, for people.
func cmdStatus(c *cmdContext) int {
	if len(c.args) > 0 {
		fmt.Fprintf(c.stderr, "outpost status: unexpected argument %q\n", c.args[0])
		return exitUsage
	}
	ctx, cancel := context.WithTimeout(context.Background(), 15*time.Second)
	defer cancel()
	samples, err := admin.Status(ctx, c.cfg)
	if err != nil {
		fmt.Fprintf(c.stderr, "outpost status: %v\n", err)
		return exitFailure
	}
	get := func(name string, labels ...string) float64 {
		total := 0.0
		for _, s := range samples {
			if s.Name != name {
				continue
			}
			match := true
			for i := 0; i+1 < len(labels); i += 2 {
				if s.Labels[labels[i]] != labels[i+1] {
					match = false
				}
			}
			if match {
				total += s.Value
			}
		}
		return total
	}
	by := func(name, label string) map[string]float64 {
		m := map[string]float64{}
		for _, s := range samples {
			if s.Name == name {
				m[s.Labels[label]] += s.Value
			}
		}
		return m
	}
	w := tabwriter.NewWriter(c.stdout, 2, 4, 2, ' ', 0)
	if start := get("process_start_time_seconds"); start > 0 {
		fmt.Fprintf(w, "up\t%s\n", time.Since(time.Unix(int64(start), 0)).Round(time.Second))
	}
	fmt.Fprintf(w, "memory\t%.1f MiB resident, %d goroutines\n", get("process_resident_memory_bytes")/(1<<20), int(get("go_goroutines")))
	fmt.Fprintln(w, "\nlistener\tconnections\taccepted\trefused\thandshake failures")
	for _, l := range sortedKeys(by("connections_accepted_total", "listener")) {
		conns := "-"
		if strings.HasPrefix(l, "cot-") {
			conns = fmt.Sprintf("%d (%d protobuf)", int(get("cot_connections", "listener", l)), int(get("cot_connections", "listener", l, "format", "protobuf")))
		}
		fmt.Fprintf(w, "%s\t%s\t%d\t%d\t%d\n", l, conns, int(get("connections_accepted_total", "listener", l)),
			int(get("connections_refused_total", "listener", l)), int(get("tls_handshake_failures_total", "listener", l)))
	}
	fmt.Fprintf(w, "\nevents in\t%s\n", pairs(by("cot_events_in_total", "class")))
	fmt.Fprintf(w, "deliveries\t%s\n", pairs(by("cot_deliveries_total", "class")))
	fmt.Fprintf(w, "coalesced\t%d\n", int(get("cot_coalesced_total")))
	fmt.Fprintf(w, "queued\t%.1f KiB\n", get("cot_queued_bytes")/1024)
	fmt.Fprintf(w, "refused events\t%s\n", pairs(by("cot_refused_events_total", "cause")))
	fmt.Fprintf(w, "sessions closed\t%s\n", pairs(by("cot_sessions_closed_total", "reason")))
	fmt.Fprintf(w, "history\t%.1f MiB stored, backlog %d; %s\n", get("history_bytes")/(1<<20), int(get("history_backlog")),
		pairs(by("history_events_total", "outcome")))
	if total := get("disk_total_bytes"); total > 0 {
		free, reserve := get("disk_free_bytes"), get("disk_reserve_bytes")
		state := ""
		if free < reserve {
			state = "; BELOW THE RESERVE: uploads refused, CoT history paused"
		}
		fmt.Fprintf(w, "disk\t%.1f MiB free of %.1f MiB; reserve %.1f MiB, floor %.1f MiB%s\n",
			free/(1<<20), total/(1<<20), reserve/(1<<20), get("disk_floor_bytes")/(1<<20), state)
	}
	fmt.Fprintf(w, "http requests\t%s\n", pairs(by("http_requests_total", "code")))
	w.Flush()
	return exitOK
}

func sortedKeys(m map[string]float64) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

// pairs renders the non-zero counts as "key n, key n".
func pairs(m map[string]float64) string {
	var parts []string
	for _, k := range sortedKeys(m) {
		if m[k] != 0 {
			parts = append(parts, fmt.Sprintf("%s %d", k, int(m[k])))
		}
	}
	if len(parts) == 0 {
		return "none"
	}
	return strings.Join(parts, ", ")
}
