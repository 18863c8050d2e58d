package federation

import (
	"testing"
	"time"

	"outpost/appliance/broker"
	"outpost/appliance/cot"
	"outpost/appliance/federation/fedproto"
)

// next is the next message queued for the federate (nil: none).
func next(l *link) *fedproto.FederatedEvent {
	select {
	case fe := <-l.out:
		return fe
	default:
		return nil
	}
}

// A local client is announced before its first position, again when its
// callsign changes, and deleted after its departure; a remote one is not.
func TestContactEntriesSent(t *testing.T) {
	f, l := testLink(t, 0)
	for next(l) != nil { // the link's replay, if any
	}
	entry := func(op fedproto.CRUD, uid, callsign string) {
		t.Helper()
		fe := next(l)
		ct := fe.GetContact()
		if fe.GetEvent() != nil || ct.GetOperation() != op || ct.GetUid() != uid || ct.GetCallsign() != callsign ||
			len(fe.GetFederateProvenance()) != 1 || fe.GetFederateProvenance()[0].GetFederationServerId() != "me" {
			t.Fatalf("want a %s entry of %s %s, got %v", op, uid, callsign, fe)
		}
	}
	event := func(uid string) {
		t.Helper()
		if fe := next(l); fe.GetEvent().GetUid() != uid {
			t.Fatalf("want the event of %s, got %v", uid, fe)
		}
	}
	l.send(sa("LOC", 1), broker.AnonGroup, "", "")
	entry(fedproto.CRUD_CREATE, "LOC", "C-LOC")
	event("LOC")
	l.send(sa("LOC", 2), broker.AnonGroup, "", "")
	event("LOC") // announced already
	moved := sa("LOC", 3)
	moved.Detail.Contact.Callsign = "RENAMED"
	l.send(moved, broker.AnonGroup, "", "")
	entry(fedproto.CRUD_UPDATE, "LOC", "RENAMED")
	event("LOC")
	dep := cot.NewDeparture("LOC", "a-f-G-U-C", time.Now())
	l.send(dep, broker.AnonGroup, "", "")
	event(dep.UID)
	entry(fedproto.CRUD_DELETE, "LOC", "a-f-G-U-C")
	if fe := next(l); fe != nil {
		t.Fatalf("more queued: %v", fe)
	}
	// A remote client's position goes on without an entry.
	on := sa("FAR", 4)
	f.recent.add(eventKey(on), &origin{provenance: []*fedproto.FederateProvenance{{FederationServerId: "x"}}, maxHops: -1, hops: 1}, time.Now())
	l.send(on, broker.AnonGroup, "", "")
	event("FAR")
	if fe := next(l); fe != nil || l.stats.contactsOut.Load() != 3 {
		t.Fatalf("after a remote position: %v, contacts out %d", fe, l.stats.contactsOut.Load())
	}
}

// A received CREATE entry makes a remote contact the broker lists by its
// callsign; UPDATE renames it; DELETE makes it depart; bad entries and
// loops are counted.
func TestContactEntriesReceived(t *testing.T) {
	f, l := testLink(t, 0)
	listed := func() (string, int) {
		cs := f.cfg.Broker.Clients()
		if len(cs) == 0 {
			return "", 0
		}
		return cs[0].Callsign, len(cs)
	}
	recv := func(op fedproto.CRUD, uid, callsign string, prov ...string) {
		fe := &fedproto.FederatedEvent{Contact: &fedproto.ContactListEntry{Operation: op, Uid: uid, Callsign: callsign}}
		for _, p := range prov {
			fe.FederateProvenance = append(fe.FederateProvenance, &fedproto.FederateProvenance{FederationServerId: p})
		}
		l.receive(fe, 50)
	}
	recv(fedproto.CRUD_CREATE, "E-1", "ECHO")
	if cs, n := listed(); n != 1 || cs != "ECHO" {
		t.Fatalf("after CREATE: %q %d", cs, n)
	}
	recv(fedproto.CRUD_UPDATE, "E-1", "ECHO-2")
	if cs, n := listed(); n != 1 || cs != "ECHO-2" {
		t.Fatalf("after UPDATE: %q %d", cs, n)
	}
	recv(fedproto.CRUD_CREATE, "", "NOUID")
	recv(fedproto.CRUD_CREATE, "E-2", "")
	recv(fedproto.CRUD_READ, "E-1", "X")
	recv(fedproto.CRUD_DELETE, "NOBODY", "")
	recv(fedproto.CRUD_CREATE, "E-3", "LOOPED", "me")
	if _, n := listed(); n != 1 || l.stats.ignored.Load() != 4 || l.stats.dropLoop.Load() != 1 {
		t.Fatalf("listed %d, ignored %d, loop %d", n, l.stats.ignored.Load(), l.stats.dropLoop.Load())
	}
	recv(fedproto.CRUD_DELETE, "E-1", "a-f-G-U-C")
	if _, n := listed(); n != 0 || l.stats.contactsIn.Load() != 3 {
		t.Fatalf("after DELETE: listed %d, contacts in %d", n, l.stats.contactsIn.Load())
	}
}

// A received contact entry is listed to the local groups its federate
// groups map to (as the contact's positions are published to them); one
// whose groups map to none is dropped and counted.
func TestContactEntriesGroups(t *testing.T) {
	f, l := testLink(t, 0)
	const cyan = uint64(1) << 5
	f.SetGroupMaps(map[string]GroupMap{"peer": {In: []InGroup{{Federate: "Fed-Blue", Local: cyan}}}})
	recv := func(uid string, groups ...string) {
		l.receive(&fedproto.FederatedEvent{Contact: &fedproto.ContactListEntry{Operation: fedproto.CRUD_CREATE, Uid: uid, Callsign: "C-" + uid},
			FederateGroups: groups}, 50)
	}
	recv("RED-1", "Fed-Red")
	if n := len(f.cfg.Broker.Clients()); n != 0 || l.stats.dropGroup.Load() != 1 {
		t.Fatalf("an entry of an unmapped group: %d listed, %d dropped by group", n, l.stats.dropGroup.Load())
	}
	recv("BLUE-1", "Fed-Blue")
	cs := f.cfg.Broker.Clients()
	if len(cs) != 1 || cs[0].UID != "BLUE-1" || cs[0].Groups != cyan {
		t.Fatalf("an entry of a mapped group: %+v, want BLUE-1 listed to Cyan only", cs)
	}
}
