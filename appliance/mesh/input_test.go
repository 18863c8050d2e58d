package mesh

import (
	"context"
	"fmt"
	"net/netip"
	"strings"
	"testing"
	"time"

	"outpost/appliance/broker"
	"outpost/appliance/cot"
	"outpost/internal/testkit"
)

func startInput(t *testing.T, b *broker.Broker, src Sources) (*Input, netip.AddrPort) {
	t.Helper()
	src.Broker, src.Logger = b, quiet
	in := NewInput(InputConfig{Sources: src, Addr: "127.0.0.1:0"})
	if err := in.Listen(); err != nil {
		t.Fatal(err)
	}
	in.Serve()
	t.Cleanup(func() { in.Shutdown(context.Background()) })
	return in, in.Addr().(interface{ AddrPort() netip.AddrPort }).AddrPort()
}

// Unicast UDP: each source address is an anonymous client listed with
// listener "udp"; XML and protocol v1 mesh datagrams are read.
func TestInputPublishes(t *testing.T) {
	b := broker.New(broker.Options{Logger: quiet})
	tcp := newClient(b, "")
	_, to := startInput(t, b, Sources{})
	dev := sender(t, "127.0.0.1:0")
	dev.WriteToUDPAddrPort(saEvent("UDP-1", "UDP ONE").AppendXML(nil), to)
	tcp.waitFor(t, "the XML SA sent by UDP", 5*time.Second, uidIs("UDP-1"))
	dev.WriteToUDPAddrPort(meshFrame(t, saEvent("UDP-2", "UDP TWO")), to)
	tcp.waitFor(t, "the protocol v1 SA sent by UDP", 5*time.Second, uidIs("UDP-2"))
	for _, c := range b.Clients() {
		if c.UID == "UDP-2" && (c.Listener != InputListenerName || c.Address != "127.0.0.1") {
			t.Fatalf("client row %+v", c)
		}
	}
}

// Bad input from one source is counted and dropped, and the others'
// datagrams keep flowing: malformed, oversized, duplicated.
func TestInputBadDatagrams(t *testing.T) {
	b := broker.New(broker.Options{Logger: quiet})
	tcp := newClient(b, "")
	in, to := startInput(t, b, Sources{MaxDatagram: 1024})
	bad := sender(t, "127.0.0.1:0")
	for _, d := range [][]byte{
		[]byte("<event"), {0xBF, 0x01, 0xBF, 0xFF, 0xFF}, {0xBF, 0x02, 0xBF, 0x0A}, []byte("hello"),
		{0xBF, 0x01, 0xBF}, // a TakMessage without an event
	} {
		bad.WriteToUDPAddrPort(d, to)
	}
	waitStat(t, "the malformed datagrams counted", in.Stats, func(s Stats) bool { return s.DroppedMalformed == 5 })
	bad.WriteToUDPAddrPort([]byte(strings.Repeat("x", 2000)), to)
	waitStat(t, "the oversized datagram counted", in.Stats, func(s Stats) bool { return s.DroppedSize == 1 })

	// The same datagram twice: the copy is dropped.
	good := sender(t, "127.0.0.2:0")
	one := saEvent("GOOD", "GOOD").AppendXML(nil)
	good.WriteToUDPAddrPort(one, to)
	good.WriteToUDPAddrPort(one, to)
	waitStat(t, "the copy counted", in.Stats, func(s Stats) bool { return s.DroppedDuplicate == 1 })
	tcp.waitFor(t, "the good source's SA", 5*time.Second, uidIs("GOOD"))
	if st := in.Stats(); st.EventsIn != 1 || st.Devices != 2 {
		t.Fatalf("after the bad datagrams: %+v", st)
	}
}

// Over its budget a source loses datagrams (it cannot be pushed back) and
// the others are unaffected; past the most sources allowed, a new one is
// dropped.
func TestInputBudgets(t *testing.T) {
	b := broker.New(broker.Options{Logger: quiet})
	tcp := newClient(b, "")
	in, to := startInput(t, b, Sources{MaxEventsPerSecond: 1, MaxSources: 3})
	bad := sender(t, "127.0.0.1:0")
	bad.WriteToUDPAddrPort(saEvent("BAD", "BAD").AppendXML(nil), to)
	good := sender(t, "127.0.0.2:0")
	good.WriteToUDPAddrPort(saEvent("GOOD", "GOOD").AppendXML(nil), to)
	tcp.waitFor(t, "the good source's SA", 5*time.Second, uidIs("GOOD"))

	// One event a second with a two-second burst: of six at once, one
	// passes (GOOD's SA above took the other token; two if a second went by
	// since), the rest are dropped; another source is unaffected.
	before := in.Stats()
	for i := range 6 {
		good.WriteToUDPAddrPort(saEvent(fmt.Sprintf("GOOD-%d", i), "GOOD").AppendXML(nil), to)
	}
	st := waitStat(t, "the flood's datagrams counted", in.Stats, func(s Stats) bool { return s.DatagramsIn-before.DatagramsIn == 6 })
	passed, dropped := st.EventsIn-before.EventsIn, st.DroppedBudget-before.DroppedBudget
	if passed < 1 || passed > 2 || dropped != 6-passed {
		t.Fatalf("of six datagrams over budget, %d passed and %d were dropped; want 1 (or 2) and the rest", passed, dropped)
	}
	other := sender(t, "127.0.0.3:0")
	other.WriteToUDPAddrPort(saEvent("OTHER", "OTHER").AppendXML(nil), to)
	tcp.waitFor(t, "another source's SA during the flood", 5*time.Second, uidIs("OTHER"))

	// Three sources are listed (bad, good, other), the most allowed: a
	// fourth is dropped; so is a third port of one address.
	testkit.WaitFor(t, "three sources", func() bool { return in.Stats().Devices == 3 })
	fourth := sender(t, "127.0.0.4:0")
	fourth.WriteToUDPAddrPort(saEvent("FOURTH", "FOURTH").AppendXML(nil), to)
	waitStat(t, "the fourth source dropped", in.Stats, func(s Stats) bool { return s.DroppedBudget-st.DroppedBudget == 1 })
	if in.Stats().Devices != 3 {
		t.Fatalf("%d sources listed, at most 3", in.Stats().Devices)
	}
}

// A source that per-host limits: a third port of one address is refused
// while two are listed.
func TestInputSourcesPerHost(t *testing.T) {
	b := broker.New(broker.Options{Logger: quiet})
	in, to := startInput(t, b, Sources{MaxSourcesPerHost: 2})
	for i := range 3 {
		s := sender(t, "127.0.0.5:0")
		s.WriteToUDPAddrPort(saEvent(fmt.Sprintf("PORT-%d", i), "P").AppendXML(nil), to)
		waitStat(t, "the datagram read", in.Stats, func(s Stats) bool { return s.DatagramsIn == uint64(i+1) })
	}
	// A datagram is counted as read before its source is admitted or
	// dropped: wait for the drop, then check what was admitted.
	waitStat(t, "the third port dropped", in.Stats, func(s Stats) bool { return s.DroppedBudget >= 1 })
	if st := in.Stats(); st.Devices != 2 || st.DroppedBudget != 1 {
		t.Fatalf("three ports of one address: %d listed, %d dropped; want 2 and 1", st.Devices, st.DroppedBudget)
	}
}

// A source silent for the idle timeout is forgotten: the clients get its
// departure, as for a TCP client that left.
func TestInputIdleSourceDeparts(t *testing.T) {
	b := broker.New(broker.Options{Logger: quiet})
	tcp := newClient(b, "")
	in, to := startInput(t, b, Sources{IdleTimeout: time.Second})
	dev := sender(t, "127.0.0.1:0")
	dev.WriteToUDPAddrPort(saEvent("GONE", "GONE").AppendXML(nil), to)
	tcp.waitFor(t, "the SA", 5*time.Second, uidIs("GONE"))
	tcp.waitFor(t, "the idle source's departure", 10*time.Second, func(e *cot.Event) bool {
		return e.Type == "t-x-d-d" && strings.Contains(string(e.Detail.XML), "GONE")
	})
	testkit.WaitFor(t, "the source forgotten", func() bool { return in.Stats().Devices == 0 })
}
