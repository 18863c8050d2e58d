package rate

import (
	"testing"
	"time"
)

// TestKeyed: each key has its own events and bytes, refused all or
// nothing with the wait until it would pass; idle keys are forgotten when
// too many are held.
func TestKeyed(t *testing.T) {
	t0 := time.Unix(1000, 0)
	k := NewKeyed[string](1, 100, 2*time.Second, 2) // 2 events and 200 bytes a key
	if ok, _ := k.Take("a", t0, 150); !ok {
		t.Fatal("first event refused")
	}
	ok, wait := k.Take("a", t0, 100)
	if ok || wait != 500*time.Millisecond {
		t.Fatalf("over the bytes: %v, wait %v, want 500ms", ok, wait)
	}
	if ok, _ := k.Take("a", t0, 50); !ok {
		t.Fatal("a refusal took tokens")
	}
	if ok, wait := k.Take("a", t0, 0); ok || wait != time.Second {
		t.Fatalf("over the events: %v, wait %v, want 1s", ok, wait)
	}
	if ok, _ := k.Take("b", t0, 200); !ok {
		t.Fatal("another key shares the first's budget")
	}
	if ok, _ := k.Take("a", t0.Add(time.Second), 0); !ok {
		t.Fatal("no refill")
	}
	if ok, _ := k.Take("c", t0.Add(10*time.Second), 1000); !ok {
		t.Fatal("an event larger than the burst never passes")
	}
	if len(k.keys) != 1 {
		t.Fatalf("%d keys held, want the idle ones forgotten", len(k.keys))
	}
	if ok, _ := NewKeyed[string](0, 0, time.Second, 0).Take("x", t0, 1<<30); !ok {
		t.Fatal("unlimited refused")
	}
}
