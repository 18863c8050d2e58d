package federation

import (
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
