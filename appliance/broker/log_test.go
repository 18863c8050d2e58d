package broker

import (
	"fmt"
	"testing"

	"outpost/internal/testkit"
)

// TestSenderOnlyNeverHoldsTheLog: a client that only sends (nothing is
// for it: its own events, and a group that reaches nobody but it) is never
// taken for a slow consumer when the log wraps many times over, and what
// every session has read is released: the held bytes go back to zero.
func TestSenderOnlyNeverHoldsTheLog(t *testing.T) {
	b := newBroker(t, Options{HardFrames: 64, HardBytes: 64 << 10, SoftFrames: 16, SoftBytes: 16 << 10})
	sender := b.Join(SessionInfo{})
	receiver := b.Join(SessionInfo{})
	other := b.Join(SessionInfo{In: 2, Out: 2}) // another group: sees none of it
	for i := range 1000 {
		if err := b.Publish(chat(fmt.Sprint("S-", i)), sender); err != nil {
			t.Fatal(err)
		}
		if i%10 == 9 {
			drain(receiver)
		}
	}
	drain(receiver)
	for _, s := range []*Session{sender, other} {
		s.Send(NewEnvelope(chat("PONG")))
		if got := drain(s); len(got) != 1 || s.Reason() != ReasonNone {
			t.Fatalf("session %d after 1000 events not for it: got %v, closed %v", s.ID(), uidsOf(got), s.Reason())
		}
	}
	b.trim(false)
	if q := b.Stats().QueuedBytes; q != 0 {
		t.Fatalf("%d bytes still held after every session read everything", q)
	}
}

// TestClosedSessionReleasesItsHold: what only a closed session had left to
// read, and what was sent to it alone, stops counting once it is gone and
// its transport released it.
func TestClosedSessionReleasesItsHold(t *testing.T) {
	b := newBroker(t, Options{})
	sender := b.Join(SessionInfo{})
	stalled := b.Join(SessionInfo{})
	for i := range 100 {
		b.Publish(chat(fmt.Sprint("S-", i)), sender)
	}
	stalled.Send(NewEnvelope(chat("PONG")))
	if b.Stats().QueuedBytes == 0 {
		t.Fatal("nothing counted while the stalled session has 101 events to read")
	}
	stalled.Close(ReasonWriteDeadline)
	stalled.Release()
	if q := b.Stats().QueuedBytes; q != 0 {
		t.Fatalf("%d bytes still held after the only reader closed", q)
	}
}

// TestQuietLogIsReleased: fewer events than make a trim worth it are
// published and read; once publishing stops, the log is released anyway
// (idleTrimDelay), without another publish.
func TestQuietLogIsReleased(t *testing.T) {
	b := newBroker(t, Options{})
	sender := b.Join(SessionInfo{})
	receiver := b.Join(SessionInfo{})
	for i := range 20 {
		if err := b.Publish(chat(fmt.Sprint("S-", i)), sender); err != nil {
			t.Fatal(err)
		}
	}
	if got := drain(receiver); len(got) != 20 {
		t.Fatalf("receiver got %d events, want 20", len(got))
	}
	if b.Stats().QueuedBytes == 0 {
		t.Fatal("the log was trimmed at once; this test needs it held until the idle trim")
	}
	testkit.WaitForWithin(t, 5*idleTrimDelay, "the quiet log released", func() bool { return b.Stats().QueuedBytes == 0 })
}
