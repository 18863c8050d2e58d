package cotsession

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"outpost/appliance/broker"
	"outpost/appliance/cot"
)

// TestPingAnsweredOnThisSessionOnly: a ping is answered with a pong queued
// to the pinging session alone, and is never relayed.
func TestPingAnsweredOnThisSessionOnly(t *testing.T) {
	f := newFixture(t, Config{}, broker.Options{})
	a, b := f.join(t, "", nil), f.join(t, "", nil)
	handle(t, a, event("A-ping", cot.TypePing))
	if got := taken(a.Sess); !slices.Equal(got, []string{cot.TypePong}) {
		t.Fatalf("the pinging session took %v, want one pong", got)
	}
	if got := taken(b.Sess); len(got) != 0 {
		t.Fatalf("another session took %v", got)
	}
}

// TestEventsPublishedControlConsumed: an event reaches the other sessions,
// a control type reaches nobody (protocol.md §5).
func TestEventsPublishedControlConsumed(t *testing.T) {
	f := newFixture(t, Config{}, broker.Options{})
	a, b := f.join(t, "", nil), f.join(t, "", nil)
	for _, typ := range []string{"t-x-c-m", "t-b-a", "t-x-takp-q", cot.TypePong} {
		handle(t, a, event("A", typ))
	}
	if got := taken(b.Sess); len(got) != 0 {
		t.Fatalf("control types reached another session: %v", got)
	}
	if got := taken(a.Sess); len(got) != 0 {
		t.Fatalf("control types answered without negotiation: %v", got)
	}
	handle(t, a, event("marker-1", "a-h-G"))
	if got := taken(b.Sess); !slices.Equal(got, []string{"a-h-G"}) {
		t.Fatalf("the other session took %v, want the marker", got)
	}
	if got := taken(a.Sess); len(got) != 0 {
		t.Fatalf("the sender took its own event back: %v", got)
	}
}

// TestNegotiation: with Negotiate the offer is queued, a request is
// answered with a reply that switches the writer, and the decoder reads
// protobuf from the byte after the request.
func TestNegotiation(t *testing.T) {
	f := newFixture(t, Config{ServerUID: "outpost-test"}, broker.Options{})
	a, b := f.join(t, "", nil), f.join(t, "", nil)

	req := event("client-1", cot.TypeTakQuery)
	req.Detail = cot.Detail{XML: []byte(`<TakControl><TakRequest version="1"/></TakControl>`)}
	frame, err := broker.NewEnvelope(event("marker-1", "a-h-G")).ProtoFrame()
	if err != nil {
		t.Fatal(err)
	}
	dec := cot.NewStreamDecoder(bytes.NewReader(append(req.AppendXML(nil), frame...)), 0)

	a.Negotiate(dec)
	if got := taken(a.Sess); !slices.Equal(got, []string{cot.TypeTakOffer}) {
		t.Fatalf("after Negotiate the session took %v, want the offer", got)
	}
	for i := range 2 {
		msg, err := dec.Next()
		if reason, stop := a.Handle(&msg, err); stop {
			t.Fatalf("message %d ended the connection: %v (%v)", i, reason, err)
		}
		if i == 0 {
			if dec.Protocol() != cot.ProtocolV1 {
				t.Fatal("the decoder did not switch to protobuf after a granted request")
			}
			envs := a.Sess.Take(nil)
			if len(envs) != 1 || envs[0].Event.Type != cot.TypeTakAnswer || !envs[0].SwitchFormat {
				t.Fatalf("the request was answered with %d envelopes, want one switching t-x-takp-r", len(envs))
			}
		}
	}
	if got := taken(b.Sess); !slices.Equal(got, []string{"a-h-G"}) {
		t.Fatalf("the protobuf event after the switch reached the other session as %v", got)
	}
}

// TestRefusalsCountedAndLoggedOnce: each kind of refusal is counted every
// time and logged once per connection.
func TestRefusalsCountedAndLoggedOnce(t *testing.T) {
	f := newFixture(t, Config{}, broker.Options{MaxEventBytes: 2048})
	alice, bob, carol := f.join(t, "alice", nil), f.join(t, "bob", nil), f.join(t, "carol", nil)

	big := event("chat-1", "b-t-f")
	big.Detail = cot.Detail{XML: []byte("<remarks>" + strings.Repeat("x", 4000) + "</remarks>")}
	handle(t, alice, big)
	handle(t, alice, big)
	handle(t, carol, big)
	const tooLarge = "event refused: larger than what clients can receive (logged once per connection)"
	if st := f.d.Stats(); st.OversizeEvents != 3 {
		t.Fatalf("oversize events counted %d, want 3", st.OversizeEvents)
	}
	if n := f.logged(tooLarge); n != 2 {
		t.Fatalf("oversize refusals logged %d times, want once per connection (2):\n%s", n, f.logs)
	}

	handle(t, alice, sa("ALICE"))
	handle(t, bob, sa("ALICE"))
	handle(t, bob, sa("ALICE"))
	const impostor = "position report refused: its uid belongs to another client (logged once per connection)"
	if st := f.d.Stats(); st.Impostors != 2 {
		t.Fatalf("impostors counted %d, want 2", st.Impostors)
	}
	if n := f.logged(impostor); n != 1 {
		t.Fatalf("impostor refusals logged %d times, want 1:\n%s", n, f.logs)
	}
	if !strings.Contains(f.logs.String(), "user=bob") {
		t.Fatalf("the impostor's line does not name its user:\n%s", f.logs)
	}
}

// TestMalformedAndJunkCounted: a malformed message and skipped bytes are
// counted and the connection carries on.
func TestMalformedAndJunkCounted(t *testing.T) {
	f := newFixture(t, Config{}, broker.Options{})
	a := f.join(t, "", nil)
	reason, stop := a.Handle(&cot.Message{Size: 40, Junk: 7}, &cot.SyntaxError{Msg: "bad\nline"})
	if stop || reason != broker.ReasonNone {
		t.Fatalf("a malformed message ended the connection: %v", reason)
	}
	a.Malformed("truncated frame header")
	st := f.d.Stats()
	if st.SyntaxErrors != 2 || st.JunkBytes != 7 {
		t.Fatalf("counted %d malformed messages and %d junk bytes, want 2 and 7", st.SyntaxErrors, st.JunkBytes)
	}
	if strings.Contains(f.logs.String(), "bad\nline") {
		t.Fatal("client text reached the log unclipped")
	}
}

// TestReadErrorReason: what a failed read means.
func TestReadErrorReason(t *testing.T) {
	f := newFixture(t, Config{MaxMessage: 1000}, broker.Options{})
	for _, tc := range []struct {
		err  error
		want broker.Reason
	}{
		{io.EOF, broker.ReasonClientClosed},
		{fmt.Errorf("reading: %w", io.ErrUnexpectedEOF), broker.ReasonClientClosed},
		{&net.OpError{Op: "read", Net: "tcp", Err: os.NewSyscallError("read", syscall.ECONNRESET)}, broker.ReasonClientClosed},
		{cot.ErrTooLarge, broker.ReasonTooLarge},
		{os.ErrDeadlineExceeded, broker.ReasonIdle},
		{&net.OpError{Op: "read", Net: "tcp", Err: os.ErrDeadlineExceeded}, broker.ReasonIdle},
		{errors.New("something else"), broker.ReasonReadError},
	} {
		c := f.join(t, "", nil)
		if got := c.ReadErrorReason(tc.err); got != tc.want {
			t.Errorf("%v: %v, want %v", tc.err, got, tc.want)
		}
		// Handle ends the connection with the same reason.
		if got, stop := c.Handle(&cot.Message{}, tc.err); !stop || got != tc.want {
			t.Errorf("Handle(%v): %v (stop %v), want %v", tc.err, got, stop, tc.want)
		}
	}
	if !strings.Contains(f.logs.String(), "client sent a message larger than the limit; disconnecting") ||
		!strings.Contains(f.logs.String(), "limit=1000") {
		t.Fatalf("a message over the limit was not logged with the limit:\n%s", f.logs)
	}
	// A session closed first keeps its reason, whatever the read says.
	c := f.join(t, "", nil)
	c.Sess.Close(broker.ReasonRevoked)
	if got := c.ReadErrorReason(io.EOF); got != broker.ReasonRevoked {
		t.Fatalf("a read failing after a revocation: %v, want %v", got, broker.ReasonRevoked)
	}
}

// TestPacing: a connection over its rate is made to wait (counted, logged
// once), never cut off; closing its session ends the wait.
func TestPacing(t *testing.T) {
	now := time.Date(2024, 1, 1, 0, 0, 0, 0, time.UTC)
	// A clock that does not move: the bucket never refills, so every
	// message past the burst waits what one more token takes.
	f := newFixture(t, Config{MaxEventsPerSecond: 1000, Now: func() time.Time { return now }}, broker.Options{})
	a := f.join(t, "", nil)
	msg := cot.Message{Size: 1}
	for range 2000 { // the burst: two seconds of the rate
		a.Handle(&msg, nil)
	}
	if st := f.d.Stats(); st.Paced != 0 {
		t.Fatalf("paced %d times within the burst", st.Paced)
	}
	a.Handle(&msg, nil)
	a.Handle(&msg, nil)
	const paced = "client sends faster than its rate; reading from it is paced (logged once per connection)"
	if st := f.d.Stats(); st.Paced != 2 {
		t.Fatalf("paced %d times past the burst, want 2", st.Paced)
	}
	if n := f.logged(paced); n != 1 {
		t.Fatalf("pacing logged %d times, want 1", n)
	}

	slow := newFixture(t, Config{MaxEventsPerSecond: 1, Now: func() time.Time { return now }}, broker.Options{})
	b := slow.join(t, "", nil)
	b.Handle(&msg, nil)
	b.Handle(&msg, nil)
	time.AfterFunc(50*time.Millisecond, func() { b.Sess.Close(broker.ReasonRevoked) })
	began := time.Now()
	b.Handle(&msg, nil) // would wait a second
	if d := time.Since(began); d > 700*time.Millisecond {
		t.Fatalf("a paced reader waited %v after its session closed", d)
	}
}

// TestSendable: a writer's frame passes unless it cannot be sent.
func TestSendable(t *testing.T) {
	f := newFixture(t, Config{}, broker.Options{})
	a := f.join(t, "", nil)
	env := broker.NewEnvelope(event("marker-1", "a-h-G"))
	ok := []byte("frame")
	if got := a.Sendable(env, ok, nil); &got[0] != &ok[0] {
		t.Fatal("a sendable frame was not passed through")
	}
	if a.Sendable(env, make([]byte, cot.MaxRelayedEvent+1), nil) != nil {
		t.Fatal("a frame larger than what clients can receive was passed")
	}
	if a.Sendable(env, nil, errors.New("cannot encode")) != nil {
		t.Fatal("a frame that failed to encode was passed")
	}
	if st := f.d.Stats(); st.OversizeEvents != 1 {
		t.Fatalf("oversize frames counted %d, want 1 (an encoding failure is not one)", st.OversizeEvents)
	}
}

// TestHandleAllocatesNothing: the relay's per-message path allocates
// nothing of its own (architecture.md "The relay"); here a consumed control
// event, paced but within its rate, and a writer's check of a frame.
func TestHandleAllocatesNothing(t *testing.T) {
	f := newFixture(t, Config{MaxEventsPerSecond: 1 << 30, MaxBytesPerSecond: 1 << 30}, broker.Options{})
	a := f.join(t, "", nil)
	msg := cot.Message{Event: event("A", "t-x-c-m"), Size: 200}
	if n := testing.AllocsPerRun(1000, func() { a.Handle(&msg, nil) }); n != 0 {
		t.Fatalf("Handle allocated %v times per message", n)
	}
	env, frame := broker.NewEnvelope(msg.Event), []byte("frame")
	if n := testing.AllocsPerRun(1000, func() { a.Sendable(env, frame, nil) }); n != 0 {
		t.Fatalf("Sendable allocated %v times per frame", n)
	}
}
