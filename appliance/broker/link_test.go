package broker

import (
	"slices"
	"strings"
	"testing"

	"outpost/appliance/cot"
)

// A mesh bridge is one session that carries broadcasts to the mesh and one
// directed-only session per mesh device: nothing a device published goes
// back to the mesh (same link), a device reads only what is addressed to
// it, and a server client sees both sides.
func TestLinkAndDirectedOnly(t *testing.T) {
	b := newBroker(t, Options{})
	tcp := b.Join(SessionInfo{Listener: "cot-tcp"})
	b.Publish(sa("TCP", "TCPCALL", "a-f-G"), tcp)
	bridge := b.Join(SessionInfo{Listener: "mesh", Link: "mesh"})
	dev := b.Join(SessionInfo{Listener: "mesh", Link: "mesh", DirectedOnly: true})
	if got := uidsOf(drain(bridge)); !slices.Equal(got, []string{"a-f-G/TCP"}) {
		t.Fatalf("the bridge's replay: %v, want the TCP client's SA", got)
	}
	if got := drain(dev); len(got) != 0 {
		t.Fatalf("a directed-only session took a replay: %v", uidsOf(got))
	}
	drain(tcp)

	// A device's SA reaches the TCP client, not the bridge (same link).
	b.Publish(sa("DEV", "DEVCALL", "a-f-G"), dev)
	if got := uidsOf(drain(tcp)); !slices.Equal(got, []string{"a-f-G/DEV"}) {
		t.Fatalf("tcp got %v", got)
	}
	if got := drain(bridge); len(got) != 0 {
		t.Fatalf("the mesh's own SA went back to the mesh: %v", uidsOf(got))
	}
	// The TCP client's broadcast reaches the bridge only, once.
	b.Publish(sa("TCP", "TCPCALL", "a-f-G"), tcp)
	if got := uidsOf(drain(bridge)); !slices.Equal(got, []string{"a-f-G/TCP"}) {
		t.Fatalf("bridge got %v", got)
	}
	if got := drain(dev); len(got) != 0 {
		t.Fatalf("a directed-only session read a broadcast: %v", uidsOf(got))
	}
	// A chat addressed to the device reaches the device, not the bridge.
	b.Publish(chat("TCP-CHAT", cot.Dest{UID: "DEV"}), tcp)
	if got := uidsOf(drain(dev)); !slices.Equal(got, []string{"b-t-f/TCP-CHAT"}) {
		t.Fatalf("device got %v", got)
	}
	if got := drain(bridge); len(got) != 0 {
		t.Fatalf("the bridge read a chat addressed to a device: %v", uidsOf(got))
	}
	// A device's chat to another device of the same link is not read back.
	dev2 := b.Join(SessionInfo{Listener: "mesh", Link: "mesh", DirectedOnly: true})
	b.Publish(sa("DEV2", "DEV2CALL", "a-f-G"), dev2)
	drain(tcp)
	b.Publish(chat("DEV-CHAT", cot.Dest{UID: "DEV2"}), dev)
	if got := drain(dev2); len(got) != 0 {
		t.Fatalf("a chat between two mesh devices came back to the mesh: %v", uidsOf(got))
	}
	// A departure of a device is not sent to the mesh either.
	dev.Close(ReasonIdle)
	if got := uidsOf(drain(tcp)); len(got) != 1 || !strings.HasPrefix(got[0], "t-x-d-d/") {
		t.Fatalf("tcp got %v at the device's departure", got)
	}
	if got := drain(bridge); len(got) != 0 {
		t.Fatalf("a mesh device's departure went to the mesh: %v", uidsOf(got))
	}
	// Nothing is held for sessions that never read: the log trims.
	for range 10 {
		b.Publish(sa("TCP", "TCPCALL", "a-f-G"), tcp)
	}
	drain(bridge)
	drain(dev2)
	b.trim(false)
	if frames, _ := b.events.held(); frames != 0 {
		t.Fatalf("the log holds %d entries after every session read", frames)
	}
}
