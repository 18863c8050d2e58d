package federation

import (
	"testing"
	"time"

	"outpost/appliance/broker"
	"outpost/appliance/cot"
	"outpost/appliance/federation/fedproto"
)

// testLink is a link of a federation with no listener, on a broker of its
// own, whose queue the test reads.
func testLink(t *testing.T, maxHops int64) (*Federation, *link) {
	t.Helper()
	b := broker.New(broker.Options{})
	t.Cleanup(b.Close)
	f := New(Config{ServerID: "me", Name: "me", MaxHops: maxHops, Broker: b})
	l := f.newLink("peer", "peer-id", "test", nil)
	t.Cleanup(func() { l.close(); l.wait() })
	return f, l
}

func sa(uid string, lat float64) *cot.Event {
	now := time.Now().UTC().Truncate(time.Millisecond)
	return &cot.Event{Version: "2.0", UID: uid, Type: "a-f-G-U-C", How: "m-g", Time: now, Start: now, Stale: now.Add(time.Minute),
		Point:  cot.Point{Lat: lat, Hae: cot.Unknown, Ce: cot.Unknown, Le: cot.Unknown},
		Detail: cot.Detail{XML: []byte(`<contact callsign="C-` + uid + `" endpoint="*:-1:stcp"/>`), Contact: &cot.Contact{Callsign: "C-" + uid, Endpoint: "*:-1:stcp"}}}
}

// queued is the next event queued for the federate (contact entries
// skipped: contacts_test.go reads them).
func queued(l *link) *fedproto.FederatedEvent {
	for {
		select {
		case fe := <-l.out:
			if fe.GetEvent() == nil && fe.GetContact() != nil {
				continue
			}
			return fe
		default:
			return nil
		}
	}
}

// What starts here goes out with this server alone in its provenance and
// the configured hop limit; what came from a federate goes on with its
// provenance and one hop more, not to a federate it passed through, and not
// past its limit.
func TestSendProvenanceAndHops(t *testing.T) {
	f, l := testLink(t, 3)
	for queued(l) != nil { // the link's replay, if any
	}
	l.send(sa("LOCAL", 1), broker.AnonGroup, "", "")
	fe := queued(l)
	if fe == nil || len(fe.GetFederateProvenance()) != 1 || fe.GetFederateProvenance()[0].GetFederationServerId() != "me" ||
		fe.GetFederateHops().GetMaxHops() != 3 || fe.GetFederateHops().GetCurrentHops() != 1 || fe.GetFederateGroups()[0] != "__ANON__" {
		t.Fatalf("local event sent as %v", fe)
	}
	now := time.Now()
	from := func(ids ...string) []*fedproto.FederateProvenance {
		var ps []*fedproto.FederateProvenance
		for _, id := range ids {
			ps = append(ps, &fedproto.FederateProvenance{FederationServerId: id})
		}
		return ps
	}
	on := sa("ON", 2)
	f.recent.add(eventKey(on), &origin{provenance: from("x"), maxHops: 3, hops: 1}, now)
	l.send(on, broker.AnonGroup, "", "")
	if fe := queued(l); fe == nil || len(fe.GetFederateProvenance()) != 2 || fe.GetFederateHops().GetCurrentHops() != 2 {
		t.Fatalf("event sent on as %v", fe)
	}
	back := sa("BACK", 3)
	f.recent.add(eventKey(back), &origin{provenance: from("x", "peer-id"), maxHops: -1, hops: 2}, now)
	l.send(back, broker.AnonGroup, "", "")
	if fe := queued(l); fe != nil {
		t.Fatalf("event sent back to a federate it passed: %v", fe)
	}
	spent := sa("SPENT", 4)
	f.recent.add(eventKey(spent), &origin{provenance: from("x"), maxHops: 3, hops: 3}, now)
	l.send(spent, broker.AnonGroup, "", "")
	if fe := queued(l); fe != nil || l.stats.hopLimited.Load() != 1 {
		t.Fatalf("event past its limit: %v (hop limited %d)", fe, l.stats.hopLimited.Load())
	}
	// A remote contact's position the memory no longer holds (a replay
	// later) keeps the origin it came with.
	f.rememberRemote("REMOTE", l, &origin{provenance: from("peer-id"), maxHops: -1, hops: 1})
	l.send(sa("REMOTE", 5), broker.AnonGroup, "", "")
	if fe := queued(l); fe != nil {
		t.Fatalf("a remote contact's position went back to its federate: %v", fe)
	}
	f.forgetRemote("REMOTE", l)
	l.send(sa("REMOTE", 6), broker.AnonGroup, "", "")
	if fe := queued(l); fe == nil || len(fe.GetFederateProvenance()) != 1 {
		t.Fatalf("after the contact left, its uid is local again: %v", fe)
	}
}

// A full queue drops, counted, and never blocks the caller.
func TestSendQueueFull(t *testing.T) {
	_, l := testLink(t, 0)
	for i := 0; i < cap(l.out)+10; i++ {
		l.send(sa("Q", float64(i)), broker.AnonGroup, "", "")
	}
	if got := l.stats.dropQueue.Load(); got < 10 {
		t.Fatalf("dropped %d, want at least 10", got)
	}
}

// A received position makes a remote contact (a session the broker lists);
// the federate's contact entry deleting it makes it depart.
func TestReceiveContact(t *testing.T) {
	f, l := testLink(t, 0)
	g := toGeoEvent(sa("R-1", 7), "", "")
	l.receive(&fedproto.FederatedEvent{Event: g}, 100)
	clients := func() int { return len(f.cfg.Broker.Clients()) }
	if clients() != 1 || l.stats.published.Load() != 1 {
		t.Fatalf("clients %d, published %d", clients(), l.stats.published.Load())
	}
	l.receive(&fedproto.FederatedEvent{Contact: &fedproto.ContactListEntry{Operation: fedproto.CRUD_UPDATE, Uid: "R-1"}}, 10)
	if clients() != 1 || l.stats.ignored.Load() != 1 {
		t.Fatalf("an update removed the contact: clients %d", clients())
	}
	l.receive(&fedproto.FederatedEvent{Contact: &fedproto.ContactListEntry{Operation: fedproto.CRUD_DELETE, Uid: "R-1"}}, 10)
	if clients() != 0 {
		t.Fatalf("the deleted contact is still listed: %d", clients())
	}
	l.mu.Lock()
	n := len(l.contacts)
	l.mu.Unlock()
	if n != 0 || f.remoteOrigin("R-1") != nil {
		t.Fatalf("contacts %d, origin %v", n, f.remoteOrigin("R-1"))
	}
}
