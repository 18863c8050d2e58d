package federation

import (
	"slices"
	"testing"

	"outpost/appliance/broker"
	"outpost/appliance/federation/fedproto"
)

const (
	blue = uint64(1) << 5
	red  = uint64(1) << 6
)

// Without a mapping a federate is __ANON__ both ways, whatever an event's
// groups or tags; with one, only mapped groups go out (under their
// federate names) and only mapped tags come in.
func TestGroupMapResolution(t *testing.T) {
	d := defaultGroups
	if !slices.Equal(d.federateGroups(red), []string{"__ANON__"}) || d.localGroups([]string{"x"}) != broker.AnonGroup ||
		d.outMask != broker.AnonGroup || !slices.Equal(d.names, []string{"__ANON__"}) {
		t.Fatalf("default mapping: %+v", d)
	}
	g := newGroupMap(GroupMap{
		Out: []OutGroup{{blue, "Cyan"}, {broker.AnonGroup, "__ANON__"}, {red, "Cyan"}},
		In:  []InGroup{{"Cyan", blue}, {"Cyan", red}, {"Teal", broker.AnonGroup}},
	})
	for _, tc := range []struct {
		mask uint64
		want []string
	}{{blue, []string{"Cyan"}}, {red | blue, []string{"Cyan"}}, {broker.AllGroups, []string{"Cyan", "__ANON__"}}, {1 << 9, nil}, {0, nil}} {
		if got := g.federateGroups(tc.mask); !slices.Equal(got, tc.want) {
			t.Errorf("federateGroups(%b) = %v, want %v", tc.mask, got, tc.want)
		}
	}
	if g.outMask != blue|red|broker.AnonGroup || !slices.Equal(g.names, []string{"Cyan", "__ANON__"}) {
		t.Fatalf("out mask %b, names %v", g.outMask, g.names)
	}
	for _, tc := range []struct {
		tags []string
		want uint64
	}{{[]string{"Cyan"}, blue | red}, {[]string{"Teal", "Nope"}, broker.AnonGroup}, {[]string{"Nope"}, 0}, {nil, 0}} {
		if got := g.localGroups(tc.tags); got != tc.want {
			t.Errorf("localGroups(%v) = %b, want %b", tc.tags, got, tc.want)
		}
	}
	// "*": every event of the federate, tagged or not.
	any := newGroupMap(GroupMap{In: []InGroup{{AnyFederateGroup, red}, {"Cyan", blue}}})
	if any.localGroups(nil) != red || any.localGroups([]string{"Cyan"}) != red|blue {
		t.Fatalf("'*' maps untagged to %b, Cyan to %b", any.localGroups(nil), any.localGroups([]string{"Cyan"}))
	}
}

// A link follows its federate's mapping: what it sends carries the mapped
// federate groups and what is not mapped out does not go; what it receives
// reaches the mapped local groups' clients only, and what maps to no local
// group is dropped and counted. A change applies to the open link.
func TestLinkGroupMapping(t *testing.T) {
	f, l := testLink(t, 0)
	for queued(l) != nil {
	}
	f.mu.Lock()
	f.links[l.name] = l // as attach does
	f.mu.Unlock()
	f.SetGroupMaps(map[string]GroupMap{"peer": {
		Out: []OutGroup{{blue, "Cyan"}},
		In:  []InGroup{{"Cyan", blue}},
	}})
	if _, out := l.own.Sess.Groups(); out != blue {
		t.Fatalf("the link's session reads %b, want %b", out, blue)
	}
	l.send(sa("B-1", 1), blue, "", "")
	if fe := queued(l); fe == nil || !slices.Equal(fe.GetFederateGroups(), []string{"Cyan"}) {
		t.Fatalf("a Blue event went as %v", fe)
	}
	l.send(sa("R-1", 1), red, "", "")
	if fe := queued(l); fe != nil {
		t.Fatalf("a Red event (not mapped out) went: %v", fe)
	}

	b := f.cfg.Broker
	blueClient := b.Join(broker.SessionInfo{In: blue, Out: blue, Grouped: true})
	redClient := b.Join(broker.SessionInfo{In: red, Out: red, Grouped: true})
	defer blueClient.Close(broker.ReasonClientClosed)
	defer redClient.Close(broker.ReasonClientClosed)
	l.receive(&fedproto.FederatedEvent{Event: toGeoEvent(sa("FAR-1", 2), "", ""), FederateGroups: []string{"Cyan"}}, 100)
	l.receive(&fedproto.FederatedEvent{Event: toGeoEvent(sa("FAR-2", 3), "", ""), FederateGroups: []string{"Magenta"}}, 100)
	l.receive(&fedproto.FederatedEvent{Event: toGeoEvent(sa("FAR-3", 4), "", "")}, 100)
	if l.stats.published.Load() != 1 || l.stats.dropGroup.Load() != 2 {
		t.Fatalf("published %d, dropped by group %d", l.stats.published.Load(), l.stats.dropGroup.Load())
	}
	uids := func(s *broker.Session) []string {
		var out []string
		for _, env := range s.Take(nil) {
			out = append(out, env.Event.UID)
		}
		return out
	}
	if got := uids(blueClient); !slices.Equal(got, []string{"FAR-1"}) {
		t.Fatalf("the Blue client received %v", got)
	}
	if got := uids(redClient); len(got) != 0 {
		t.Fatalf("the Red client received %v", got)
	}
	st := f.Stats()
	if len(st) != 1 || st[0].DroppedGroup != 2 {
		t.Fatalf("stats %+v", st)
	}

	f.SetGroupMaps(nil) // back to __ANON__ both ways
	if _, out := l.own.Sess.Groups(); out != broker.AnonGroup {
		t.Fatalf("without a mapping the link's session reads %b", out)
	}
	l.receive(&fedproto.FederatedEvent{Event: toGeoEvent(sa("FAR-4", 5), "", ""), FederateGroups: []string{"Magenta"}}, 100)
	if l.stats.published.Load() != 2 {
		t.Fatalf("without a mapping an event was not published: %d", l.stats.published.Load())
	}
}

// A federate's announced groups are kept, bounded and without repeats.
func TestAnnouncedGroups(t *testing.T) {
	f, _ := testLink(t, 0)
	if f.AnnouncedGroups("peer") != nil {
		t.Fatal("announced before any announcement")
	}
	long := string(make([]byte, maxAnnouncedName+1))
	f.noteAnnounced("peer", []string{"b", "a", "b", "", long})
	if got := f.AnnouncedGroups("peer"); !slices.Equal(got, []string{"a", "b"}) {
		t.Fatalf("announced %v", got)
	}
}
