package netx

import (
	"bytes"
	"errors"
	"io"
	"net"
	"os"
	"testing"
	"time"
)

// tryWriter is what the stream writer uses of an accepted connection to
// write without waiting.
type tryWriter interface {
	parked
	TryWritev(bufs *net.Buffers) (int, error)
	TryUncork() (bool, error)
	Cork()
	Uncork() error
}

// smallBuffers accepts one connection with small socket buffers on both
// sides, so a few hundred KiB fill them (not tiny: with a window of a few
// KiB the kernel's zero-window probes back off and a transfer crawls), and makes its writes nonblocking.
func smallBuffers(t *testing.T) (tryWriter, *net.TCPConn) {
	t.Helper()
	l := listen(t, Config{})
	server, client := acceptOne(t, l, func() (net.Conn, error) { return net.Dial("tcp", l.Addr().String()) })
	client.(*net.TCPConn).SetReadBuffer(64 << 10)
	server.(interface{ NetConn() net.Conn }).NetConn().(*net.TCPConn).SetWriteBuffer(64 << 10)
	return switchNonblocking(t, server).(tryWriter), client.(*net.TCPConn)
}

// pattern is n bytes that show where a stream went wrong.
func pattern(n, seed int) []byte {
	b := make([]byte, n)
	for i := range b {
		b[i] = byte(i*7 + seed)
	}
	return b
}

// readAll reads want bytes from c in the background.
func readAll(c net.Conn, want int) <-chan []byte {
	got := make(chan []byte, 1)
	go func() {
		c.SetReadDeadline(time.Now().Add(20 * time.Second))
		b := make([]byte, want)
		n, _ := io.ReadFull(c, b)
		got <- b[:n]
	}()
	return got
}

// TestTryWritev: a write that does not wait takes what the socket takes,
// drops it from the list and says ErrWouldBlock when the socket is full;
// what it wrote arrives in order; past the deadline, after the client is
// gone and after Close it fails.
func TestTryWritev(t *testing.T) {
	p, client := smallBuffers(t)
	parts := [][]byte{pattern(1<<20, 1), nil, pattern(5, 2), pattern(3<<20, 3)}
	want := bytes.Join(parts, nil)
	bufs := net.Buffers(append([][]byte(nil), parts...))

	// Until the socket is full.
	sent := 0
	for {
		n, err := p.TryWritev(&bufs)
		if errors.Is(err, ErrWouldBlock) {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		sent += n
	}
	left := 0
	for _, b := range bufs {
		left += len(b)
	}
	if sent == 0 || sent+left != len(want) {
		t.Fatalf("sent %d, %d left in the list, of %d", sent, left, len(want))
	}

	// The reader drains; the writer goes on whenever the socket takes more.
	got := readAll(client, len(want))
	deadline := time.Now().Add(20 * time.Second)
	for len(bufs) > 0 {
		if _, err := p.TryWritev(&bufs); err != nil && !errors.Is(err, ErrWouldBlock) {
			t.Fatal(err)
		}
		if time.Now().After(deadline) {
			t.Fatal("the socket never took the rest")
		}
		time.Sleep(time.Millisecond)
	}
	if b := <-got; !bytes.Equal(b, want) {
		t.Fatalf("the client read %d bytes, not what was written (%d)", len(b), len(want))
	}

	// Past the write deadline.
	p.SetWriteDeadline(time.Now().Add(-time.Second))
	one := net.Buffers{[]byte("x")}
	if _, err := p.TryWritev(&one); !errors.Is(err, os.ErrDeadlineExceeded) {
		t.Fatalf("write past the deadline: %v", err)
	}
	p.SetWriteDeadline(time.Time{})

	// The client is gone: a write fails (broken pipe or reset) soon.
	client.Close()
	failed := false
	for range 100 {
		one = net.Buffers{[]byte("after the end")}
		if _, err := p.TryWritev(&one); err != nil && !errors.Is(err, ErrWouldBlock) {
			failed = true
			break
		}
		time.Sleep(10 * time.Millisecond)
	}
	if !failed {
		t.Fatal("writes to a closed client kept succeeding")
	}
	p.Close()
	one = net.Buffers{[]byte("x")}
	if _, err := p.TryWritev(&one); err == nil || errors.Is(err, ErrWouldBlock) {
		t.Fatalf("write after Close: %v", err)
	}
}

// TestTryUncork: what waited while corked leaves as far as the socket takes
// it; the rest stays corked until a later TryUncork or Uncork sends it, in
// order, and then writes go straight through again.
func TestTryUncork(t *testing.T) {
	p, client := smallBuffers(t)
	first, second, third := pattern(4<<20, 4), pattern(100<<10, 5), []byte("straight through")
	want := bytes.Join([][]byte{first, second, third}, nil)

	p.Cork()
	p.Write(first)
	if all, err := p.TryUncork(); all || err != nil {
		t.Fatalf("TryUncork of 4 MiB into small buffers: all %v, err %v", all, err)
	}
	// Still corked: this waits behind what is left.
	p.Write(second)
	got := readAll(client, len(want))
	if err := p.Uncork(); err != nil {
		t.Fatal(err)
	}
	if _, err := p.Write(third); err != nil {
		t.Fatal(err)
	}
	if b := <-got; !bytes.Equal(b, want) {
		t.Fatalf("the client read %d bytes, not what was written (%d)", len(b), len(want))
	}

	// Nothing corked: TryUncork has nothing to send and says so.
	p.Cork()
	if all, err := p.TryUncork(); !all || err != nil {
		t.Fatalf("empty TryUncork: all %v, err %v", all, err)
	}
	got = readAll(client, 2)
	p.Write([]byte("ok"))
	if b := <-got; string(b) != "ok" {
		t.Fatalf("after an empty TryUncork the client read %q", b)
	}
}
