package federation

import (
	"strconv"
	"testing"
	"time"

	"outpost/appliance/federation/fedproto"
)

func ev(uid string) *fedproto.FederatedEvent {
	return &fedproto.FederatedEvent{Event: &fedproto.GeoEvent{Uid: uid}}
}

func uids(fes []*fedproto.FederatedEvent) []string {
	var out []string
	for _, fe := range fes {
		out = append(out, fe.GetEvent().GetUid())
	}
	return out
}

// TestUnacked: what was sent before an answered health check is
// forgotten; what was sent after it stays pending, in order; an older
// answer arriving late changes nothing; the bound drops the oldest.
func TestUnacked(t *testing.T) {
	t0 := time.Unix(1000, 0)
	var u unacked
	if got := u.pending(); len(got) != 0 {
		t.Fatalf("new: %v", uids(got))
	}
	for i, uid := range []string{"a", "b", "c", "d"} {
		u.add(ev(uid), t0.Add(time.Duration(i)*time.Second))
	}
	if got := uids(u.pending()); len(got) != 4 || got[0] != "a" || got[3] != "d" {
		t.Fatalf("nothing acknowledged: %v", got)
	}
	u.ack(t0.Add(1500 * time.Millisecond)) // a, b were sent before the check
	if got := uids(u.pending()); len(got) != 2 || got[0] != "c" || got[1] != "d" {
		t.Fatalf("after the answer: %v, want [c d]", got)
	}
	u.ack(t0) // an older check's answer, late
	if got := uids(u.pending()); len(got) != 2 {
		t.Fatalf("a late older answer changed what is pending: %v", got)
	}
	u.add(ev("e"), t0.Add(time.Second)) // sent before the acknowledged check (a clock step): kept until the next ack
	u.ack(t0.Add(10 * time.Second))
	if got := u.pending(); len(got) != 0 {
		t.Fatalf("after an answer to a check sent after everything: %v", uids(got))
	}

	for i := range maxUnacked + 10 {
		u.add(ev("n"+string(rune('0'+i%10))), t0.Add(time.Minute+time.Duration(i)*time.Millisecond))
	}
	if got := u.pending(); len(got) != maxUnacked || got[0].GetEvent().GetUid() != "n0" {
		t.Fatalf("over the bound: %d pending (first %s), want %d starting with the 11th sent", len(got), got[0].GetEvent().GetUid(), maxUnacked)
	}
}

// TestUnackedRing: past the bound the ring keeps the newest, in order,
// through acknowledgements that wrap around it; a failed link goes back
// no further than maxUnackedAge before its last event (v1 links are never
// acknowledged).
func TestUnackedRing(t *testing.T) {
	t0 := time.Unix(5000, 0)
	var u unacked
	at := func(i int) time.Time { return t0.Add(time.Duration(i) * time.Millisecond) }
	for i := range 3 * maxUnacked {
		u.add(ev(strconv.Itoa(i)), at(i))
	}
	got := u.pending()
	if len(got) != maxUnacked {
		t.Fatalf("%d pending, want %d", len(got), maxUnacked)
	}
	for j, fe := range got {
		if want := strconv.Itoa(2*maxUnacked + j); fe.GetEvent().GetUid() != want {
			t.Fatalf("pending[%d] = %s, want %s", j, fe.GetEvent().GetUid(), want)
		}
	}
	u.ack(at(3*maxUnacked - 10)) // the last ten stay
	if got := uids(u.pending()); len(got) != 10 || got[0] != strconv.Itoa(3*maxUnacked-10) {
		t.Fatalf("after the answer: %v", got)
	}
	u.add(ev("late"), at(3*maxUnacked))
	if got := uids(u.pending()); len(got) != 11 || got[10] != "late" {
		t.Fatalf("after one more: %v", got)
	}

	var v unacked
	v.add(ev("old"), t0)
	v.add(ev("new"), t0.Add(maxUnackedAge+time.Second))
	if got := uids(v.pending()); len(got) != 1 || got[0] != "new" {
		t.Fatalf("pending %v, want only the event within maxUnackedAge of the last", got)
	}
}
