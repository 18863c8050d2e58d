package main

import (
	"bytes"
	"encoding/json"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

func TestOptionsRefused(t *testing.T) {
	cases := []struct {
		name string
		args []string
		want string
	}{
		{"bad addr", []string{"--addr", "nowhere"}, "--addr"},
		{"no clients", []string{"--clients", "0"}, "--clients"},
		{"senders above clients", []string{"--clients", "3", "--senders", "4"}, "--senders"},
		{"zero rate", []string{"--rate", "0"}, "--rate"},
		{"huge size", []string{"--size", "1000000"}, "--size"},
		{"proto share", []string{"--proto", "1.5"}, "--proto"},
		{"slow share", []string{"--slow", "-0.1"}, "--slow"},
		{"negative ramp", []string{"--ramp", "-1s"}, "--ramp"},
		{"short ping", []string{"--ping-interval", "10ms"}, "--ping-interval"},
		{"tls without credentials", []string{"--tls"}, "--tls"},
		{"p12 and pem", []string{"--tls", "--p12", "a.p12", "--cert", "a.pem", "--key", "a.key"}, "--p12"},
		{"key count", []string{"--tls", "--cert", "a.pem,b.pem", "--key", "a.key"}, "--key"},
		{"cert without tls", []string{"--cert", "a.pem"}, "need --tls"},
		{"bad local addr", []string{"--local-addrs", "127.0.0.x"}, "--local-addrs"},
		{"descending range", []string{"--local-addrs", "127.0.0.9-127.0.0.1"}, "--local-addrs"},
		{"mixed families", []string{"--local-addrs", "127.0.0.1-::1"}, "--local-addrs"},
		{"unknown flag", []string{"--colour"}, "colour"},
		{"stray argument", []string{"extra"}, "extra"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			_, err := parseOptions(tc.args, io.Discard)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("%v: error %v, want one naming %q", tc.args, err, tc.want)
			}
		})
	}
}

func TestOptionsDefaultsAndRanges(t *testing.T) {
	o, err := parseOptions([]string{"--clients", "10", "--local-addrs", "127.0.0.1,127.0.0.5-127.0.0.7"}, io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	if o.Senders != 10 || !o.Ping || o.Proto != 0 {
		t.Errorf("defaults: senders %d, ping %v, proto %v", o.Senders, o.Ping, o.Proto)
	}
	var got []string
	for _, a := range o.local {
		got = append(got, a.String())
	}
	if strings.Join(got, " ") != "127.0.0.1:0 127.0.0.5:0 127.0.0.6:0 127.0.0.7:0" {
		t.Errorf("local addresses: %v", got)
	}
	if _, err := parseLocalAddrs("10.0.0.0-10.1.0.0"); err == nil {
		t.Error("a range of 65,537 addresses was accepted")
	}
}

func TestPickIsExactAndStable(t *testing.T) {
	a, b := pick(200, 0.1, 2), pick(200, 0.1, 2)
	n := 0
	for i := range a {
		if a[i] != b[i] {
			t.Fatal("two picks differ")
		}
		if a[i] {
			n++
		}
	}
	if n != 20 {
		t.Errorf("picked %d of 200 for 10 %%", n)
	}
}

func TestMainExitCodes(t *testing.T) {
	var out, errb bytes.Buffer
	if code := realMain([]string{"--rate", "-1"}, &out, &errb); code != exitUsage || !strings.Contains(errb.String(), "--rate") {
		t.Errorf("bad flag: exit %d, %q", code, errb.String())
	}
	errb.Reset()
	if code := realMain([]string{"-h"}, &out, &errb); code != exitOK || !strings.Contains(errb.String(), "--local-addrs") {
		t.Errorf("help: exit %d, %q", code, errb.String())
	}
	errb.Reset()
	if code := realMain([]string{"summarize"}, &out, &errb); code != exitUsage {
		t.Errorf("summarize without files: exit %d", code)
	}
	// Nothing listens on port 1: no client connects.
	errb.Reset()
	if code := realMain([]string{"--addr", "127.0.0.1:1", "--clients", "2", "--connect-timeout", "100ms", "--quiet"}, &out, &errb); code != exitFailure ||
		!strings.Contains(errb.String(), "no client connected") {
		t.Errorf("nothing listening: exit %d, %q", code, errb.String())
	}
}

func TestSummarizeMedians(t *testing.T) {
	dir := t.TempDir()
	var paths []string
	for i, p99 := range []float64{30, 10, 20} {
		rep := report{Clients: clientsInfo{Connected: 200}, Load: &loadInfo{PerSecond: 1000 * p99, Normal: deliveries{Latency: latency{P99: p99}}},
			Server: &serverInfo{RSSPeak: int64(p99) << 20}, Machine: machineInfo{StealPercent: ptr(p99 / 10)}}
		b, _ := json.Marshal(rep)
		p := filepath.Join(dir, "r"+string(rune('a'+i))+".json")
		if err := os.WriteFile(p, b, 0o644); err != nil {
			t.Fatal(err)
		}
		paths = append(paths, p)
	}
	var out bytes.Buffer
	if err := summarize(paths, &out); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"p99 ms", "20.0", "10.0", "30.0", "deliveries/s", "20000", "server RSS peak MiB", "runs"} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("summary lacks %q:\n%s", want, out.String())
		}
	}
	if !regexp.MustCompile(`CPU steal % \(window\) +2 +1 +3 `).MatchString(out.String()) {
		t.Errorf("steal: median 2, min 1, max 3 wanted in\n%s", out.String())
	}
	if err := summarize([]string{filepath.Join(dir, "missing.json")}, &out); err == nil {
		t.Error("a missing file was summarised")
	}
	bad := filepath.Join(dir, "bad.json")
	os.WriteFile(bad, []byte("{"), 0o644)
	if err := summarize([]string{bad}, &out); err == nil || !strings.Contains(err.Error(), "bad.json") {
		t.Errorf("bad JSON: %v", err)
	}
}
