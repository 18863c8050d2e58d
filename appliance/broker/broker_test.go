package broker

import (
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"outpost/appliance/cot"
	"outpost/internal/testkit"
)

var t0 = time.Date(2026, 11, 22, 10, 0, 0, 0, time.UTC)

func sa(uid, callsign, typ string) *cot.Event {
	return &cot.Event{
		Version: "2.0", UID: uid, Type: typ, How: "m-g",
		Time: t0, Start: t0, Stale: t0.Add(6 * time.Minute),
		Point: cot.Point{Lat: 59.3, Lon: 18.0, Hae: 25, Ce: 9.9, Le: cot.Unknown},
		Detail: cot.Detail{
			XML:     []byte(`<contact callsign="` + callsign + `" endpoint="*:-1:stcp"/><__group name="Cyan" role="Team Member"/>`),
			Contact: &cot.Contact{Callsign: callsign, Endpoint: "*:-1:stcp"},
			Group:   &cot.Group{Name: "Cyan", Role: "Team Member"},
		},
	}
}

func chat(uid string, dests ...cot.Dest) *cot.Event {
	ev := &cot.Event{
		Version: "2.0", UID: uid, Type: "b-t-f", How: "h-g-i-g-o",
		Time: t0, Start: t0, Stale: t0.Add(time.Minute),
		Point:  cot.Point{Hae: cot.Unknown, Ce: cot.Unknown, Le: cot.Unknown},
		Detail: cot.Detail{XML: []byte(`<remarks>hello</remarks>`)},
	}
	if len(dests) > 0 {
		var b strings.Builder
		b.WriteString("<marti>")
		for _, d := range dests {
			switch {
			case d.UID != "":
				fmt.Fprintf(&b, `<dest uid="%s"/>`, d.UID)
			case d.Callsign != "":
				fmt.Fprintf(&b, `<dest callsign="%s"/>`, d.Callsign)
			default:
				fmt.Fprintf(&b, `<dest mission="%s"/>`, d.Mission)
			}
		}
		b.WriteString("</marti>")
		ev.Detail.XML = append([]byte(b.String()), ev.Detail.XML...)
		ev.Detail.Marti = &cot.Marti{Dests: dests}
	}
	return ev
}

// drain takes everything there is for s: the rest of its replay, then its
// queue.
func drain(s *Session) []*Envelope {
	var out []*Envelope
	for {
		batch := s.Take(nil)
		if len(batch) == 0 {
			return out
		}
		out = append(out, batch...)
	}
}

func uidsOf(envs []*Envelope) []string {
	var out []string
	for _, e := range envs {
		out = append(out, e.Event.Type+"/"+e.Event.UID)
	}
	return out
}

var quiet = testkit.Discard()

func newBroker(t *testing.T, o Options) *Broker {
	t.Helper()
	o.Logger = quiet
	if o.Now == nil {
		o.Now = func() time.Time { return t0 }
	}
	return New(o)
}

func TestBroadcastNeverEchoes(t *testing.T) {
	b := newBroker(t, Options{})
	a, bb, c := b.Join(SessionInfo{Addr: "10.0.0.1:1"}), b.Join(SessionInfo{}), b.Join(SessionInfo{})
	b.Publish(sa("A", "ALPHA", "a-f-G-U-C"), a)
	if got := drain(a); len(got) != 0 {
		t.Fatalf("sender received its own event: %v", uidsOf(got))
	}
	for name, s := range map[string]*Session{"b": bb, "c": c} {
		got := drain(s)
		if len(got) != 1 || got[0].Event.UID != "A" {
			t.Fatalf("%s got %v, want A's SA", name, uidsOf(got))
		}
	}
}

func TestReplayLatestSAOnJoin(t *testing.T) {
	b := newBroker(t, Options{})
	a, c := b.Join(SessionInfo{}), b.Join(SessionInfo{})
	b.Publish(sa("A", "ALPHA", "a-f-G-U-C"), a)
	moved := sa("A", "ALPHA-2", "a-f-G-U-C")
	moved.Point.Lat = 60
	b.Publish(moved, a)
	b.Publish(sa("C", "CHARLIE", "a-h-G"), c)
	b.Publish(chat("A"), a) // not an SA: never replayed
	d := b.Join(SessionInfo{})
	got := drain(d)
	if len(got) != 2 {
		t.Fatalf("replay = %v, want the latest SA of A and C", uidsOf(got))
	}
	for _, e := range got {
		if e.Event.UID == "A" && e.Event.Point.Lat != 60 {
			t.Error("replay sent A's old position, want the latest")
		}
	}
	// The replay happens before live traffic.
	b.Publish(sa("C", "CHARLIE", "a-h-G"), c)
	if got := drain(d); len(got) != 1 {
		t.Fatalf("live after replay = %v", uidsOf(got))
	}
}

func TestDirectedMessages(t *testing.T) {
	b := newBroker(t, Options{MissionSubscribers: func(m string) []string {
		if m == "ops" {
			return []string{"C"}
		}
		return nil
	}})
	a, bb, c := b.Join(SessionInfo{}), b.Join(SessionInfo{}), b.Join(SessionInfo{})
	b.Publish(sa("A", "ALPHA", "a-f-G"), a)
	b.Publish(sa("B", "BRAVO", "a-f-G"), bb)
	b.Publish(sa("C", "CHARLIE", "a-f-G"), c)
	for _, s := range []*Session{a, bb, c} {
		drain(s)
	}
	cases := []struct {
		name  string
		dests []cot.Dest
		want  map[*Session]bool
	}{
		{"by callsign", []cot.Dest{{Callsign: "BRAVO"}}, map[*Session]bool{bb: true}},
		{"by uid", []cot.Dest{{UID: "C"}}, map[*Session]bool{c: true}},
		{"both", []cot.Dest{{UID: "C"}, {Callsign: "BRAVO"}}, map[*Session]bool{bb: true, c: true}},
		{"all streaming", []cot.Dest{{Callsign: "All Streaming"}}, map[*Session]bool{bb: true, c: true}},
		{"mission", []cot.Dest{{Mission: "ops"}}, map[*Session]bool{c: true}},
		{"unknown", []cot.Dest{{Callsign: "NOBODY"}}, map[*Session]bool{}},
		{"to self only", []cot.Dest{{UID: "A"}}, map[*Session]bool{}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			b.Publish(chat("A", tc.dests...), a)
			for name, s := range map[string]*Session{"a": a, "b": bb, "c": c} {
				got := drain(s)
				if tc.want[s] != (len(got) == 1) || len(got) > 1 {
					t.Fatalf("%s got %v, want delivery=%v", name, uidsOf(got), tc.want[s])
				}
				if len(got) == 1 {
					ev := got[0].Event
					if ev.Detail.Marti != nil || strings.Contains(string(ev.Detail.XML), "marti") {
						t.Fatalf("<marti> was forwarded: %s", ev.Detail.XML)
					}
					if !strings.Contains(string(ev.Detail.XML), "<remarks>hello</remarks>") {
						t.Fatalf("detail lost: %s", ev.Detail.XML)
					}
				}
			}
		})
	}
}

func TestControlTypesConsumed(t *testing.T) {
	var observed []string
	b := newBroker(t, Options{Observer: func(env *Envelope, _ *Session) { observed = append(observed, env.Event.Type) }})
	a, c := b.Join(SessionInfo{}), b.Join(SessionInfo{})
	for _, typ := range []string{"t-x-c-t", "t-x-c-t-r", "t-x-takp-v", "t-x-takp-q", "t-x-takp-r", "t-x-c-f", "t-x-c-m", "t-x-c-i-e", "t-x-c-i-d", "t-b", "t-b-a"} {
		ev := chat("A")
		ev.Type = typ
		b.Publish(ev, a)
	}
	if got := drain(c); len(got) != 0 {
		t.Fatalf("control types relayed: %v", uidsOf(got))
	}
	if len(observed) != 0 {
		t.Fatalf("control types observed for history: %v", observed)
	}
	b.Publish(chat("A"), a)
	if len(observed) != 1 || observed[0] != "b-t-f" {
		t.Fatalf("observer saw %v", observed)
	}
}

func TestDepartureOnClose(t *testing.T) {
	var observed []string
	b := newBroker(t, Options{Observer: func(env *Envelope, _ *Session) { observed = append(observed, env.Event.Type) }})
	a, c, anon := b.Join(SessionInfo{}), b.Join(SessionInfo{}), b.Join(SessionInfo{})
	b.Publish(sa("A", "ALPHA", "a-f-G-U-C"), a)
	drain(c)
	drain(anon)
	a.Close(ReasonClientClosed)
	if a.Reason() != ReasonClientClosed {
		t.Fatalf("reason %v", a.Reason())
	}
	select {
	case <-a.Done():
	default:
		t.Fatal("Done not closed")
	}
	got := drain(c)
	if len(got) != 1 || got[0].Event.Type != "t-x-d-d" {
		t.Fatalf("got %v, want one t-x-d-d", uidsOf(got))
	}
	links := got[0].Event.Detail.Links
	if len(links) != 1 || links[0].UID != "A" || links[0].Type != "a-f-G-U-C" || links[0].Relation != "p-p" {
		t.Fatalf("departure link %+v", links)
	}
	// A session that never identified itself leaves silently.
	anon.Close(ReasonClientClosed)
	if got := drain(c); len(got) != 0 {
		t.Fatalf("anonymous departure announced: %v", uidsOf(got))
	}
	// Closing twice keeps the first reason and announces nothing.
	a.Close(ReasonIdle)
	if a.Reason() != ReasonClientClosed || len(drain(c)) != 0 {
		t.Fatal("second close changed something")
	}
	if b.Stats().Closed[ReasonClientClosed] != 2 {
		t.Fatalf("close counters %v", b.Stats().Closed)
	}
	if len(b.Clients()) != 0 {
		t.Fatalf("registry still lists %v", b.Clients())
	}
}

func TestReconnectKeepsUID(t *testing.T) {
	b := newBroker(t, Options{})
	old, watcher := b.Join(SessionInfo{}), b.Join(SessionInfo{})
	b.Publish(sa("A", "ALPHA", "a-f-G"), old)
	fresh := b.Join(SessionInfo{})
	b.Publish(sa("A", "ALPHA", "a-f-G"), fresh)
	drain(watcher)
	old.Close(ReasonIdle) // the half-open connection finally times out
	if got := drain(watcher); len(got) != 0 {
		t.Fatalf("stale session's close removed the reconnected client: %v", uidsOf(got))
	}
	if cl := b.Clients(); len(cl) != 1 || cl[0].UID != "A" {
		t.Fatalf("registry %v", cl)
	}
}

func TestRegistryFollowsEverySA(t *testing.T) {
	now := t0
	b := New(Options{Now: func() time.Time { return now }, Logger: quiet})
	a := b.Join(SessionInfo{Addr: "192.0.2.7:40000", Listener: "cot-tcp", User: "alice"})
	b.Publish(sa("A", "ALPHA", "a-f-G"), a)
	now = now.Add(30 * time.Second)
	ev := sa("A", "ALPHA-RENAMED", "a-f-G")
	ev.Detail.Group = &cot.Group{Name: "Red", Role: "HQ"}
	b.Publish(ev, a)
	cl := b.Clients()
	if len(cl) != 1 {
		t.Fatalf("clients %v", cl)
	}
	c := cl[0]
	if c.Callsign != "ALPHA-RENAMED" || c.Team != "Red" || c.Role != "HQ" || c.Address != "192.0.2.7" ||
		!c.LastSeen.Equal(now) || c.User != "alice" || c.Listener != "cot-tcp" {
		t.Fatalf("registry row %+v", c)
	}
}

func TestGroupVisibility(t *testing.T) {
	b := newBroker(t, Options{})
	red := b.Join(SessionInfo{In: 2, Out: 2})
	blue := b.Join(SessionInfo{In: 4, Out: 4})
	both := b.Join(SessionInfo{In: 2 | 4, Out: 2 | 4})
	b.Publish(sa("R", "RED", "a-f-G"), red)
	if len(drain(blue)) != 0 {
		t.Fatal("red reached blue")
	}
	if len(drain(both)) != 1 {
		t.Fatal("red did not reach a member of both groups")
	}
	b.Publish(sa("X", "BOTH", "a-f-G"), both)
	if len(drain(red)) != 1 || len(drain(blue)) != 1 {
		t.Fatal("a member of both groups must reach both")
	}
	late := b.Join(SessionInfo{In: 4, Out: 4})
	for _, e := range drain(late) {
		if e.Event.UID == "R" {
			t.Fatal("replay leaked red's SA to a blue session")
		}
	}
}

// TestSlowConsumerPolicy: a session that lags behind the log by more than
// the soft limit gets only the newest position report of each uid among
// those it has not read; nothing else is skipped; one that falls behind
// what the log holds (the hard limit) is closed.
func TestSlowConsumerPolicy(t *testing.T) {
	b := newBroker(t, Options{SoftFrames: 4, HardFrames: 64, SoftBytes: 1 << 30, HardBytes: 1 << 30})
	src, slow := b.Join(SessionInfo{}), b.Join(SessionInfo{})
	keep := b.Join(SessionInfo{}) // reads everything: the log keeps it all for slow
	drain(slow)
	// Chats, then a flood of SAs from two uids, then two more chats.
	for i := 0; i < 4; i++ {
		b.Publish(chat("C"), src)
	}
	for i := 0; i < 50; i++ {
		ev := sa(fmt.Sprintf("U%d", i%2), "X", "a-f-G")
		ev.Point.Lat = float64(i)
		b.Publish(ev, src)
	}
	b.Publish(chat("C"), src)
	b.Publish(chat("C"), src)
	if frames, _ := slow.Pending(); frames != 56 {
		t.Fatalf("pending %d frames, want the 56 unread", frames)
	}
	got := drain(slow)
	var chats, sas []float64
	for _, e := range got {
		if e.Event.Type == "b-t-f" {
			chats = append(chats, 0)
		} else {
			sas = append(sas, e.Event.Point.Lat)
		}
	}
	// Lagging, each uid's older reports were skipped: only 48 and 49, the
	// newest of each, reach the slow client; every chat arrives.
	if len(chats) != 6 || fmt.Sprint(sas) != "[48 49]" {
		t.Fatalf("got %d chats and SAs %v, want 6 chats and [48 49]", len(chats), sas)
	}
	if b.Stats().Coalesced != 48 {
		t.Fatalf("coalesced %d", b.Stats().Coalesced)
	}
	drain(keep)
	// Chats are never skipped: a session too far behind to be served in
	// order is closed instead.
	for i := 0; i < 70; i++ {
		b.Publish(chat("C"), src)
		drain(keep)
	}
	if slow.Reason() != ReasonNone {
		t.Fatalf("closed before it took: %v", slow.Reason())
	}
	if got := slow.Take(nil); len(got) != 0 || slow.Reason() != ReasonQueueLimit {
		t.Fatalf("took %d, reason %v: want nothing and a queue-limit close", len(got), slow.Reason())
	}
	if len(b.Sessions()) != 2 || b.Stats().Closed[ReasonQueueLimit] != 1 {
		t.Fatalf("slow session not removed: %d sessions, %v", len(b.Sessions()), b.Stats().Closed)
	}
}

// TestHardByteLimit: the log holds at most HardBytes; a session that has
// not read what it dropped is closed when it next takes.
func TestHardByteLimit(t *testing.T) {
	b := newBroker(t, Options{SoftBytes: 1000, HardBytes: 4000})
	src, slow := b.Join(SessionInfo{}), b.Join(SessionInfo{})
	drain(slow)
	big := chat("C")
	big.Detail.XML = []byte("<remarks>" + strings.Repeat("x", 900) + "</remarks>")
	for i := 0; i < 3; i++ {
		b.Publish(big, src)
	}
	if frames, bytes := slow.Pending(); frames != 3 || bytes < 3*900 {
		t.Fatalf("pending %d frames, %d bytes", frames, bytes)
	}
	b.Publish(big, src)
	if got := slow.Take(nil); len(got) != 0 || slow.Reason() != ReasonQueueLimit {
		t.Fatalf("byte hard limit not enforced: took %d, reason %v", len(got), slow.Reason())
	}
}

// TestSentInOrderWithTheLog: what is sent to one session is written at its
// place among the broadcast events around it.
func TestSentInOrderWithTheLog(t *testing.T) {
	b := newBroker(t, Options{})
	src, rx := b.Join(SessionInfo{}), b.Join(SessionInfo{})
	drain(rx)
	b.Publish(chat("BEFORE"), src)
	reply := chat("REPLY")
	reply.Type = "t-x-takp-r"
	rx.Send(NewEnvelope(reply))
	b.Publish(chat("AFTER"), src)
	if got := uidsOf(drain(rx)); strings.Join(got, ",") != "b-t-f/BEFORE,t-x-takp-r/REPLY,b-t-f/AFTER" {
		t.Fatalf("order %v", got)
	}
}

// TestLogReleasesWhatEveryoneRead: entries every session has taken are
// released; the log holds nothing for an idle server.
func TestLogReleasesWhatEveryoneRead(t *testing.T) {
	b := newBroker(t, Options{})
	a, c := b.Join(SessionInfo{}), b.Join(SessionInfo{})
	for i := range 600 {
		b.Publish(chat(fmt.Sprint(i)), a)
		drain(a)
		drain(c)
	}
	if frames, _ := b.events.held(); frames > 256 {
		t.Fatalf("the log still holds %d entries everyone has read", frames)
	}
}

func TestSendAndClosedBroker(t *testing.T) {
	b := newBroker(t, Options{})
	a := b.Join(SessionInfo{})
	env := NewEnvelope(chat("S"))
	env.SwitchFormat = true
	if !a.Send(env) {
		t.Fatal("send failed")
	}
	if got := drain(a); len(got) != 1 || !got[0].SwitchFormat {
		t.Fatal("direct send lost")
	}
	b.Close()
	if a.Reason() != ReasonShutdown {
		t.Fatalf("reason %v", a.Reason())
	}
	late := b.Join(SessionInfo{})
	select {
	case <-late.Done():
	default:
		t.Fatal("join after close must return a closed session")
	}
	b.Publish(chat("S"), nil) // must not panic with no sessions
}

func TestEnvelopeEncodesOnce(t *testing.T) {
	env := NewEnvelope(sa("A", "ALPHA", "a-f-G-U-C"))
	var wg sync.WaitGroup
	xmls := make([][]byte, 8)
	frames := make([][]byte, 8)
	for i := range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			xmls[i] = env.XML()
			f, err := env.ProtoFrame()
			if err != nil {
				t.Error(err)
			}
			frames[i] = f
		}()
	}
	wg.Wait()
	for i := 1; i < 8; i++ {
		if &xmls[i][0] != &xmls[0][0] || &frames[i][0] != &frames[0][0] {
			t.Fatal("encoding was not shared")
		}
	}
	if frames[0][0] != 0xBF {
		t.Fatal("proto frame does not start with 0xBF")
	}
	back, err := cot.Decode(xmls[0])
	if err != nil || back.UID != "A" {
		t.Fatalf("XML does not decode: %v", err)
	}
}

// TestConcurrentChurn runs publishers, joiners and leavers at once; run
// with -race.
func TestConcurrentChurn(t *testing.T) {
	b := New(Options{Logger: quiet})
	stop := make(chan struct{})
	var wg sync.WaitGroup
	for p := range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			s := b.Join(SessionInfo{})
			for i := 0; ; i++ {
				select {
				case <-stop:
					return
				default:
				}
				b.Publish(sa(fmt.Sprintf("P%d", p), "X", "a-f-G"), s)
				if i%10 == 0 {
					b.Publish(chat("x", cot.Dest{Callsign: "X"}), s)
				}
			}
		}()
	}
	for range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				select {
				case <-stop:
					return
				default:
				}
				s := b.Join(SessionInfo{})
				s.Take(nil)
				b.Clients()
				s.Close(ReasonClientClosed)
			}
		}()
	}
	time.Sleep(200 * time.Millisecond)
	close(stop)
	wg.Wait()
	if st := b.Stats(); st.Published == 0 || st.Joined < 5 {
		t.Fatalf("no work done: %+v", st)
	}
}
