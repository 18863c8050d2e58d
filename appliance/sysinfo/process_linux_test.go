package sysinfo

import (
	"os"
	"testing"
)

// TestProcessCPU: the test's own process has used CPU time, and more of it
// after some work; a process that does not exist is an error.
func TestProcessCPU(t *testing.T) {
	before, err := ProcessCPU(os.Getpid())
	if err != nil {
		t.Fatal(err)
	}
	x := uint64(1)
	for after := before; after <= before; {
		for range 10_000_000 {
			x = x*6364136223846793005 + 1442695040888963407
		}
		if after, err = ProcessCPU(os.Getpid()); err != nil {
			t.Fatal(err)
		}
	}
	if x == 0 {
		t.Log(x) // keeps the work
	}
	if _, err := ProcessCPU(1 << 30); err == nil {
		t.Fatal("no error for a process that does not exist")
	}
}
