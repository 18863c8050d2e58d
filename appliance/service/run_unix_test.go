//go:build !windows

package service

import (
	"context"
	"syscall"
	"testing"
)

// TestRunStopsOnSIGTERM: systemd stops the service with SIGTERM.
func TestRunStopsOnSIGTERM(t *testing.T) {
	c := listen(t)
	f := &fakeAppliance{}
	errc := make(chan error, 1)
	go func() { errc <- Run(context.Background(), f.daemon()) }()
	if got := read(t, c); got != "READY=1" {
		t.Fatalf("got %q", got)
	}
	if err := syscall.Kill(syscall.Getpid(), syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	if got := read(t, c); got != "STOPPING=1" {
		t.Fatalf("got %q", got)
	}
	if err := <-errc; err != nil {
		t.Fatal(err)
	}
	if ev := f.Events(); len(ev) != 2 || ev[1] != "close" {
		t.Fatalf("events %v", ev)
	}
}
