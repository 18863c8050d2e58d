package e2e

import (
	"net"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"outpost/appliance/cot"
	"outpost/appliance/takclient"
	"outpost/internal/testkit"
)

// pythonProtobuf returns a Python 3 with the protobuf runtime (Debian's
// python3-protobuf) and the command that generates its message classes
// (grpc_tools' protoc, or Debian's protoc), or skips the test, failing it
// where tools are required (testkit.MissingTool; scripts/test-deps.sh
// installs them).
func pythonProtobuf(t *testing.T) (python string, protoc []string) {
	t.Helper()
	for _, p := range []string{"/usr/bin/python3", "python3"} {
		path, err := exec.LookPath(p)
		if err != nil || exec.Command(path, "-c", "import google.protobuf").Run() != nil {
			continue
		}
		if exec.Command(path, "-c", "import grpc_tools.protoc").Run() == nil {
			return path, []string{path, "-m", "grpc_tools.protoc"}
		}
		if pc, err := exec.LookPath("protoc"); err == nil {
			return path, []string{pc}
		}
	}
	testkit.MissingTool(t, "python3 with protobuf and a protoc are missing: install the Debian packages python3-protobuf and python3-grpc-tools (scripts/test-deps.sh does)")
	return "", nil
}

// startPyV1 generates Python message classes from Outpost's fig.proto and
// runs scripts/interop/fedpeer_v1.py with args.
func startPyV1(t *testing.T, args ...string) *pyPeer {
	t.Helper()
	python, protoc := pythonProtobuf(t)
	gen := t.TempDir()
	protoDir := filepath.Join(testkit.ModuleRoot(t), "appliance", "federation", "fedproto")
	cmd := exec.Command(protoc[0], append(protoc[1:], "-I"+protoDir, "--python_out="+gen, "fig.proto", "binarypayload.proto")...)
	if b, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("generating Python from our .proto: %v\n%s", err, b)
	}
	return runPyScript(t, python, gen, "fedpeer_v1.py", args...)
}

// TestFederationV1PythonPeer: a federation v1 peer written in Python (its
// classes generated from our .proto, its framing written from the official
// server's facts) connects to Outpost's v1 listener, and Outpost connects
// to it as a v1 federate. A position crosses in each direction.
func TestFederationV1PythonPeer(t *testing.T) {
	ca := newFedCA(t, "Federation CA")
	pyCert, pyKey, _ := ca.issue(t, "python-v1")

	t.Run("python connects", func(t *testing.T) {
		b := startFederatedV1(t, ca, "bravo", "")
		local := b.DialTCP(t)
		if err := local.Send(takclient.SA("OUTV1-1", "OUTPOSTER", 1, 2)); err != nil {
			t.Fatal(err)
		}
		testkit.WaitFor(t, "B to hold OUTV1-1", func() bool { return len(b.Broker().Clients()) > 0 })
		peer := startPyV1(t, "client", fedV1Listener(t, b), "--cert", pyCert, "--key", pyKey, "--ca", ca.trust(),
			"--send-uid", "PYV1-1", "--expect-uid", "OUTV1-1")
		ev, err := local.WaitFor(func(e *cot.Event) bool { return e.UID == "PYV1-1" }, fedWait)
		if err != nil {
			t.Fatalf("B's client did not get the Python peer's position: %v", err)
		}
		if ev.Detail.Contact == nil || ev.Detail.Contact.Callsign != "PYV1" || ev.Point.Lat != 21.5 || ev.Detail.Track == nil || ev.Detail.Track.Course != 45 {
			t.Fatalf("the Python peer's position arrived as %+v %s", ev, ev.Detail.XML)
		}
		peer.wait(t)
		if peer.find("connected", is("bravo")) == nil {
			t.Fatalf("the peer did not see B's certificate: %v", peer.lines)
		}
		got := peer.find("event", is("OUTV1-1"))
		if got == nil || !strings.Contains(got["other"].(string), `callsign="OUTPOSTER"`) {
			t.Fatalf("the peer's view of OUTV1-1: %v", got)
		}
		if st := fedStats(b, "python-v1"); st.EventsIn == 0 || st.Published == 0 || st.EventsOut == 0 {
			t.Fatalf("B's counters of the peer: %+v", st)
		}
	})

	t.Run("outpost connects", func(t *testing.T) {
		peer := startPyV1(t, "server", "0", "--cert", pyCert, "--key", pyKey, "--ca", ca.trust(),
			"--send-uid", "PYV1-2", "--expect-uid", "OUTV1-2")
		var port float64
		testkit.WaitForWithin(t, fedWait, "the python server to listen", func() bool {
			if m := peer.find("listening", func(any) bool { return true }); m != nil {
				port, _ = m["listening"].(float64)
			}
			return port > 0
		})
		a := startFederated(t, ca, "alpha", "", "py="+net.JoinHostPort("127.0.0.1", strconv.Itoa(int(port)))+"/v1")
		local := a.DialTCP(t)
		if _, err := local.WaitFor(func(e *cot.Event) bool { return e.UID == "PYV1-2" }, fedWait); err != nil {
			t.Fatalf("A's client did not get the Python server's position: %v", err)
		}
		if err := local.Send(takclient.SA("OUTV1-2", "OUTPOSTER", 3, 4)); err != nil {
			t.Fatal(err)
		}
		peer.wait(t)
		if peer.find("accepted", is("alpha")) == nil {
			t.Fatalf("the peer did not see A's certificate: %v", peer.lines)
		}
		if st := fedStats(a, "py"); st.EventsIn == 0 || st.EventsOut == 0 {
			t.Fatalf("A's counters of py: %+v", st)
		}
	})
}
