//go:build !race && linux

package hostile

import (
	"context"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"outpost/appliance/store"
	"outpost/appliance/takclient"
	"outpost/internal/testkit"
)

// Row 9: SIGTERM while one client has stopped reading. Before: the shutdown
// took the whole 10 s, exited 1 and lost the queued history, because the
// writers' drain consumed the budget of the history flush. Now: the drain
// gets half of shutdownTimeout, the flush and the store the rest; the exit
// is 0 and the history is complete. And no departure (t-x-d-d) goes out or
// is stored while everyone is being disconnected.
func TestShutdownWithStalledClient(t *testing.T) {
	e := start(t, "--shutdown-timeout", "4s")
	stalled, err := net.Dial("tcp", e.addr("cot-tcp"))
	if err != nil {
		t.Fatal(err)
	}
	defer stalled.Close()
	stalled.(*net.TCPConn).SetReadBuffer(4096)
	stalled.Write(takclient.SA("STALLED", "STALLED", 1, 1).AppendXML(nil))
	// Fill the stalled client's socket buffers and queue (several MiB) with
	// chats it never reads; three senders, each within its own rate.
	for f := range 3 {
		flood, err := takclient.Dial(e.addr("cot-tcp"), nil)
		if err != nil {
			t.Fatal(err)
		}
		defer flood.Close()
		for i := range 400 {
			flood.Send(takclient.Chat(fmt.Sprintf("FLOOD-%d", f), strings.Repeat("f", 4000)+fmt.Sprint(i)))
		}
	}
	time.Sleep(1500 * time.Millisecond) // the bystanders keep exchanging SAs meanwhile
	beforeStop := time.Now()
	exitErr, took := e.p.Stop(t, 15*time.Second)
	t.Logf("exit %v after %v", exitErr, took.Round(time.Millisecond))
	if exitErr != nil {
		t.Fatalf("exit status %v, want 0\n%s", exitErr, e.p.LogText())
	}
	if took > 5*time.Second {
		t.Errorf("shutdown took %v with shutdownTimeout 4s", took)
	}
	if !e.p.Logged("clients still receiving at the end of the drain budget were closed") {
		t.Error("the stalled client was not still receiving at the end of the drain: the test did not stall it")
	}
	for _, b := range []*bystander{e.tcp, e.tls} {
		if b.saw(takclient.Type("t-x-d-d")) {
			t.Errorf("%s received a departure during shutdown", b.uid)
		}
	}
	st, err := store.Open(context.Background(), filepath.Join(e.dataDir, "outpost.db"), store.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	for _, uid := range []string{e.tcp.uid, e.tls.uid} {
		ev, err := st.Events().LatestEvent(context.Background(), uid, store.AllGroups)
		if err != nil {
			t.Fatalf("history of %s: %v", uid, err)
		}
		// The last SAs before the signal were flushed, not lost.
		if ev.ReceivedAt.Before(beforeStop.Add(-time.Second)) {
			t.Errorf("%s: newest stored SA from %v, signal at %v: the queued history was lost", uid, ev.ReceivedAt, beforeStop)
		}
	}
	if _, err := st.Events().LatestEvent(context.Background(), "STALLED", store.AllGroups); err != nil {
		t.Errorf("the stalled client's SA was not stored: %v", err)
	}
	n, err := st.Events().CountEventsOfType(context.Background(), "t-x-d-d")
	if err != nil || n != 0 {
		t.Errorf("%d departures stored during shutdown (%v)", n, err)
	}
}

// Row 10: under umask 022 the database, its -wal and -shm were 0644. Now
// they are created 0600 whatever the umask.
func TestDatabaseFilesPrivate(t *testing.T) {
	old := syscall.Umask(0o022)
	defer syscall.Umask(old)
	dataDir := t.TempDir()
	p := testkit.Start(t, dataDir)
	c, err := takclient.Dial(p.Addr(t, "cot-tcp"), nil)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	c.Send(takclient.SA("U", "U", 1, 1))
	testkit.WaitFor(t, "the -wal and -shm files", func() bool {
		_, e1 := os.Stat(filepath.Join(dataDir, "outpost.db-wal"))
		_, e2 := os.Stat(filepath.Join(dataDir, "outpost.db-shm"))
		return e1 == nil && e2 == nil
	})
	for _, f := range []string{"outpost.db", "outpost.db-wal", "outpost.db-shm", "secrets.yaml"} {
		fi, err := os.Stat(filepath.Join(dataDir, f))
		if err != nil {
			t.Fatal(err)
		}
		if fi.Mode().Perm() != 0o600 {
			t.Errorf("%s has mode %v, want 0600", f, fi.Mode().Perm())
		}
	}
	p.Stop(t, 15*time.Second)
}
