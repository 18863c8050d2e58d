package cotsession

import (
	"context"
	"math/big"
	"strings"
	"testing"
	"time"

	"outpost/appliance/broker"
)

// TestPlaces: Enter counts places against its limit, including those of
// connections not listed yet (a handshake in progress); Stats counts the
// listed ones.
func TestPlaces(t *testing.T) {
	f := newFixture(t, Config{}, broker.Options{})
	if !f.d.Enter(2) || !f.d.Enter(2) {
		t.Fatal("a place under the limit was refused")
	}
	if f.d.Enter(2) {
		t.Fatal("a third place was given under a limit of 2")
	}
	c := &testConn{cut: make(chan struct{})}
	f.d.Join(&c.Session, broker.SessionInfo{Addr: "192.0.2.1:1"}, Identity{})
	if !f.d.Add(c) {
		t.Fatal("not listed")
	}
	if st := f.d.Stats(); st.Open != 1 {
		t.Fatalf("open %d, want the one listed", st.Open)
	}
	f.d.Leave(nil) // a handshake that failed: nothing listed
	if !f.d.Enter(2) {
		t.Fatal("a place given back was not free again")
	}
	f.d.Leave(nil)
	f.d.Leave(c)
	if st := f.d.Stats(); st.Open != 0 {
		t.Fatalf("open %d after the connection left", st.Open)
	}
}

// TestCloseWhere closes the connections of matching certificates only.
func TestCloseWhere(t *testing.T) {
	f := newFixture(t, Config{}, broker.Options{})
	one, two, none := f.join(t, "one", big.NewInt(1)), f.join(t, "two", big.NewInt(2)), f.join(t, "", nil)
	n := f.d.CloseWhere(func(serial *big.Int) bool { return serial.Cmp(big.NewInt(2)) == 0 }, broker.ReasonRevoked)
	if n != 1 {
		t.Fatalf("closed %d, want 1", n)
	}
	if got := two.Sess.Reason(); got != broker.ReasonRevoked {
		t.Fatalf("the matching connection: %v", got)
	}
	for _, c := range []*testConn{one, none} {
		if got := c.Sess.Reason(); got != broker.ReasonNone {
			t.Fatalf("a connection that did not match was closed: %v", got)
		}
	}
	if !strings.Contains(f.logs.String(), "connection closed by the server") || !strings.Contains(f.logs.String(), "certificate revoked") {
		t.Fatalf("the revocation was not logged with its reason:\n%s", f.logs)
	}
}

// serveUntil plays a transport's connection at shutdown: once its session
// closes it drains for drain (forever when negative, until cut), then
// leaves.
func serveUntil(d *Driver[*testConn], c *testConn, drain time.Duration) {
	go func() {
		<-c.Sess.Done()
		if drain >= 0 {
			select {
			case <-time.After(drain):
			case <-c.cut:
			}
		} else {
			<-c.cut
		}
		c.Sess.Release()
		d.Leave(c)
	}()
}

// TestShutdownDrainsThenCuts: every session is closed with ReasonShutdown;
// connections that finish within the budget are not cut, those still
// draining when it ends are, and Shutdown returns once all have left.
func TestShutdownDrainsThenCuts(t *testing.T) {
	f := newFixture(t, Config{}, broker.Options{})
	quick, stalled := f.join(t, "", nil), f.join(t, "", nil)
	serveUntil(f.d, quick, 10*time.Millisecond)
	serveUntil(f.d, stalled, -1)

	const budget = 300 * time.Millisecond
	ctx, cancel := context.WithTimeout(context.Background(), budget)
	defer cancel()
	deadline, _ := ctx.Deadline()
	began := time.Now()
	f.d.Shutdown(ctx)
	if took := time.Since(began); took < budget-20*time.Millisecond || took > budget+2*time.Second {
		t.Fatalf("Shutdown took %v with a budget of %v and a stalled connection", took, budget)
	}
	for _, c := range []*testConn{quick, stalled} {
		if got := c.Sess.Reason(); got != broker.ReasonShutdown {
			t.Fatalf("closed with %v, want %v", got, broker.ReasonShutdown)
		}
	}
	if quick.cuts.Load() != 0 || stalled.cuts.Load() != 1 {
		t.Fatalf("cuts: %d of the connection that drained in time, %d of the stalled one; want 0 and 1",
			quick.cuts.Load(), stalled.cuts.Load())
	}
	if got := f.d.DrainDeadline(time.Time{}); !got.Equal(deadline) {
		t.Fatalf("drain deadline %v, want the budget's end %v", got, deadline)
	}
	if !strings.Contains(f.logs.String(), "clients still receiving at the end of the drain budget were closed") ||
		!strings.Contains(f.logs.String(), "connections=1") {
		t.Fatalf("the cut was not logged with its count:\n%s", f.logs)
	}
	if st := f.d.Stats(); st.Open != 0 {
		t.Fatalf("%d connections still listed", st.Open)
	}
	// Closed for good: no place, no listing, and a second Shutdown returns.
	if f.d.Enter(0) {
		t.Fatal("a place was given after Shutdown")
	}
	c := &testConn{cut: make(chan struct{})}
	f.d.Join(&c.Session, broker.SessionInfo{}, Identity{})
	if f.d.Add(c) {
		t.Fatal("a connection was listed after Shutdown")
	}
	f.d.Shutdown(context.Background())
}

// TestShutdownWithinBudget: when every connection ends in time nothing is
// cut and Shutdown does not wait for the budget. Before a shutdown the
// drain deadline is the caller's.
func TestShutdownWithinBudget(t *testing.T) {
	f := newFixture(t, Config{}, broker.Options{})
	otherwise := time.Now().Add(time.Hour)
	if got := f.d.DrainDeadline(otherwise); !got.Equal(otherwise) {
		t.Fatalf("drain deadline %v before any shutdown", got)
	}
	conns := []*testConn{f.join(t, "", nil), f.join(t, "", nil), f.join(t, "", nil)}
	for _, c := range conns {
		serveUntil(f.d, c, 0)
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	began := time.Now()
	f.d.Shutdown(ctx)
	if took := time.Since(began); took > 10*time.Second {
		t.Fatalf("Shutdown took %v though every connection ended at once", took)
	}
	for _, c := range conns {
		if c.cuts.Load() != 0 {
			t.Fatal("a connection that ended in time was cut")
		}
	}
	if strings.Contains(f.logs.String(), "drain budget") {
		t.Fatalf("a cut was logged though nothing was cut:\n%s", f.logs)
	}
}
