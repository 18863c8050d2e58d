package store

import (
	"context"
	"strings"
	"testing"
	"time"
)

// The federate queue keeps order, is per federate, and trims by age and
// bytes, oldest first, counting what it drops.
func TestFederateQueue(t *testing.T) {
	s := openTest(t, Options{})
	ctx := context.Background()
	fs := s.Federates()
	now := time.Now()
	b := QueueBounds{MaxAge: time.Hour, MaxBytes: 100}
	item := func(c string) []byte { return []byte(strings.Repeat(c, 10)) }
	if d, err := fs.QueueAppend(ctx, "b", [][]byte{item("a"), item("b"), item("c")}, now.Add(-2*time.Hour), b); err != nil || d != 0 {
		t.Fatalf("old: dropped %d %v", d, err)
	}
	if d, err := fs.QueueAppend(ctx, "b", [][]byte{item("1"), item("2"), nil}, now, b); err != nil || d != 4 {
		t.Fatalf("append: dropped %d %v", d, err) // the three older than MaxAge, the empty item
	}
	if d, err := fs.QueueAppend(ctx, "other", [][]byte{item("x")}, now, b); err != nil || d != 0 {
		t.Fatalf("other: %d %v", d, err)
	}
	var many [][]byte
	for _, c := range "3456789abc" {
		many = append(many, item(string(c)))
	}
	if d, err := fs.QueueAppend(ctx, "b", many, now, b); err != nil || d != 2 {
		t.Fatalf("over the bytes: dropped %d %v", d, err) // 12 items of 10 bytes, 100 kept
	}
	if n, bytes, err := fs.QueueSize(ctx, "b"); err != nil || n != 10 || bytes != 100 {
		t.Fatalf("size %d %d %v", n, bytes, err)
	}
	got, err := fs.QueueTake(ctx, "b", 4)
	if err != nil || len(got) != 4 || string(got[0].Body) != string(item("3")) || string(got[3].Body) != string(item("6")) {
		t.Fatalf("take %v %v", got, err)
	}
	if err := fs.QueueDelete(ctx, "b", got[3].ID); err != nil {
		t.Fatal(err)
	}
	if got, _ := fs.QueueTake(ctx, "b", 100); len(got) != 6 || string(got[0].Body) != string(item("7")) {
		t.Fatalf("after delete %v", got)
	}
	if got, _ := fs.QueueTake(ctx, "other", 100); len(got) != 1 {
		t.Fatalf("other queue %v", got)
	}
}
