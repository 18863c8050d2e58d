package broker

import (
	"errors"
	"testing"
)

// Identify lists a session as the client it names without publishing
// anything; its departure is announced like a client's; the uid bindings
// hold as for an SA.
func TestIdentify(t *testing.T) {
	b := newBroker(t, Options{})
	fed := b.Join(SessionInfo{Listener: "federation"})
	other := b.Join(SessionInfo{Listener: "cot-tcp"})
	drain(other)
	if err := fed.Identify("", "X"); err == nil {
		t.Fatal("identified without a uid")
	}
	if err := fed.Identify("REMOTE-1", "FAR"); err != nil {
		t.Fatal(err)
	}
	cs := b.Clients()
	if len(cs) != 1 || cs[0].UID != "REMOTE-1" || cs[0].Callsign != "FAR" || cs[0].Listener != "federation" {
		t.Fatalf("clients %+v", cs)
	}
	if got := drain(other); len(got) != 0 {
		t.Fatalf("Identify published %v", uidsOf(got))
	}
	// A position report later keeps the uid and its type; another callsign renames.
	if err := b.Publish(sa("REMOTE-1", "FAR", "a-h-G"), fed); err != nil {
		t.Fatal(err)
	}
	drain(other)
	if err := fed.Identify("REMOTE-1", "NEAR"); err != nil || fed.Identity().SAType != "a-h-G" || b.Clients()[0].Callsign != "NEAR" {
		t.Fatalf("renamed: %v %+v", err, fed.Identity())
	}
	// A uid bound to a certificate is refused as for an SA.
	alice := b.Join(SessionInfo{Listener: "cot-tls", User: "alice"})
	if err := b.Publish(sa("ALICE", "ALICE", "a-f-G-U-C"), alice); err != nil {
		t.Fatal(err)
	}
	imp := b.Join(SessionInfo{Listener: "federation"})
	if err := imp.Identify("ALICE", "EVE"); !errors.Is(err, ErrUIDTaken) {
		t.Fatalf("a bound uid: %v", err)
	}
	drain(other)
	fed.Close(ReasonClientClosed)
	if got := drain(other); len(got) != 1 || got[0].Event.Type != "t-x-d-d" {
		t.Fatalf("departure %v", uidsOf(got))
	}
}
