package rate

import (
	"testing"
	"time"
)

func TestBucket(t *testing.T) {
	t0 := time.Unix(1000, 0)
	b := New(10, 2*time.Second) // holds 20
	n := 0
	for b.Allow(t0, 1) {
		n++
	}
	if n != 20 {
		t.Fatalf("a full bucket gave %d, want 20", n)
	}
	if b.Allow(t0.Add(50*time.Millisecond), 1) {
		t.Fatal("half a token is not a token")
	}
	if !b.Allow(t0.Add(100*time.Millisecond), 1) {
		t.Fatal("refill at 10/s")
	}
	if b.Idle(t0.Add(time.Second)) || !b.Idle(t0.Add(3*time.Second)) {
		t.Fatal("Idle")
	}
	if !b.Has(t0.Add(3*time.Second), 20) || b.Has(t0.Add(3*time.Second), 21) {
		t.Fatal("Has")
	}
	var unlimited Bucket
	for range 1000 {
		if !unlimited.Allow(t0, 1e9) || unlimited.Debit(t0, 1e9) != 0 {
			t.Fatal("unlimited bucket refused")
		}
	}
}

func TestDebitPaces(t *testing.T) {
	t0 := time.Unix(1000, 0)
	b := New(1000, time.Second) // 1000 bytes/s, holds 1000
	if w := b.Debit(t0, 1000); w != 0 {
		t.Fatalf("within the burst: wait %v", w)
	}
	if w := b.Debit(t0, 500); w != 500*time.Millisecond {
		t.Fatalf("500 over: wait %v, want 500ms", w)
	}
	// After waiting, the balance is back to zero: the next 100 wait 100ms.
	if w := b.Debit(t0.Add(500*time.Millisecond), 100); w != 100*time.Millisecond {
		t.Fatalf("wait %v, want 100ms", w)
	}
}
