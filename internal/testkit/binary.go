package testkit

import (
	"bufio"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"sync"
	"syscall"
	"testing"
	"time"
)

var (
	buildOnce sync.Once
	binPath   string
	buildOut  []byte
	buildErr  error
)

// Binary builds cmd/outpost once per test process (CGO_ENABLED=0, as
// `make build` does) and returns its path.
func Binary(t testing.TB) string {
	t.Helper()
	root := ModuleRoot(t)
	buildOnce.Do(func() {
		dir, err := os.MkdirTemp("", "outpost-bin-")
		if err != nil {
			buildErr = err
			return
		}
		binPath = filepath.Join(dir, "outpost")
		cmd := exec.Command("go", "build", "-o", binPath, "./cmd/outpost")
		cmd.Dir = root
		cmd.Env = append(os.Environ(), "CGO_ENABLED=0")
		buildOut, buildErr = cmd.CombinedOutput()
	})
	if buildErr != nil {
		t.Fatalf("building outpost: %v\n%s", buildErr, buildOut)
	}
	return binPath
}

// Proc is a running outpost process started by Start.
type Proc struct {
	Cmd     *exec.Cmd
	DataDir string
	// Addrs maps each listener name ("rest", "http", "https", "cot-tcp",
	// "cot-tls", "enroll") to its address, from the "listening" log lines.
	Addrs map[string]string

	mu      sync.Mutex
	logs    []map[string]any
	logSize int
	exit    chan error
	exitErr error
	exited  bool
}

// DefaultArgs are the flags Start passes before the caller's: loopback,
// JSON logs at debug level, free ports for REST, HTTP and CoT TCP, and the
// TLS listeners off (callers enable them with "--https-port", "0" etc.).
var DefaultArgs = []string{"--bind", "127.0.0.1", "--public-host", "127.0.0.1",
	"--log-format", "json", "--log-level", "debug",
	"--rest-port", "0", "--http-port", "0", "--cot-port", "0",
	"--https-port", "-1", "--ssl-cot-port", "-1", "--enroll-port", "-1"}

// Start runs `outpost run` on dataDir with DefaultArgs and extra (later flags
// win) and waits for "Outpost is ready". The process is killed when the
// test ends unless Stop ran.
func Start(t testing.TB, dataDir string, extra ...string) *Proc {
	t.Helper()
	return StartWith(t, []string{Binary(t)}, dataDir, extra...)
}

// StartWith is Start for another build of outpost: command is the program
// and its leading arguments (e.g. an emulator and a cross-compiled binary),
// dataDir is passed as the binary sees it (a Windows path under Wine).
func StartWith(t testing.TB, command []string, dataDir string, extra ...string) *Proc {
	t.Helper()
	args := append(append([]string(nil), command[1:]...), "run", "--data-dir", dataDir)
	args = append(append(args, DefaultArgs...), extra...)
	cmd := exec.Command(command[0], args...)
	stderr, err := cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	p := &Proc{Cmd: cmd, DataDir: dataDir, Addrs: map[string]string{}, exit: make(chan error, 1)}
	ready := make(chan struct{})
	go func() {
		sc := bufio.NewScanner(stderr)
		sc.Buffer(make([]byte, 1<<20), 4<<20)
		var once sync.Once
		for sc.Scan() {
			var m map[string]any
			if json.Unmarshal(sc.Bytes(), &m) != nil {
				m = map[string]any{"msg": "(not JSON)", "line": sc.Text()}
			}
			p.mu.Lock()
			p.logs = append(p.logs, m)
			p.logSize += len(sc.Bytes()) + 1
			if m["msg"] == "listening" {
				name, _ := m["listener"].(string)
				addr, _ := m["addr"].(string)
				p.Addrs[name] = addr
			}
			p.mu.Unlock()
			if m["msg"] == "Outpost is ready" {
				once.Do(func() { close(ready) })
			}
		}
		p.exit <- cmd.Wait()
	}()
	t.Cleanup(func() {
		if !p.hasExited() {
			cmd.Process.Kill()
			p.wait(5 * time.Second)
		}
	})
	select {
	case <-ready:
	case err := <-p.exit:
		p.setExit(err)
		t.Fatalf("outpost exited before it was ready: %v\n%s", err, p.LogText())
	case <-time.After(60 * time.Second):
		t.Fatalf("outpost not ready within 60 s\n%s", p.LogText())
	}
	return p
}

func (p *Proc) setExit(err error) {
	p.mu.Lock()
	p.exitErr, p.exited = err, true
	p.mu.Unlock()
}

func (p *Proc) hasExited() bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.exited
}

// wait waits up to d for the process to exit and reports whether it did.
func (p *Proc) wait(d time.Duration) (error, bool) {
	if p.hasExited() {
		p.mu.Lock()
		defer p.mu.Unlock()
		return p.exitErr, true
	}
	select {
	case err := <-p.exit:
		p.setExit(err)
		return err, true
	case <-time.After(d):
		return nil, false
	}
}

// Addr returns a listener's address or fails the test.
func (p *Proc) Addr(t testing.TB, listener string) string {
	t.Helper()
	p.mu.Lock()
	defer p.mu.Unlock()
	a := p.Addrs[listener]
	if a == "" {
		t.Fatalf("listener %s has no address: %v", listener, p.Addrs)
	}
	return a
}

// Stop sends SIGTERM and returns the exit error (nil for exit 0) and how
// long the exit took; it fails the test when the process does not exit
// within wait.
func (p *Proc) Stop(t testing.TB, wait time.Duration) (error, time.Duration) {
	t.Helper()
	return p.Signal(t, syscall.SIGTERM, wait)
}

// Signal sends sig and returns the exit error (nil for exit 0) and how long
// the exit took; it fails the test when the process does not exit within
// wait.
func (p *Proc) Signal(t testing.TB, sig os.Signal, wait time.Duration) (error, time.Duration) {
	t.Helper()
	start := time.Now()
	p.Cmd.Process.Signal(sig)
	err, ok := p.wait(wait)
	if !ok {
		t.Fatalf("outpost did not exit within %v of %v", wait, sig)
	}
	return err, time.Since(start)
}

// Logs returns the log lines so far, parsed.
func (p *Proc) Logs() []map[string]any {
	p.mu.Lock()
	defer p.mu.Unlock()
	return append([]map[string]any(nil), p.logs...)
}

// LogBytes is the total size of the log written so far.
func (p *Proc) LogBytes() int {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.logSize
}

// Logged reports whether a line with this message was written.
func (p *Proc) Logged(msg string) bool { return p.CountLogged(msg) > 0 }

// CountLogged counts the lines with this message.
func (p *Proc) CountLogged(msg string) int {
	p.mu.Lock()
	defer p.mu.Unlock()
	n := 0
	for _, l := range p.logs {
		if l["msg"] == msg {
			n++
		}
	}
	return n
}

// LogText is every log line, re-encoded, for failure messages.
func (p *Proc) LogText() string {
	p.mu.Lock()
	defer p.mu.Unlock()
	var b []byte
	for _, l := range p.logs {
		j, _ := json.Marshal(l)
		b = append(append(b, j...), '\n')
	}
	return string(b)
}

// PID is the process id.
func (p *Proc) PID() int { return p.Cmd.Process.Pid }
