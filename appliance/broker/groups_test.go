package broker

import (
	"errors"
	"slices"
	"sync"
	"testing"
)

const red, blue = 1 << 3, 1 << 4

// A user's channel switch applies at once: events published after
// SetGroups are filtered by the new masks, and the user's sessions get the
// latest SA of everyone they can newly see (and those get theirs).
func TestSetGroupsAppliesAtOnce(t *testing.T) {
	b := newBroker(t, Options{})
	r := b.Join(SessionInfo{User: "rita", In: red, Out: red})
	bl := b.Join(SessionInfo{User: "bob", In: blue, Out: blue})
	drain(r)
	drain(bl)
	b.Publish(sa("B", "BOB", "a-f-G"), bl)
	if got := drain(r); len(got) != 0 {
		t.Fatalf("red received blue's SA before joining blue: %v", uidsOf(got))
	}
	if n := b.SetGroups("rita", red, red|blue); n != 1 {
		t.Fatalf("SetGroups changed %d sessions, want 1", n)
	}
	if got := uidsOf(drain(r)); !slices.Equal(got, []string{"a-f-G/B"}) {
		t.Fatalf("after switching blue on, rita got %v, want bob's latest SA", got)
	}
	b.Publish(sa("B", "BOB", "a-f-G"), bl)
	if got := uidsOf(drain(r)); !slices.Equal(got, []string{"a-f-G/B"}) {
		t.Fatalf("live blue traffic after the switch: %v", got)
	}
	// rita sends only to red: bob does not see her; once she sends to blue
	// too, bob gets her latest SA at once.
	b.Publish(sa("R", "RITA", "a-f-G"), r)
	if got := drain(bl); len(got) != 0 {
		t.Fatalf("bob received rita's red-only SA: %v", uidsOf(got))
	}
	b.SetGroups("rita", red|blue, red|blue)
	if got := uidsOf(drain(bl)); !slices.Equal(got, []string{"a-f-G/R"}) {
		t.Fatalf("bob got %v when rita started sending to blue, want her latest SA", got)
	}
	// Switching blue off again stops the flow from then on.
	b.SetGroups("rita", red, red)
	b.Publish(sa("B", "BOB", "a-f-G"), bl)
	if got := drain(r); len(got) != 0 {
		t.Fatalf("rita still receives blue after switching it off: %v", uidsOf(got))
	}
	if in, out := r.Groups(); in != red || out != red {
		t.Fatalf("masks %b %b", in, out)
	}
	if n := b.SetGroups("nobody", 1, 1); n != 0 {
		t.Fatalf("SetGroups of an identity without sessions changed %d", n)
	}
}

// A session joined with Grouped and zero masks sees nothing and is seen by
// no one; without Grouped, zero masks mean __ANON__.
func TestGroupedZeroSeesNothing(t *testing.T) {
	b := newBroker(t, Options{})
	anon := b.Join(SessionInfo{})
	none := b.Join(SessionInfo{User: "n", Grouped: true})
	drain(anon)
	drain(none)
	if in, out := anon.Groups(); in != AnonGroup || out != AnonGroup {
		t.Fatalf("default masks %b %b, want __ANON__", in, out)
	}
	b.Publish(sa("A", "A", "a-f-G"), anon)
	b.Publish(sa("N", "N", "a-f-G"), none)
	if got := drain(none); len(got) != 0 {
		t.Fatalf("a session with every group off received %v", uidsOf(got))
	}
	if got := drain(anon); len(got) != 0 {
		t.Fatalf("a session with every group off reached __ANON__: %v", uidsOf(got))
	}
}

// Server events reach every group, or only those PublishTo, Notify and
// Retain name; a session reads the retained events of its groups only.
func TestServerEventsToGroups(t *testing.T) {
	b := newBroker(t, Options{})
	r := b.Join(SessionInfo{In: red, Out: red})
	bl := b.Join(SessionInfo{In: blue, Out: blue})
	drain(r)
	drain(bl)
	b.Publish(chat("everyone"), nil)
	if len(drain(r)) != 1 || len(drain(bl)) != 1 {
		t.Fatal("a server event without groups did not reach every group")
	}
	if err := b.PublishTo(chat("red-only"), red); err != nil {
		t.Fatal(err)
	}
	if len(drain(r)) != 1 || len(drain(bl)) != 0 {
		t.Fatal("PublishTo red reached the wrong sessions")
	}
	if err := b.Notify(chat("note"), nil, blue); err != nil {
		t.Fatal(err)
	}
	if len(drain(r)) != 0 || len(drain(bl)) != 1 {
		t.Fatal("Notify to blue reached the wrong sessions")
	}
	b.Retain("obj", sa("OBJ", "OBJ", "a-h-G"), 0, red)
	late := []*Session{b.Join(SessionInfo{In: red, Out: red}), b.Join(SessionInfo{In: blue, Out: blue})}
	if got := uidsOf(drain(late[0])); !slices.Contains(got, "a-h-G/OBJ") {
		t.Fatalf("a red session joining did not get the red object: %v", got)
	}
	if got := uidsOf(drain(late[1])); slices.Contains(got, "a-h-G/OBJ") {
		t.Fatalf("a blue session joining got the red object: %v", got)
	}
}

// Bindings: loaded at start, reported when made (on the stream and through
// ClaimUID), refused to another identity and to anonymous callers, freed
// by Unbind.
func TestUIDBindings(t *testing.T) {
	var mu sync.Mutex
	var reported []string
	b := newBroker(t, Options{MaxUIDsPerUser: 3, Bindings: map[string]string{"OLD-1": "alice"},
		Bound: func(uid, who string) { mu.Lock(); reported = append(reported, uid+"="+who); mu.Unlock() }})
	if who, ok := b.UIDOwner("OLD-1"); !ok || who != "alice" {
		t.Fatalf("loaded binding: %q %v", who, ok)
	}
	eve := b.Join(SessionInfo{User: "eve"})
	if err := b.Publish(sa("OLD-1", "FAKE", "a-f-G"), eve); !errors.Is(err, ErrUIDTaken) {
		t.Fatalf("eve claimed alice's kept uid after a restart: %v", err)
	}
	if err := b.ClaimUID("OLD-1", ""); !errors.Is(err, ErrUIDTaken) {
		t.Fatalf("an anonymous caller acted for a bound uid: %v", err)
	}
	if err := b.ClaimUID("FREE", ""); err != nil {
		t.Fatalf("an anonymous caller and an unbound uid: %v", err)
	}
	if _, ok := b.UIDOwner("FREE"); ok {
		t.Fatal("an anonymous claim bound the uid")
	}
	if err := b.ClaimUID("HTTP-1", "alice"); err != nil {
		t.Fatal(err)
	}
	if err := b.ClaimUID("HTTP-1", "eve"); !errors.Is(err, ErrUIDTaken) {
		t.Fatalf("eve acted for alice's uid: %v", err)
	}
	a := b.Join(SessionInfo{User: "alice"})
	if err := b.Publish(sa("ANDROID-A", "ALICE", "a-f-G"), a); err != nil {
		t.Fatal(err)
	}
	// alice has 3 now: OLD-1, HTTP-1, ANDROID-A.
	if err := b.ClaimUID("FOURTH", "alice"); !errors.Is(err, ErrUIDTaken) {
		t.Fatalf("a fourth uid past the limit of 3: %v", err)
	}
	mu.Lock()
	got := slices.Clone(reported)
	mu.Unlock()
	slices.Sort(got)
	if !slices.Equal(got, []string{"ANDROID-A=alice", "HTTP-1=alice"}) {
		t.Fatalf("reported bindings %v", got)
	}
	b.Unbind("alice")
	if _, ok := b.UIDOwner("HTTP-1"); ok {
		t.Fatal("Unbind kept a binding")
	}
	if err := b.ClaimUID("OLD-1", "eve"); err != nil {
		t.Fatalf("a freed uid: %v", err)
	}
}
