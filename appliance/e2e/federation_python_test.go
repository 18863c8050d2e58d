package e2e

import (
	"bufio"
	"encoding/json"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"outpost/appliance/cot"
	"outpost/appliance/takclient"
	"outpost/internal/testkit"
)

// pythonGRPC returns a Python 3 that has grpcio and grpc_tools (Debian's
// python3-grpcio and python3-grpc-tools), or skips the test, failing it
// where tools are required (testkit.MissingTool; scripts/test-deps.sh
// installs them).
func pythonGRPC(t *testing.T) string {
	t.Helper()
	for _, p := range []string{"/usr/bin/python3", "python3"} {
		if path, err := exec.LookPath(p); err == nil && exec.Command(path, "-c", "import grpc, grpc_tools.protoc").Run() == nil {
			return path
		}
	}
	testkit.MissingTool(t, "python3 with grpcio and grpc_tools is missing: install the Debian packages python3-grpcio and python3-grpc-tools (scripts/test-deps.sh does)")
	return ""
}

// pyPeer is scripts/interop/fedpeer.py running, its JSON lines collected.
type pyPeer struct {
	cmd    *exec.Cmd
	mu     sync.Mutex
	lines  []map[string]any
	stderr testkit.Buffer
	done   chan error
}

// startPyPeer generates Python code from Outpost's .proto files and runs
// the peer with args.
func startPyPeer(t *testing.T, python string, args ...string) *pyPeer {
	t.Helper()
	root := testkit.ModuleRoot(t)
	gen := t.TempDir()
	protoDir := filepath.Join(root, "appliance", "federation", "fedproto")
	if b, err := exec.Command(python, "-m", "grpc_tools.protoc", "-I"+protoDir, "--python_out="+gen,
		"--grpc_python_out="+gen, "fig.proto", "binarypayload.proto").CombinedOutput(); err != nil {
		t.Fatalf("generating Python from our .proto: %v\n%s", err, b)
	}
	return runPyScript(t, python, gen, "fedpeer.py", args...)
}

// runPyScript runs scripts/interop/script with the generated code of gen on
// its path, collecting its JSON lines.
func runPyScript(t *testing.T, python, gen, script string, args ...string) *pyPeer {
	t.Helper()
	cmd := exec.Command(python, append([]string{filepath.Join(testkit.ModuleRoot(t), "scripts", "interop", script)}, args...)...)
	cmd.Env = append(os.Environ(), "PYTHONPATH="+gen)
	p := &pyPeer{cmd: cmd, done: make(chan error, 1)}
	cmd.Stderr = &p.stderr
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	go func() {
		sc := bufio.NewScanner(out)
		sc.Buffer(make([]byte, 64<<10), 1<<20)
		for sc.Scan() {
			var m map[string]any
			if json.Unmarshal(sc.Bytes(), &m) == nil {
				p.mu.Lock()
				p.lines = append(p.lines, m)
				p.mu.Unlock()
			}
		}
		p.done <- cmd.Wait()
	}()
	t.Cleanup(func() { cmd.Process.Kill() })
	return p
}

// find returns the first line with key whose value satisfies ok.
func (p *pyPeer) find(key string, ok func(any) bool) map[string]any {
	p.mu.Lock()
	defer p.mu.Unlock()
	for _, m := range p.lines {
		if v, has := m[key]; has && ok(v) {
			return m
		}
	}
	return nil
}

func (p *pyPeer) wait(t *testing.T) {
	t.Helper()
	select {
	case err := <-p.done:
		if err != nil {
			t.Fatalf("python peer: %v; it said %v\n%s", err, p.lines, p.stderr.String())
		}
	case <-time.After(2 * fedWait):
		t.Fatalf("python peer did not finish; it said %v\n%s", p.lines, p.stderr.String())
	}
}

func is(want string) func(any) bool { return func(v any) bool { return v == want } }

// TestFederationPythonPeer: a federate written with Python's grpcio from
// our .proto files (it shares only the wire facts) connects to Outpost, and
// Outpost connects to it. Both ways they exchange identity and groups, and
// a position crosses in each direction; with a group mapping, the groups
// announced and tagged are the mapped ones (docs/federation.md "Groups").
// Connecting, the peer also gets Outpost's client as a contact entry, and a
// mission crosses over ROL each way.
func TestFederationPythonPeer(t *testing.T) {
	python := pythonGRPC(t)
	ca := newFedCA(t, "Federation CA")
	pyCert, pyKey, _ := ca.issue(t, "python-peer")

	t.Run("python connects", func(t *testing.T) {
		b := startFederated(t, ca, "bravo", "")
		local := b.DialTCP(t)
		if err := local.Send(takclient.SA("OUT-1", "OUTPOSTER", 1, 2)); err != nil {
			t.Fatal(err)
		}
		// The position is sent before the peer connects: it comes with the replay.
		testkit.WaitFor(t, "B to hold OUT-1", func() bool { return len(b.Broker().Clients()) > 0 })
		peer := startPyPeer(t, python, "client", fedListener(t, b), "--cert", pyCert, "--key", pyKey, "--ca", ca.trust(),
			"--server-name", "bravo", "--send-uid", "PY-1", "--expect-uid", "OUT-1",
			"--send-mission", "py-mission", "--expect-mission", "outpost-mission")
		testkit.WaitForWithin(t, fedWait, "the Python peer's mission on B", func() bool {
			return marti(t, b, "GET", "/Marti/api/missions/py-mission", nil).Status == 200
		})
		if res := marti(t, b, "PUT", "/Marti/api/missions/outpost-mission?creatorUid=OUT-1", nil); res.Status != 201 {
			t.Fatalf("create mission on B: %d %s", res.Status, res.Body)
		}
		ev, err := local.WaitFor(func(e *cot.Event) bool { return e.UID == "PY-1" }, fedWait)
		if err != nil {
			t.Fatalf("B's client did not get the Python peer's position: %v", err)
		}
		if ev.Detail.Contact == nil || ev.Detail.Contact.Callsign != "PY" || ev.Point.Lat != 12.5 || ev.Detail.Track == nil || ev.Detail.Track.Course != 90 {
			t.Fatalf("the Python peer's position arrived as %+v %s", ev, ev.Detail.XML)
		}
		peer.wait(t)
		if peer.find("identity", is("bravo")) == nil || peer.find("kind", is("FEDERATION_TAK_SERVER")) == nil ||
			peer.find("ready", is("SERVING")) == nil || peer.find("health", is("SERVING")) == nil {
			t.Fatalf("identity, groups or health not as expected: %v", peer.lines)
		}
		got := peer.find("event", is("OUT-1"))
		if got == nil || !strings.Contains(got["other"].(string), `callsign="OUTPOSTER"`) {
			t.Fatalf("the peer's view of OUT-1: %v", got)
		}
		if c := peer.find("contact", is("OUT-1")); c == nil || c["callsign"] != "OUTPOSTER" || c["operation"] != "CREATE" {
			t.Fatalf("the peer's contact entry of OUT-1: %v (%v)", c, peer.lines)
		}
		if r := peer.find("rol", func(v any) bool {
			s, _ := v.(string)
			return strings.HasPrefix(s, "create mission\n{") && strings.Contains(s, `"name":"outpost-mission"`) && strings.HasSuffix(s, ";")
		}); r == nil {
			t.Fatalf("the peer got no ROL of outpost-mission: %v", peer.lines)
		}
	})

	t.Run("outpost connects", func(t *testing.T) {
		peer := startPyPeer(t, python, "server", "0", "--cert", pyCert, "--key", pyKey, "--ca", ca.trust(),
			"--name", "python-server", "--send-uid", "PY-2", "--expect-uid", "OUT-2")
		var port float64
		testkit.WaitForWithin(t, fedWait, "the python server to listen", func() bool {
			if m := peer.find("listening", func(any) bool { return true }); m != nil {
				port, _ = m["listening"].(float64)
			}
			return port > 0
		})
		a := startFederated(t, ca, "alpha", "", "py="+net.JoinHostPort("127.0.0.1", strconv.Itoa(int(port))))
		local := a.DialTCP(t)
		if _, err := local.WaitFor(func(e *cot.Event) bool { return e.UID == "PY-2" }, fedWait); err != nil {
			t.Fatalf("A's client did not get the Python server's position: %v", err)
		}
		if err := local.Send(takclient.SA("OUT-2", "OUTPOSTER", 3, 4)); err != nil {
			t.Fatal(err)
		}
		peer.wait(t)
		if peer.find("subscriber", is("alpha")) == nil || peer.find("groups", func(v any) bool {
			l, ok := v.([]any)
			return ok && len(l) == 1 && l[0] == "__ANON__"
		}) == nil {
			t.Fatalf("the server did not see Outpost's subscription and groups: %v", peer.lines)
		}
		if st := fedStats(a, "py"); st.EventsIn == 0 || st.EventsOut == 0 {
			t.Fatalf("A's counters of py: %+v", st)
		}
	})

	t.Run("groups", func(t *testing.T) {
		b := startFederated(t, ca, "bravo", "")
		cyan := groupClient(t, b, "b-cyan", "Cyan")
		anon := b.DialTCP(t)
		res := fedAPI(t, b, adminToken(t, b), "PUT", "/api/federation/federates/python-peer/groups", map[string]any{
			"outbound": []map[string]string{{"local": "Cyan", "federate": "Fed-Cyan"}},
			"inbound":  []map[string]string{{"federate": "Fed-Cyan", "local": "Cyan"}}})
		if res.Status != 200 {
			t.Fatalf("mapping python-peer: %d %s", res.Status, res.Body)
		}
		if err := cyan.Send(takclient.SA("OUT-3", "CYANIST", 5, 6)); err != nil {
			t.Fatal(err)
		}
		testkit.WaitFor(t, "B to hold OUT-3", func() bool { return len(b.Broker().Clients()) > 0 })
		peer := startPyPeer(t, python, "client", fedListener(t, b), "--cert", pyCert, "--key", pyKey, "--ca", ca.trust(),
			"--server-name", "bravo", "--send-uid", "PY-3", "--expect-uid", "OUT-3", "--groups", "Fed-Cyan")
		if _, err := cyan.WaitFor(func(e *cot.Event) bool { return e.UID == "PY-3" }, fedWait); err != nil {
			t.Fatalf("B's Cyan client did not get the Python peer's Fed-Cyan position: %v", err)
		}
		peer.wait(t)
		onlyCyan := func(v any) bool {
			l, ok := v.([]any)
			return ok && len(l) == 1 && l[0] == "Fed-Cyan"
		}
		if peer.find("groups", onlyCyan) == nil {
			t.Fatalf("B did not announce Fed-Cyan: %v", peer.lines)
		}
		if got := peer.find("event", is("OUT-3")); got == nil || !onlyCyan(got["eventGroups"]) {
			t.Fatalf("OUT-3 reached the peer as %v", got)
		}
		if n := quietCount(anon, func(e *cot.Event) bool { return e.UID == "PY-3" }); n != 0 {
			t.Fatalf("B's anonymous client got the Fed-Cyan position")
		}
	})
}
