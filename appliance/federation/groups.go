package federation

import (
	"slices"
	"sync"
	"sync/atomic"

	"outpost/appliance/broker"
)

// Group mapping per federate (docs/federation.md "Groups"), as the
// official server's federate "outbound groups" and "inbound group
// mapping" (CoreConfig.xsd `federate`; GroupFederationUtil.java
// filterFedOutboundGroups and addFederateGroupMapping): an event goes to a
// federate when its groups (its sender's IN groups) meet a local group
// mapped out, and it carries in `FederatedEvent.federateGroups` the
// federate groups those local groups are mapped to; an event received is
// published to the local groups its federate groups map to, and dropped
// (counted, `group`) when they map to none. A direction without pairs is
// __ANON__ that way, as before group mapping existed: everything the
// federate sends is published to __ANON__; what __ANON__ carries goes out
// tagged __ANON__.

// GroupMap is one federate's group mapping, local groups resolved to their
// masks by the caller (the appliance reads the store's names).
type GroupMap struct {
	Out []OutGroup // local groups whose events go out, and as which federate group
	In  []InGroup  // federate groups, and the local groups their events go to
}

// OutGroup maps a local group (its mask) to the federate group its events
// go out as.
type OutGroup struct {
	Local    uint64
	Federate string
}

// InGroup maps a federate group to local groups (a mask).
type InGroup struct {
	Federate string
	Local    uint64
}

// groupMap is a federate's mapping in use (never changed once made).
type groupMap struct {
	src     GroupMap
	out     []OutGroup        // nil: __ANON__ out
	outMask uint64            // what the federate's sessions read
	names   []string          // the federate groups announced (FederateGroups), sorted
	in      map[string]uint64 // nil: everything received is published to __ANON__
}

// defaultGroups is the mapping of a federate without one.
var defaultGroups = newGroupMap(GroupMap{})

func newGroupMap(m GroupMap) *groupMap {
	g := &groupMap{src: m, outMask: broker.AnonGroup, names: anonGroups}
	if len(m.Out) > 0 {
		g.out, g.outMask, g.names = m.Out, 0, nil
		for _, o := range m.Out {
			g.outMask |= o.Local
			if !slices.Contains(g.names, o.Federate) {
				g.names = append(g.names, o.Federate)
			}
		}
		slices.Sort(g.names)
	}
	if len(m.In) > 0 {
		g.in = make(map[string]uint64, len(m.In))
		for _, i := range m.In {
			g.in[i.Federate] |= i.Local
		}
	}
	return g
}

// federateGroups are the federate groups an event of the local groups of
// mask goes out as (nil: it does not go). Without an outbound mapping,
// __ANON__ whatever the mask (what the federate's sessions read is what
// __ANON__ sees, as before mapping existed).
func (g *groupMap) federateGroups(mask uint64) []string {
	if g.out == nil {
		return anonGroups
	}
	var out []string
	for _, o := range g.out {
		if mask&o.Local != 0 && !slices.Contains(out, o.Federate) {
			out = append(out, o.Federate)
		}
	}
	return out
}

// rolGroups are the federate groups a mission of the local groups of mask
// goes out as (nil: it does not go to this federate). Unlike an event's
// (which the federate's sessions read only when __ANON__ or a mapped group
// sees it), a mission is checked here: without an outbound mapping only a
// mission __ANON__ sees goes, tagged __ANON__.
func (g *groupMap) rolGroups(mask uint64) []string {
	if mask == 0 {
		mask = broker.AnonGroup
	}
	if g.out == nil {
		if mask&broker.AnonGroup == 0 {
			return nil
		}
		return anonGroups
	}
	return g.federateGroups(mask)
}

// AnyFederateGroup, as an inbound pair's federate group, stands for every
// event of the federate whatever its tags (none included): the official
// server's federate "inboundGroup", for a federate that does not tag its
// events (an official server without federatedGroupMapping sends no
// federateGroups).
const AnyFederateGroup = "*"

// localGroups is the mask of the local groups an event tagged with the
// federate groups tags is published to (0: none, it is dropped). Without
// an inbound mapping, __ANON__ whatever the tags.
func (g *groupMap) localGroups(tags []string) uint64 {
	if g.in == nil {
		return broker.AnonGroup
	}
	m := g.in[AnyFederateGroup]
	for _, t := range tags {
		m |= g.in[t]
	}
	return m
}

// groupState is what Federation keeps of the mappings.
type groupState struct {
	// cur is the mappings by federate name (never changed once stored:
	// every event a link sends or receives reads it, without a lock).
	cur       atomic.Pointer[map[string]*groupMap]
	mu        sync.Mutex          // guards the rest, and serialises SetGroupMaps
	changed   chan struct{}       // closed (and replaced) at each change
	announced map[string][]string // the federate groups each federate announced
}

// maxAnnounced bounds the groups kept of one federate's announcement (and
// the federates whose announcement is kept).
const (
	maxAnnounced          = 256
	maxAnnouncedFederates = 1024
	maxAnnouncedName      = 255
)

// groupsOf is the mapping of the federate name.
func (f *Federation) groupsOf(name string) *groupMap {
	if m := f.groups.cur.Load(); m != nil {
		if g := (*m)[name]; g != nil {
			return g
		}
	}
	return defaultGroups
}

// groupsChanged is closed at the next change of any mapping.
func (f *Federation) groupsChanged() <-chan struct{} {
	f.groups.mu.Lock()
	defer f.groups.mu.Unlock()
	if f.groups.changed == nil {
		f.groups.changed = make(chan struct{})
	}
	return f.groups.changed
}

// SetGroupMaps makes the group mappings those of maps (by federate name;
// a federate not in it has none). A change applies at once: what a
// federate's sessions read follows its outbound mapping, events received
// from then on are published by its inbound mapping, and its new outbound
// groups are announced on its groups stream.
func (f *Federation) SetGroupMaps(maps map[string]GroupMap) {
	next := make(map[string]*groupMap, len(maps))
	// Held to the end: two calls apply their masks to the sessions in
	// turn, the last one's staying (the sessions' own locks come after
	// this one, and nothing takes this one under them).
	f.groups.mu.Lock()
	defer f.groups.mu.Unlock()
	var cur map[string]*groupMap
	if p := f.groups.cur.Load(); p != nil {
		cur = *p
	}
	var outChanged []string
	for name, m := range maps {
		if len(m.Out) == 0 && len(m.In) == 0 {
			continue
		}
		if old := cur[name]; old != nil && sameGroupMap(old.src, m) {
			next[name] = old
			continue
		}
		next[name] = newGroupMap(m)
	}
	changed := len(next) != len(cur)
	for name, g := range next {
		old := cur[name]
		if old != g {
			changed = true
		}
		if old == nil || old.outMask != g.outMask {
			outChanged = append(outChanged, name)
		}
	}
	for name, old := range cur {
		if next[name] == nil {
			changed = true
			if old.outMask != defaultGroups.outMask {
				outChanged = append(outChanged, name)
			}
		}
	}
	if !changed {
		return
	}
	f.groups.cur.Store(&next)
	if f.groups.changed != nil {
		close(f.groups.changed)
		f.groups.changed = nil
	}
	for _, name := range outChanged {
		mask := f.groupsOf(name).outMask
		if l := f.linkOf(name); l != nil {
			l.setOut(mask)
		}
		if sp := f.spoolerOf(name); sp != nil {
			sp.setOut(mask)
		}
	}
	f.log.Info("federate group mappings changed", "federates", len(next))
}

func sameGroupMap(a, b GroupMap) bool {
	return slices.Equal(a.Out, b.Out) && slices.Equal(a.In, b.In)
}

// noteAnnounced keeps the groups a federate announced (a federate's
// FederateGroups message), for its administrator to map.
func (f *Federation) noteAnnounced(name string, groups []string) {
	var keep []string
	for _, g := range groups {
		if len(keep) == maxAnnounced {
			break
		}
		if g != "" && len(g) <= maxAnnouncedName && !slices.Contains(keep, g) {
			keep = append(keep, g)
		}
	}
	slices.Sort(keep)
	f.groups.mu.Lock()
	defer f.groups.mu.Unlock()
	if f.groups.announced == nil {
		f.groups.announced = map[string][]string{}
	}
	if _, ok := f.groups.announced[name]; !ok && len(f.groups.announced) >= maxAnnouncedFederates {
		return
	}
	f.groups.announced[name] = keep
}

// AnnouncedGroups are the federate groups the federate name announced
// last (nil: none yet).
func (f *Federation) AnnouncedGroups(name string) []string {
	f.groups.mu.Lock()
	defer f.groups.mu.Unlock()
	return slices.Clone(f.groups.announced[name])
}

// setOut makes the link's sessions read what the local groups of mask
// carry.
func (l *link) setOut(mask uint64) {
	l.mu.Lock()
	cs := make([]*conn, 0, len(l.contacts)+1)
	for _, c := range l.contacts {
		cs = append(cs, c)
	}
	l.mu.Unlock()
	if l.own != nil {
		cs = append(cs, l.own)
	}
	for _, c := range cs {
		c.Sess.SetOut(mask)
	}
}

// setOut makes the spool session read what the local groups of mask carry.
func (sp *spooler) setOut(mask uint64) {
	sp.run.Lock()
	defer sp.run.Unlock()
	if sp.c != nil {
		sp.c.Sess.SetOut(mask)
	}
}

// sessionGroups is the SessionInfo masks of a federate's sessions: they
// read what its outbound local groups carry; what they publish goes to
// __ANON__ until an event's own mapping sets it (receive).
func sessionGroups(g *groupMap, info *broker.SessionInfo) {
	info.In, info.Out, info.Grouped = broker.AnonGroup, g.outMask, true
}
