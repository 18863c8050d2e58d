package testkit

import (
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"sync"
	"testing"
)

// ownLoopback keeps the addresses this process holds, and the files whose
// locks hold them, for the process's life.
var ownLoopback struct {
	mu   sync.Mutex // mu guards held
	held []*os.File
}

// OwnLoopback returns an address of 127.0.0.0/8 that no other test process
// on this machine uses while this one runs (architecture.md "The root
// composes": a test never races for a port). A server whose address a test
// must know before the server exists (a federate dialled before it starts,
// a server started again on its address) listens there on a fixed port: no
// other socket can hold that port, since nothing else binds the address.
// Each address is held by an exclusive lock on a file of the temporary
// directory, which the kernel drops when the process ends, however it
// ends. Linux routes the whole of 127.0.0.0/8 to the loopback interface.
func OwnLoopback(t testing.TB) string {
	t.Helper()
	dir := filepath.Join(os.TempDir(), "outpost-test-loopback")
	if err := os.MkdirAll(dir, 0o700); err != nil {
		t.Fatal(err)
	}
	ownLoopback.mu.Lock()
	defer ownLoopback.mu.Unlock()
	for range 1000 {
		// 127.64.0.0/10: away from 127.0.0.1 and the addresses tools use.
		n := rand.Uint32N(1 << 22)
		addr := fmt.Sprintf("127.%d.%d.%d", 64+n>>16, n>>8&0xff, 1+n&0xff%254)
		f, err := os.OpenFile(filepath.Join(dir, addr), os.O_CREATE|os.O_RDWR, 0o600)
		if err != nil {
			t.Fatal(err)
		}
		if !lockFile(f) {
			f.Close() // another process holds it
			continue
		}
		ownLoopback.held = append(ownLoopback.held, f)
		return addr
	}
	t.Fatal("OwnLoopback: no free address of 127.64.0.0/10 after 1000 tries")
	return ""
}
