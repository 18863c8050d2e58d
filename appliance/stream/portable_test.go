package stream

import (
	"testing"

	"outpost/appliance/broker"
)

// withoutWaiter makes start serve as where there is no waiter (systems
// other than Linux): readers wait in Read, and a busy connection's writer
// gathers on its own goroutine instead of being written by a flusher.
var withoutWaiter bool

// TestWithoutWaiter runs relay tests on those paths.
func TestWithoutWaiter(t *testing.T) {
	withoutWaiter = true
	defer func() { withoutWaiter = false }()
	for name, test := range map[string]func(*testing.T){
		"MixedFormatsExchangeSAs": TestMixedFormatsExchangeSAs,
		"PingPong":                TestPingPong,
		"DepartureAndDirected":    TestDepartureAndDirected,
		"ShutdownDrainsQueues":    TestShutdownDrainsQueues,
		"IdleTimeout":             TestIdleTimeout,
		"SlowConsumer":            TestSlowConsumer,
		"SlowReader":              TestSlowReader,
	} {
		t.Run(name, test)
	}
	s := start(t, Config{}, broker.Options{})
	if s.l.waiter != nil || s.l.flushers != nil {
		t.Fatal("the listener has a waiter or flushers")
	}
}
