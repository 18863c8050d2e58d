package config

import (
	"strings"
	"testing"
	"time"
)

// intCase is one way of setting an integer key, and what must come of it.
type intCase struct {
	name string
	args []string
	env  map[string]string
	file string
	want int
	err  string
}

// checkIntKey loads each case and checks the key's value (get) or the error.
func checkIntKey(t *testing.T, key string, get func(*Config) int, cases []intCase) {
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			args := tc.args
			if tc.file != "" {
				args = append(args, "--config", writeFile(t, tc.file))
			}
			c, err := load(t, args, tc.env)
			if tc.err != "" {
				if err == nil || !strings.Contains(err.Error(), tc.err) {
					t.Fatalf("got %v, want an error containing %q", err, tc.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if got := get(&c); got != tc.want {
				t.Fatalf("%s %d, want %d", key, got, tc.want)
			}
		})
	}
}

func TestMemoryLimit(t *testing.T) {
	checkIntKey(t, "memoryLimit", func(c *Config) int { return c.MemoryLimit }, []intCase{
		{name: "default", want: 256 << 20},
		{name: "flag with unit", args: []string{"--memory-limit", "128MiB"}, want: 128 << 20},
		{name: "environment", env: map[string]string{"OUTPOST_MEMORY_LIMIT": "1GiB"}, want: 1 << 30},
		{name: "file", file: "memoryLimit: 64 MiB\n", want: 64 << 20},
		{name: "zero is no limit", args: []string{"--memory-limit", "0"}, want: 0},
		{name: "too small", args: []string{"--memory-limit", "1MiB"}, err: "config memoryLimit: must be 0 (no limit) or at least 32 MiB"},
		{name: "negative", args: []string{"--memory-limit", "-5"}, err: "config memoryLimit"},
		{name: "not a size", args: []string{"--memory-limit", "lots"}, err: "memoryLimit: \"lots\" is not a whole number"},
	})
}

func TestGCPercent(t *testing.T) {
	checkIntKey(t, "gcPercent", func(c *Config) int { return c.GCPercent }, []intCase{
		{name: "default", want: 50},
		{name: "flag", args: []string{"--gc-percent", "100"}, want: 100},
		{name: "environment", env: map[string]string{"OUTPOST_GC_PERCENT": "200"}, want: 200},
		{name: "file", file: "gcPercent: 25\n", want: 25},
		{name: "zero is the runtime's", args: []string{"--gc-percent", "0"}, want: 0},
		{name: "too small", args: []string{"--gc-percent", "5"}, err: "config gcPercent: must be 0 (the Go runtime's GOGC) or between 10 and 1000"},
		{name: "too large", args: []string{"--gc-percent", "5000"}, err: "config gcPercent: must be 0"},
		{name: "negative", args: []string{"--gc-percent", "-1"}, err: "config gcPercent"},
		{name: "not a number", args: []string{"--gc-percent", "half"}, err: "gcPercent"},
	})
}

func TestIdleMemoryReturn(t *testing.T) {
	seconds := func(c *Config) int { return int(c.IdleMemoryReturn / time.Second) }
	checkIntKey(t, "idleMemoryReturn", seconds, []intCase{
		{name: "default", want: 10},
		{name: "flag", args: []string{"--idle-memory-return", "1m"}, want: 60},
		{name: "environment", env: map[string]string{"OUTPOST_IDLE_MEMORY_RETURN": "30s"}, want: 30},
		{name: "file", file: "idleMemoryReturn: 5s\n", want: 5},
		{name: "zero is never", args: []string{"--idle-memory-return", "0"}, want: 0},
		{name: "too short", args: []string{"--idle-memory-return", "100ms"}, err: "config idleMemoryReturn: must be 0 (never) or between 1s and 1h"},
		{name: "too long", args: []string{"--idle-memory-return", "2h"}, err: "config idleMemoryReturn"},
		{name: "negative", args: []string{"--idle-memory-return", "-5s"}, err: "config idleMemoryReturn"},
		{name: "not a duration", args: []string{"--idle-memory-return", "soon"}, err: "idleMemoryReturn"},
	})
}
