package mesh

import (
	"bytes"
	"context"
	"net/netip"
	"strings"
	"testing"
	"time"

	"outpost/appliance/broker"
	"outpost/appliance/cot"
	"outpost/appliance/takclient"
)

var (
	testSA   = netip.MustParseAddrPort("239.2.3.1:6969")
	testChat = netip.MustParseAddrPort("224.10.10.1:17012")
)

func startBridge(t *testing.T, b *broker.Broker, proto cot.Protocol, directPort int) *Bridge {
	t.Helper()
	br := NewBridge(BridgeConfig{Sources: Sources{Broker: b, Logger: quiet, MaxDatagram: 2048},
		SA: testSA, Chat: testChat, Protocol: proto, DirectPort: directPort})
	if err := br.Listen(); err != nil {
		t.Fatal(err)
	}
	br.Serve()
	t.Cleanup(func() { br.Shutdown(context.Background()) })
	return br
}

// Both ways over real multicast (loopback of the test's own namespace):
// a server client's SA and chat reach the mesh groups, a device's XML and
// protocol v1 datagrams reach the client, nothing goes back where it came
// from, a chat addressed to a device goes to it alone, and an event larger
// than a datagram is counted, not sent.
func TestBridgeBothWays(t *testing.T) {
	isolate(t)
	b := broker.New(broker.Options{Logger: quiet})
	meshSA, meshChat := listener(t, testSA), listener(t, testChat)
	tcp := newClient(b, "TCP-1") // before the bridge: its SA is in the bridge's replay
	direct := sender(t, "127.0.0.2:4242")
	br := startBridge(t, b, cot.ProtocolXML, 4242)

	receive(t, meshSA, "the TCP client's SA on the SA group", 5*time.Second, uidIs("TCP-1"))

	dev := sender(t, "127.0.0.2:40000")
	if _, err := dev.WriteToUDPAddrPort(saEvent("DEV-1", "MESH ONE").AppendXML(nil), testSA); err != nil {
		t.Fatal(err)
	}
	tcp.waitFor(t, "the device's XML SA", 5*time.Second, uidIs("DEV-1"))
	if _, err := dev.WriteToUDPAddrPort(meshFrame(t, saEvent("DEV-1", "MESH ONE")), testSA); err != nil {
		t.Fatal(err)
	}
	dev2 := sender(t, "127.0.0.3:40000")
	if _, err := dev2.WriteToUDPAddrPort(meshFrame(t, saEvent("DEV-2", "MESH TWO")), testSA); err != nil {
		t.Fatal(err)
	}
	tcp.waitFor(t, "the second device's protocol v1 SA", 5*time.Second, uidIs("DEV-2"))
	var row broker.ClientInfo
	for _, c := range b.Clients() {
		if c.UID == "DEV-1" {
			row = c
		}
	}
	if row.Listener != ListenerName || row.Address != "127.0.0.2" || row.Callsign != "MESH ONE" {
		t.Fatalf("the device's client row: %+v", row)
	}

	// The bridge's own datagrams came back through loopback: recognised.
	waitStat(t, "the bridge's own datagrams recognised", br.Stats, func(s Stats) bool { return s.DroppedLoop > 0 })

	// Chat both ways, on the chat group.
	tcpChat := takclient.Chat("TCP-1", "hello mesh")
	b.Publish(tcpChat, tcp.s)
	receive(t, meshChat, "the client's chat on the chat group", 5*time.Second, uidIs(tcpChat.UID))
	devChat := takclient.Chat("DEV-1", "hello server")
	if _, err := dev.WriteToUDPAddrPort(devChat.AppendXML(nil), testChat); err != nil {
		t.Fatal(err)
	}
	tcp.waitFor(t, "the device's chat", 5*time.Second, uidIs(devChat.UID))

	// Addressed to DEV-1: by unicast to its address, port 4242.
	dm := takclient.Chat("TCP-1", "for you only", cot.Dest{UID: "DEV-1"})
	b.Publish(dm, tcp.s)
	receive(t, direct, "the chat addressed to the device, by unicast", 5*time.Second, uidIs(dm.UID))

	// Larger than a datagram (2 KiB here): counted, not sent.
	big := saEvent("TCP-1", "C-TCP-1")
	big.Detail.XML = append(big.Detail.XML, []byte("<remarks>"+strings.Repeat("x", 3000)+"</remarks>")...)
	before := br.Stats().DroppedOutSize
	b.Publish(big, tcp.s)
	waitStat(t, "the oversized event counted", br.Stats, func(s Stats) bool { return s.DroppedOutSize > before })

	// Nothing the mesh sent went back to it: within a second, the SA group
	// carries DEV-2's datagram once (its own), never a copy from the bridge.
	flush(meshSA)
	if _, err := dev2.WriteToUDPAddrPort(meshFrame(t, saEvent("DEV-2", "MESH TWO")), testSA); err != nil {
		t.Fatal(err)
	}
	copies := 0
	buf := make([]byte, 70000)
	deadline := time.Now().Add(time.Second)
	for {
		meshSA.SetReadDeadline(deadline)
		n, _, err := meshSA.ReadFromUDPAddrPort(buf)
		if err != nil {
			break
		}
		if ev, err := decodeDatagram(buf[:n]); err == nil && ev.UID == "DEV-2" {
			copies++
		}
	}
	if copies != 1 {
		t.Fatalf("DEV-2's SA was on the mesh %d times, want once (its own)", copies)
	}
	for _, e := range tcp.got {
		if e.UID == "TCP-1" && e.Type == "a-f-G-U-C" {
			t.Fatalf("the client's own SA came back to it through the mesh")
		}
	}
}

// In protocol v1 the bridge sends mesh datagrams: 0xBF 0x01 0xBF and a
// TakMessage.
func TestBridgeSendsProtocolV1(t *testing.T) {
	isolate(t)
	b := broker.New(broker.Options{Logger: quiet})
	meshSA := listener(t, testSA)
	startBridge(t, b, cot.ProtocolV1, 0)
	tcp := newClient(b, "")
	b.Publish(saEvent("TCP-V1", "V ONE"), tcp.s)
	d := receive(t, meshSA, "the SA as a mesh datagram", 5*time.Second, uidIs("TCP-V1"))
	if !bytes.HasPrefix(d, []byte{0xBF, 0x01, 0xBF}) {
		t.Fatalf("datagram starts % x, want the mesh header", d[:min(len(d), 8)])
	}
}

// Two bridges on one mesh (two appliances side by side): each relays the
// other's clients to its own, and neither sends back what it heard from
// the mesh, so nothing ping-pongs.
func TestTwoBridgesDoNotPingPong(t *testing.T) {
	isolate(t)
	ba := broker.New(broker.Options{Logger: quiet})
	bb := broker.New(broker.Options{Logger: quiet})
	brA := startBridge(t, ba, cot.ProtocolXML, 0)
	brB := startBridge(t, bb, cot.ProtocolV1, 0)
	a, bcl := newClient(ba, ""), newClient(bb, "")
	ba.Publish(saEvent("ALPHA", "ALPHA"), a.s)
	bcl.waitFor(t, "A's client on B", 5*time.Second, uidIs("ALPHA"))
	bb.Publish(saEvent("BRAVO", "BRAVO"), bcl.s)
	a.waitFor(t, "B's client on A", 5*time.Second, uidIs("BRAVO"))
	time.Sleep(time.Second) // what a ping-pong would send meanwhile
	sa, sb := brA.Stats(), brB.Stats()
	if sa.DatagramsOut != 1 || sb.DatagramsOut != 1 {
		t.Fatalf("datagrams sent: A %d, B %d; want one each (its own client's SA)", sa.DatagramsOut, sb.DatagramsOut)
	}
	if sa.EventsIn != 1 || sb.EventsIn != 1 {
		t.Logf("A's clients %+v; B's clients %+v; A %+v; B %+v", ba.Clients(), bb.Clients(), sa, sb)
		t.Fatalf("events from the mesh: A %d, B %d; want one each (the other's client)", sa.EventsIn, sb.EventsIn)
	}
	for _, e := range a.got {
		if e.UID == "ALPHA" {
			t.Fatal("A's client received its own SA back")
		}
	}
}
