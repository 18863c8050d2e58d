package broker

import (
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"outpost/appliance/cot"
)

// TestImpostorRefused: a uid bound to one certificate identity cannot be
// claimed by another one, nor by a connection without identity, even after
// its owner left; directed messages keep reaching the owner only.
func TestImpostorRefused(t *testing.T) {
	var observed []string
	b := newBroker(t, Options{Observer: func(env *Envelope, _ *Session) { observed = append(observed, env.Event.UID) }})
	alice := b.Join(SessionInfo{Listener: "cot-tls", User: "alice"})
	mallory := b.Join(SessionInfo{Listener: "cot-tls", User: "mallory"})
	anon := b.Join(SessionInfo{Listener: "cot-tcp"})
	bob := b.Join(SessionInfo{Listener: "cot-tcp"})
	if err := b.Publish(sa("ANDROID-ALICE", "ALICE", "a-f-G-U-C"), alice); err != nil {
		t.Fatal(err)
	}
	for _, s := range []*Session{alice, mallory, anon, bob} {
		drain(s)
	}
	observed = nil
	for _, imp := range []*Session{mallory, anon} {
		err := b.Publish(sa("ANDROID-ALICE", "ALICE", "a-f-G-U-C"), imp)
		if !errors.Is(err, ErrUIDTaken) {
			t.Fatalf("impostor's SA: %v, want ErrUIDTaken", err)
		}
	}
	if got := drain(bob); len(got) != 0 || len(observed) != 0 {
		t.Fatalf("impostor's SA relayed %v or stored %v", uidsOf(got), observed)
	}
	if st := b.Stats(); st.Impostor != 2 {
		t.Fatalf("impostor counter %d", st.Impostor)
	}
	// A message directed to alice's uid reaches alice only.
	b.Publish(chat("BOB", cot.Dest{UID: "ANDROID-ALICE"}), bob)
	if len(drain(alice)) != 1 || len(drain(mallory)) != 0 || len(drain(anon)) != 0 {
		t.Fatal("directed message did not reach the owner alone")
	}
	// Alice leaves: her departure goes out; the binding stays for the run.
	alice.Close(ReasonClientClosed)
	if got := drain(bob); len(got) != 1 || got[0].Event.Type != "t-x-d-d" {
		t.Fatalf("departure %v", uidsOf(got))
	}
	if err := b.Publish(sa("ANDROID-ALICE", "ALICE", "a-f-G-U-C"), mallory); !errors.Is(err, ErrUIDTaken) {
		t.Fatalf("claim after the owner left: %v", err)
	}
	// Alice reconnects with another connection of the same certificate.
	again := b.Join(SessionInfo{Listener: "cot-tls", User: "alice"})
	if err := b.Publish(sa("ANDROID-ALICE", "ALICE", "a-f-G-U-C"), again); err != nil {
		t.Fatalf("owner's reconnect refused: %v", err)
	}
	// Mallory's own uid works.
	if err := b.Publish(sa("ANDROID-MAL", "MAL", "a-f-G-U-C"), mallory); err != nil {
		t.Fatal(err)
	}
}

// TestDepartureOnlyWhenLastHolderLeaves: two connections hold one uid (a
// reconnect before the old connection timed out); whichever closes first,
// the departure goes out only when the second one closes.
func TestDepartureOnlyWhenLastHolderLeaves(t *testing.T) {
	for _, newerFirst := range []bool{true, false} {
		t.Run(fmt.Sprintf("newer closes first %v", newerFirst), func(t *testing.T) {
			b := newBroker(t, Options{})
			watcher := b.Join(SessionInfo{})
			older := b.Join(SessionInfo{User: "alice"})
			b.Publish(sa("A", "ALPHA", "a-f-G"), older)
			newer := b.Join(SessionInfo{User: "alice"})
			b.Publish(sa("A", "ALPHA", "a-f-G"), newer)
			drain(watcher)
			drain(older)
			drain(newer)
			// Directed delivery goes to the newest holder only.
			b.Publish(chat("W", cot.Dest{UID: "A"}), watcher)
			if len(drain(newer)) != 1 || len(drain(older)) != 0 {
				t.Fatal("directed message not delivered to the newest holder alone")
			}
			first, second := older, newer
			if newerFirst {
				first, second = newer, older
			}
			first.Close(ReasonClientClosed)
			if got := drain(watcher); len(got) != 0 {
				t.Fatalf("departure while a connection still holds the uid: %v", uidsOf(got))
			}
			b.Publish(chat("W", cot.Dest{UID: "A"}), watcher)
			if len(drain(second)) != 1 {
				t.Fatal("the remaining holder does not own the uid")
			}
			second.Close(ReasonClientClosed)
			if got := drain(watcher); len(got) != 1 || got[0].Event.Type != "t-x-d-d" {
				t.Fatalf("no departure when the last holder left: %v", uidsOf(got))
			}
		})
	}
}

func TestUIDsPerIdentityBounded(t *testing.T) {
	b := newBroker(t, Options{MaxUIDsPerUser: 3})
	s := b.Join(SessionInfo{User: "alice"})
	for i := range 3 {
		if err := b.Publish(sa(fmt.Sprintf("U%d", i), "X", "a-f-G"), s); err != nil {
			t.Fatal(err)
		}
	}
	if err := b.Publish(sa("U3", "X", "a-f-G"), s); !errors.Is(err, ErrUIDTaken) {
		t.Fatalf("fourth uid: %v", err)
	}
}

// TestDrainSendsNoDepartures: once the broker drains (shutdown), closing
// identified sessions announces and stores nothing, and nobody joins.
func TestDrainSendsNoDepartures(t *testing.T) {
	var observed []string
	b := newBroker(t, Options{Observer: func(env *Envelope, _ *Session) { observed = append(observed, env.Event.Type) }})
	var ss []*Session
	for i := range 5 {
		s := b.Join(SessionInfo{})
		b.Publish(sa(fmt.Sprintf("U%d", i), "X", "a-f-G"), s)
		ss = append(ss, s)
	}
	for _, s := range ss {
		drain(s)
	}
	observed = nil
	b.Drain()
	for _, s := range ss {
		s.Close(ReasonShutdown)
		for _, o := range ss {
			for _, e := range drain(o) {
				if e.Event.Type == "t-x-d-d" {
					t.Fatal("departure sent while draining")
				}
			}
		}
	}
	if len(observed) != 0 || b.Stats().Departures != 0 {
		t.Fatalf("departures stored while draining: %v", observed)
	}
	late := b.Join(SessionInfo{})
	if late.Reason() != ReasonShutdown {
		t.Fatalf("join while draining: reason %v", late.Reason())
	}
}

func TestOversizeRefusedAtPublish(t *testing.T) {
	var observed int
	b := newBroker(t, Options{Observer: func(*Envelope, *Session) { observed++ }})
	src, dst := b.Join(SessionInfo{}), b.Join(SessionInfo{})
	big := chat("C")
	big.Detail.XML = []byte("<remarks>" + strings.Repeat("x", cot.MaxRelayedEvent) + "</remarks>")
	if err := b.Publish(big, src); !errors.Is(err, ErrTooLarge) {
		t.Fatalf("publish: %v", err)
	}
	if len(drain(dst)) != 0 || observed != 0 || b.Stats().Oversize != 1 {
		t.Fatalf("oversize event queued or stored (observed %d, stats %+v)", observed, b.Stats())
	}
	if _, bytes := dst.Pending(); bytes != 0 {
		t.Fatal("oversize event counted against a queue")
	}
}

// TestRetained: a retained event is replayed to every new session after
// the latest SAs, re-broadcast to everyone while retained, and neither once
// released.
func TestRetained(t *testing.T) {
	b := New(Options{Logger: quiet})
	defer b.Close()
	a := b.Join(SessionInfo{})
	b.Publish(sa("A", "ALPHA", "a-f-G"), a)
	obj := chat("GEO-1")
	obj.Type = "a-h-G"
	b.Retain("GEO-1", obj, 20*time.Millisecond, AllGroups)
	late := b.Join(SessionInfo{})
	if got := uidsOf(drain(late)); strings.Join(got, ",") != "a-f-G/A,a-h-G/GEO-1" {
		t.Fatalf("replay %v, want the SA then the retained object", got)
	}
	deadline := time.Now().Add(5 * time.Second)
	for n := 0; n < 2; {
		if time.Now().After(deadline) {
			t.Fatal("retained object not re-broadcast")
		}
		for _, e := range drain(a) {
			if e.Event.UID == "GEO-1" {
				n++
			}
		}
		time.Sleep(5 * time.Millisecond)
	}
	if b.Stats().Repeated == 0 || len(b.Retained()) != 1 {
		t.Fatalf("stats %+v retained %v", b.Stats(), b.Retained())
	}
	if !b.Release("GEO-1") || b.Release("GEO-1") {
		t.Fatal("release")
	}
	time.Sleep(50 * time.Millisecond)
	drain(a)
	time.Sleep(60 * time.Millisecond)
	for _, e := range drain(a) {
		if e.Event.UID == "GEO-1" {
			t.Fatal("released object still re-broadcast")
		}
	}
	if got := drain(b.Join(SessionInfo{})); len(got) != 1 {
		t.Fatalf("released object still replayed: %v", uidsOf(got))
	}
}

// TestCountersByClassAndRecentCloses: events in and out are counted by
// class, and closed sessions are listed with their reason, newest first.
func TestCountersByClassAndRecentCloses(t *testing.T) {
	b := newBroker(t, Options{})
	a, c := b.Join(SessionInfo{Addr: "10.0.0.1:5000", Listener: "cot-tcp"}), b.Join(SessionInfo{})
	b.Publish(sa("A", "ALPHA", "a-f-G-U-C"), a)
	b.Publish(chat("A"), a)
	m := chat("M")
	m.Type = "a-h-G"
	b.Publish(m, a)
	drawing := chat("D")
	drawing.Type = "u-d-f"
	b.Publish(drawing, a)
	drain(c)
	st := b.Stats()
	if st.In[ClassPosition] != 1 || st.In[ClassChat] != 1 || st.In[ClassMarker] != 1 || st.In[ClassDrawing] != 1 {
		t.Fatalf("in %v", st.In)
	}
	if st.Out[ClassPosition] != 1 || st.Out[ClassChat] != 1 {
		t.Fatalf("out %v", st.Out)
	}
	a.Close(ReasonIdle)
	c.Close(ReasonWriteDeadline)
	r := b.RecentlyClosed()
	if len(r) != 2 || r[0].Reason != ReasonWriteDeadline || r[1].Reason != ReasonIdle || r[1].UID != "A" ||
		r[1].Callsign != "ALPHA" || r[1].Address != "10.0.0.1" || r[1].Listener != "cot-tcp" {
		t.Fatalf("recently closed %+v", r)
	}
	if b.Stats().In[ClassDelete] != 1 {
		t.Fatal("the departure was not counted as a delete")
	}
	for range recentSize + 10 {
		b.Join(SessionInfo{}).Close(ReasonClientClosed)
	}
	if n := len(b.RecentlyClosed()); n != recentSize {
		t.Fatalf("%d remembered, want %d", n, recentSize)
	}
}

// TestSessionListCopyOnWrite: joins and leaves in any order keep the list
// exact, and a snapshot taken earlier never changes.
func TestSessionListCopyOnWrite(t *testing.T) {
	b := newBroker(t, Options{})
	var ss []*Session
	for range 3*listChunk + 5 {
		ss = append(ss, b.Join(SessionInfo{}))
	}
	snap := b.list.Load()
	before := snap.slice()
	for i := 0; i < len(ss); i += 3 {
		ss[i].Close(ReasonClientClosed)
	}
	if got := snap.slice(); fmt.Sprint(got) != fmt.Sprint(before) {
		t.Fatal("a snapshot changed")
	}
	open := map[*Session]bool{}
	for i, s := range ss {
		if i%3 != 0 {
			open[s] = true
		}
	}
	cur := b.Sessions()
	if len(cur) != len(open) {
		t.Fatalf("%d listed, want %d", len(cur), len(open))
	}
	for i, s := range cur {
		if !open[s] || s.pos != i {
			t.Fatalf("session %d: listed %v, pos %d", i, open[s], s.pos)
		}
	}
	for _, s := range cur {
		s.Close(ReasonClientClosed)
	}
	if n := b.list.Load().len(); n != 0 || len(b.list.Load().chunks) != 0 {
		t.Fatalf("%d left in %d chunks", n, len(b.list.Load().chunks))
	}
}

// TestDroppedMarkerKeepsIdentity: a marker a client drops (an a- event with
// a callsign, a parent link and <archive/>, as ATAK sends it) is relayed,
// but its sender stays who it was: the client list, directed messages and
// the departure still name the sender's own uid, and a new client's replay
// carries the sender's position, not the marker as its position.
func TestDroppedMarkerKeepsIdentity(t *testing.T) {
	b := newBroker(t, Options{})
	watcher := b.Join(SessionInfo{})
	alice := b.Join(SessionInfo{User: "alice"})
	if err := b.Publish(sa("ANDROID-ALICE", "ALICE", "a-f-G-U-C"), alice); err != nil {
		t.Fatal(err)
	}
	marker := &cot.Event{
		Version: "2.0", UID: "a0c524c6-marker", Type: "a-u-G", How: "h-g-i-g-o",
		Time: t0, Start: t0, Stale: t0.Add(time.Hour),
		Point: cot.Point{Lat: 38.85, Lon: -77.06, Ce: cot.Unknown, Le: cot.Unknown},
		Detail: cot.Detail{
			XML:     []byte(`<status readiness="true"/><archive/><link uid="ANDROID-ALICE" type="a-f-G-U-C" parent_callsign="ALICE" relation="p-p"/><contact callsign="U.16.135057"/>`),
			Contact: &cot.Contact{Callsign: "U.16.135057"},
			Links:   []cot.Link{{UID: "ANDROID-ALICE", Type: "a-f-G-U-C", Relation: "p-p"}},
		},
	}
	drain(watcher)
	if err := b.Publish(marker, alice); err != nil {
		t.Fatal(err)
	}
	if got := drain(watcher); len(got) != 1 || got[0].Event.UID != marker.UID {
		t.Fatalf("marker not relayed: %v", uidsOf(got))
	}
	if cl := b.Clients(); len(cl) != 1 || cl[0].UID != "ANDROID-ALICE" || cl[0].Callsign != "ALICE" {
		t.Fatalf("client list after the marker: %+v", cl)
	}
	b.Publish(chat("W", cot.Dest{UID: "ANDROID-ALICE"}), watcher)
	if len(drain(alice)) != 1 {
		t.Fatal("directed message to the sender's uid not delivered")
	}
	late := b.Join(SessionInfo{})
	var replayed []string
	for _, env := range drain(late) {
		replayed = append(replayed, env.Event.UID)
	}
	if len(replayed) == 0 || replayed[0] != "ANDROID-ALICE" {
		t.Fatalf("replay to a new client %v, want alice's position first", replayed)
	}
	alice.Close(ReasonClientClosed)
	got := drain(watcher)
	if len(got) != 1 || got[0].Event.Type != "t-x-d-d" || len(got[0].Event.Detail.Links) != 1 ||
		got[0].Event.Detail.Links[0].UID != "ANDROID-ALICE" {
		t.Fatalf("departure %v, want one t-x-d-d linking ANDROID-ALICE", uidsOf(got))
	}
}
