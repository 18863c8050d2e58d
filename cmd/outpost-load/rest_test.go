package main

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// TestRESTAgainstTheServer runs the rest subcommand against the real
// binary's management API: seeded geo objects come back in the reads, every
// request is a 2xx, the server's CPU and RSS are read; a wrong token fails
// every request and the run exits 1.
func TestRESTAgainstTheServer(t *testing.T) {
	dir := t.TempDir()
	srv := startServer(t, dir)
	url := "http://" + srv.Addr(t, "rest")
	tokenFile := filepath.Join(dir, "admin.token")
	jsonPath := filepath.Join(t.TempDir(), "rest.json")

	var out, errb bytes.Buffer
	code := realMain([]string{"rest", "--url", url, "--token-file", tokenFile, "--clients", "4", "--seed", "20",
		"--warmup", "200ms", "--duration", "1s", "--pid", strconv.Itoa(srv.PID()), "--json", jsonPath}, &out, &errb)
	if code != exitOK {
		t.Fatalf("rest run: exit %d\nstdout: %s\nstderr: %s", code, out.String(), errb.String())
	}
	var rep restReport
	b, err := os.ReadFile(jsonPath)
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(b, &rep); err != nil {
		t.Fatalf("report: %v\n%s", err, b)
	}
	if rep.Requests < 8 || rep.Latency.Count != uint64(rep.Requests) || rep.Latency.P99 <= 0 || len(rep.Failed) != 0 {
		t.Errorf("report: %d requests, latency %+v, failed %v", rep.Requests, rep.Latency, rep.Failed)
	}
	// 20 geo objects within 2 km of the query point: the reads carry them.
	if rep.Bytes < rep.Requests/4*20*100 {
		t.Errorf("%d bytes for %d requests: the geo object reads came back short", rep.Bytes, rep.Requests)
	}
	if rep.Server == nil || rep.Server.RSSPeak <= 0 || rep.Server.CPUPerDelivery <= 0 {
		t.Errorf("server figures missing: %+v", rep.Server)
	}
	if !strings.Contains(out.String(), "requests:") || !strings.Contains(out.String(), "p99") {
		t.Errorf("printed report: %s", out.String())
	}

	out.Reset()
	code = realMain([]string{"rest", "--url", url, "--token", "not-a-token", "--clients", "2", "--warmup", "0", "--duration", "300ms"}, &out, &errb)
	if code != exitFailure || !strings.Contains(out.String(), "HTTP 401") {
		t.Errorf("wrong token: exit %d, %s", code, out.String())
	}
}

func TestRESTOptionsRefused(t *testing.T) {
	for _, args := range [][]string{
		{},                                   // no token
		{"--token", "x", "--clients", "0"},   // no clients
		{"--token", "x", "--paths", "Alive"}, // not a path
		{"--token", "x", "--duration", "0"},  // no window
		{"--token-file", filepath.Join(t.TempDir(), "missing")},
		{"--token", "x", "extra"},
	} {
		var out, errb bytes.Buffer
		if code := realMain(append([]string{"rest"}, args...), &out, &errb); code != exitUsage || errb.Len() == 0 {
			t.Errorf("%v: exit %d, stderr %q", args, code, errb.String())
		}
	}
}
