package main

import (
	"strings"
	"testing"

	"outpost/internal/testkit"
)

// doctorFlags point `outpost doctor` at a running binary: its data
// directory and the ports it bound.
func doctorFlags(t *testing.T, p *testkit.Proc) []string {
	return []string{"doctor", "--data-dir", p.DataDir, "--public-host", "127.0.0.1",
		"--rest-port", port(t, p.Addr(t, "rest")), "--http-port", port(t, p.Addr(t, "http")),
		"--https-port", port(t, p.Addr(t, "https")), "--cot-port", port(t, p.Addr(t, "cot-tcp")),
		"--ssl-cot-port", port(t, p.Addr(t, "cot-tls")), "--enroll-port", port(t, p.Addr(t, "enroll")),
	}
}

// lineOf is the output line of one check.
func lineOf(out, check string) string {
	for _, l := range strings.Split(out, "\n") {
		if f := strings.Fields(l); len(f) > 1 && f[1] == check {
			return l
		}
	}
	return ""
}

// TestDoctor: against the real binary every check is OK; a stopped
// listener, a host the certificate does not name and a disk below the
// reserve are each named with what to fix, and the exit status says so.
func TestDoctor(t *testing.T) {
	tls := []string{"--https-port", "0", "--ssl-cot-port", "0", "--enroll-port", "0", "--key-type", "ecdsa-p256"}
	p := testkit.Start(t, t.TempDir(), tls...)
	flags := doctorFlags(t, p)
	code, out, errOut := outpost(t, flags...)
	if code != exitOK {
		t.Fatalf("healthy server: exit %d\n%s%s", code, out, errOut)
	}
	for _, check := range []string{"ca", "rest", "http", "https", "cot-tcp", "cot-tls", "enroll", "crl", "clock", "disk"} {
		if l := lineOf(out, check); !strings.HasPrefix(l, "OK ") {
			t.Errorf("%s: %q\n%s", check, l, out)
		}
	}
	if !strings.Contains(lineOf(out, "cot-tls"), "names 127.0.0.1") {
		t.Errorf("the TLS line does not say which name was checked:\n%s", out)
	}

	// A listener that does not answer.
	code, out, _ = outpost(t, append(flags, "--cot-port", closedPort(t))...)
	if l := lineOf(out, "cot-tcp"); code != exitFailure || !strings.HasPrefix(l, "FAIL") || !strings.Contains(l, "firewall") {
		t.Fatalf("stopped listener: exit %d, line %q\n%s", code, l, out)
	}
	// Without the data directory there is no CA to check against.
	code, out, _ = outpost(t, append(flags, "--data-dir", t.TempDir())...)
	if l := lineOf(out, "ca"); code != exitFailure || !strings.HasPrefix(l, "FAIL") || !strings.Contains(l, "--data-dir") {
		t.Fatalf("no CA: exit %d, line %q\n%s", code, l, out)
	}

	// A server reached at an address its certificate does not name (its
	// publicHost is another), with its disk below the reserve.
	q := testkit.Start(t, t.TempDir(), append(tls, "--bind", "127.0.0.2", "--public-host", "127.0.0.1", "--disk-reserve", "100000000GiB")...)
	code, out, _ = outpost(t, append(doctorFlags(t, q), "--bind", "127.0.0.2", "--host", "127.0.0.2")...)
	if code != exitFailure {
		t.Fatalf("exit %d\n%s", code, out)
	}
	for _, check := range []string{"https", "cot-tls", "enroll"} {
		if l := lineOf(out, check); !strings.HasPrefix(l, "FAIL") || !strings.Contains(l, "not 127.0.0.2: set publicHost to 127.0.0.2") {
			t.Errorf("%s: %q", check, l)
		}
	}
	if l := lineOf(out, "disk"); !strings.HasPrefix(l, "FAIL") || !strings.Contains(l, "below the reserve") {
		t.Errorf("disk: %q", l)
	}
	if l := lineOf(out, "cot-tcp"); !strings.HasPrefix(l, "OK") {
		t.Errorf("cot-tcp: %q", l)
	}

	code, _, errOut = outpost(t, "doctor", "extra")
	if code != exitUsage || !strings.Contains(errOut, "unexpected argument") {
		t.Fatalf("bad usage: exit %d %s", code, errOut)
	}
}
