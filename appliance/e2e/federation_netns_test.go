//go:build linux

package e2e

import (
	"bytes"
	"crypto/sha256"
	"crypto/tls"
	"encoding/hex"
	"fmt"
	"math"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"outpost/appliance/admin"
	"outpost/appliance/cot"
	"outpost/appliance/netx"
	"outpost/appliance/takclient"
	"outpost/internal/testkit"
)

// The three-server federation test (issue 27 "How it is tested"): three
// outpost binaries, each in a network namespace of its own on one LAN
// (testkit.NetnsLAN), A connecting out to B and B to C. A TCP client on
// A, a TLS client on C with a certificate issued by C, a TCP client on B
// (the bystander). The A–B link is cut for fedCut by taking A's
// interface down, while A's client keeps sending.

// fedCut is how long A's link to B is down.
const fedCut = 30 * time.Second

// fedRecover bounds the wait for what A's client sent during the cut to
// reach C's client once the link is back: TCP's retransmission back-off
// after a 30 s silence, or the federation client's reconnect back-off
// (docs/federation.md "The calls"), plus the queue's replay.
const fedRecover = 120 * time.Second

// fedNode is one outpost binary in its namespace with federation v2 on
// 9001 and the CoT listeners on 8087 and 8089, on every address.
type fedNode struct {
	name  string // its federation name
	ns    *testkit.Netns
	p     *testkit.Proc
	token string       // the admin token of its first run
	hc    *http.Client // connections made inside its namespace
	mgmt  string       // http://127.0.0.1:port, reached inside the namespace
}

// startFedNode runs outpost in ns with the federation certificate ca
// issues to name and the federates given (name=host:port). The
// certificate's files have no flag: they go by environment variables.
func startFedNode(t *testing.T, ns *testkit.Netns, ca *fedCA, name string, federates ...string) *fedNode {
	t.Helper()
	certFile, keyFile, _ := ca.issue(t, name)
	cmd := ns.Command("env", "OUTPOST_FEDERATION_CERT="+certFile, "OUTPOST_FEDERATION_KEY="+keyFile,
		"OUTPOST_FEDERATION_NAME="+name, testkit.Binary(t))
	args := []string{"--bind", "0.0.0.0", "--cot-port", "8087", "--ssl-cot-port", "8089",
		"--federation-port", "9001", "--federation-trust", ca.trust(),
		"--key-type", "ecdsa-p256", "--log-level", "info",
		"--cot-idle-timeout", "10m"} // the test's clients stay quiet for longer than the default
	if len(federates) > 0 {
		args = append(args, "--federates", strings.Join(federates, ","))
	}
	p := testkit.StartWith(t, cmd, filepath.Join(t.TempDir(), "data"), args...)
	tok, err := os.ReadFile(filepath.Join(p.DataDir, admin.AdminTokenFile))
	if err != nil {
		t.Fatalf("%s: first run wrote no admin token: %v", name, err)
	}
	_, port, err := net.SplitHostPort(p.Addr(t, netx.ListenerREST))
	if err != nil {
		t.Fatal(err)
	}
	hc := ns.HTTPClient()
	t.Cleanup(hc.CloseIdleConnections)
	return &fedNode{name: name, ns: ns, p: p, token: strings.TrimSpace(string(tok)), hc: hc,
		mgmt: "http://127.0.0.1:" + port}
}

// fedAddr is the address other namespaces reach n's federation listener at.
func (n *fedNode) fedAddr() string { return net.JoinHostPort(n.ns.Addr.String(), "9001") }

// api calls n's management API with the admin token and wants status.
func (n *fedNode) api(t *testing.T, method, route string, body any, status int) testkit.Response {
	t.Helper()
	r := testkit.Do(t, n.hc, method, n.mgmt+route, body, "Authorization", "Bearer "+n.token)
	if r.Status != status {
		t.Fatalf("%s: %s %s: %d %s, want %d", n.name, method, route, r.Status, r.Body, status)
	}
	return r
}

// fedState is one federate of n's GET /api/federation.
type fedState struct {
	Name             string `json:"name"`
	Connected        bool   `json:"connected"`
	Links            int    `json:"links"`
	EventsIn         uint64 `json:"eventsIn"`
	EventsOut        uint64 `json:"eventsOut"`
	DroppedLoop      uint64 `json:"droppedLoop"`
	DroppedDuplicate uint64 `json:"droppedDuplicate"`
	DroppedQueue     uint64 `json:"droppedQueue"`
	Reconnects       uint64 `json:"reconnects"`
	Queued           uint64 `json:"queued"`
	QueueSent        uint64 `json:"queueSent"`
	DroppedQueued    uint64 `json:"droppedQueued"`
}

// federates returns n's federates by name.
func (n *fedNode) federates(t *testing.T) map[string]fedState {
	t.Helper()
	var doc struct {
		Federates []fedState `json:"federates"`
	}
	n.api(t, "GET", "/api/federation", nil, 200).JSON(t, &doc)
	out := map[string]fedState{}
	for _, f := range doc.Federates {
		out[f.Name] = f
	}
	return out
}

// waitLinked waits until n's federate peer is connected.
func (n *fedNode) waitLinked(t *testing.T, peer string) {
	t.Helper()
	testkit.WaitForWithin(t, fedWait, n.name+"'s link to "+peer, func() bool { return n.federates(t)[peer].Connected })
}

// tcpClient connects a TCP CoT client to n from inside its namespace.
func (n *fedNode) tcpClient(t *testing.T, who string) *clientRecord {
	t.Helper()
	return recordClient(t, who, takclient.New(n.ns.Dial(t, "127.0.0.1:8087")))
}

// tlsClient makes a user with a certificate on n (postSystemUser, then
// the user's connection package, as ATAK enrols by package) and connects
// it over mutual TLS to 8089 from inside n's namespace.
func (n *fedNode) tlsClient(t *testing.T, user string) *clientRecord {
	t.Helper()
	var created struct {
		SystemUsers []struct {
			ID string `json:"id"`
		} `json:"SystemUsers"`
	}
	n.api(t, "POST", "/ManageSystemUser/postSystemUser", map[string]any{"systemUsers": []map[string]any{
		{"Name": user, "Password": user + " has a password", "DeviceType": "mobile", "Certs": "true"}}}, 201).JSON(t, &created)
	if len(created.SystemUsers) != 1 || created.SystemUsers[0].ID == "" {
		t.Fatalf("%s: user %s not created: %+v", n.name, user, created)
	}
	pkg := n.api(t, "GET", "/ManageSystemUser/certificatePackage?id="+created.SystemUsers[0].ID, nil, 200)
	tc := tls.Client(n.ns.Dial(t, "127.0.0.1:8089"), certFromPackage(t, user, pkg.Body))
	if err := tc.Handshake(); err != nil {
		t.Fatalf("%s's TLS handshake with %s: %v", user, n.name, err)
	}
	return recordClient(t, user, takclient.New(tc))
}

// fedTrio is the running network of the test.
type fedTrio struct {
	a, b, c          *fedNode
	onA, onB, onC    *clientRecord
	uidA, uidC       string // the clients' position uids
	callA, callC     string // their callsigns
	lanA, lanB, lanC *testkit.Netns
	ca               *fedCA
}

// TestFederationThreeServersCut: positions and chat cross A–B–C both ways;
// A's link to B is cut for 30 s while A's client keeps sending, and after
// it comes back every position A accepted reaches C's client once, in
// order per uid; then C connects to A (a loop A–B–C–A) and each event
// still arrives once.
func TestFederationThreeServersCut(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs the binary; a 30 s cut")
	}
	lan := testkit.NetnsLAN(t, 3) // first: its cleanup runs after every process is stopped
	ca := newFedCA(t, "Federation CA")
	tr := &fedTrio{lanA: lan[0], lanB: lan[1], lanC: lan[2], uidA: "TRIO-A", uidC: "TRIO-C", callA: "ALPHA", callC: "CHARLIE", ca: ca}
	tr.c = startFedNode(t, tr.lanC, ca, "charlie")
	tr.b = startFedNode(t, tr.lanB, ca, "bravo", "C="+tr.c.fedAddr())
	tr.a = startFedNode(t, tr.lanA, ca, "alpha", "B="+tr.b.fedAddr())
	t.Cleanup(func() { // before the processes are stopped
		if t.Failed() {
			for _, n := range []*fedNode{tr.a, tr.b, tr.c} {
				t.Logf("%s's log:\n%s", n.name, n.p.LogText())
			}
		}
	})
	tr.a.waitLinked(t, "B")
	tr.b.waitLinked(t, "C")
	tr.onA = tr.a.tcpClient(t, "A's TCP client")
	tr.onB = tr.b.tcpClient(t, "B's TCP client")
	tr.onC = tr.c.tlsClient(t, "charlie-user")

	fedTrioTraffic(t, tr)
	fedTrioMission(t, tr)
	fedTrioCut(t, tr)
	fedTrioLoop(t, tr)
}

// fedTrioTraffic: positions both ways, broadcast chat both ways, chat
// addressed by callsign both ways (reaching that client alone).
func fedTrioTraffic(t *testing.T, tr *fedTrio) {
	sendRec(t, tr.onA, takclient.SA(tr.uidA, tr.callA, 1, 1))
	sendRec(t, tr.onC, takclient.SA(tr.uidC, tr.callC, 3, 3))
	tr.onC.wait(t, "A's position at C's client", 1, uidIs(tr.uidA))
	tr.onA.wait(t, "C's position at A's client", 1, uidIs(tr.uidC))
	tr.onB.wait(t, "A's and C's positions at B's client", 2, func(e *cot.Event) bool { return e.UID == tr.uidA || e.UID == tr.uidC })

	sendRec(t, tr.onA, takclient.Chat("GeoChat."+tr.uidA+".All Chat Rooms.1", "all rooms from alpha"))
	sendRec(t, tr.onC, takclient.Chat("GeoChat."+tr.uidC+".All Chat Rooms.1", "all rooms from charlie"))
	tr.onC.wait(t, "A's broadcast chat at C's client", 1, chatFrom(tr.uidA, "all rooms from alpha"))
	tr.onA.wait(t, "C's broadcast chat at A's client", 1, chatFrom(tr.uidC, "all rooms from charlie"))
	tr.onB.wait(t, "both broadcast chats at B's client", 1, chatFrom(tr.uidA, "all rooms from alpha"))
	tr.onB.wait(t, "both broadcast chats at B's client", 1, chatFrom(tr.uidC, "all rooms from charlie"))

	sendRec(t, tr.onA, takclient.Chat("GeoChat."+tr.uidA+"."+tr.callC+".1", "only for charlie", cot.Dest{Callsign: tr.callC}))
	sendRec(t, tr.onC, takclient.Chat("GeoChat."+tr.uidC+"."+tr.callA+".1", "only for alpha", cot.Dest{Callsign: tr.callA}))
	tr.onC.wait(t, "A's chat to CHARLIE at C's client", 1, chatFrom(tr.uidA, "only for charlie"))
	tr.onA.wait(t, "C's chat to ALPHA at A's client", 1, chatFrom(tr.uidC, "only for alpha"))
	time.Sleep(fedQuiet) // a copy, or a stray to B, would show by now
	for _, x := range []struct {
		r    *clientRecord
		text string
		want int
	}{{tr.onC, "only for charlie", 1}, {tr.onA, "only for alpha", 1}, {tr.onB, "only for", 0},
		{tr.onC, "all rooms from alpha", 1}, {tr.onA, "all rooms from charlie", 1}} {
		if n := x.r.count(func(e *cot.Event) bool { return e.Type == "b-t-f" && strings.Contains(string(e.Detail.XML), x.text) }); n != x.want {
			t.Errorf("%s got %d chats with %q, want %d", x.r.name, n, x.text, x.want)
		}
	}
	if t.Failed() {
		t.FailNow()
	}
}

// fedTrioMission: a mission made on A with a data package uploaded to A
// crosses B to C (over ROL, docs/federation.md "Missions over ROL"): C
// lists it with the file, serves the file's bytes by hash, and C's client
// hears of the mission; B, in the middle, stored the file once and C once.
func fedTrioMission(t *testing.T, tr *fedTrio) {
	t.Helper()
	data := bytes.Repeat([]byte("a mission package across three servers "), 4096)
	sum := sha256.Sum256(data)
	hash := hex.EncodeToString(sum[:])
	if r := tr.a.marti(t, "POST", "/Marti/sync/upload?name=trio.zip&creatorUid="+tr.uidA, data, "Content-Type", "application/zip"); r.Status != 200 {
		t.Fatalf("upload on A: %d %s", r.Status, r.Body)
	}
	if r := tr.a.marti(t, "PUT", "/Marti/api/missions/trio-ops?creatorUid="+tr.uidA+"&description=three", nil); r.Status != 201 {
		t.Fatalf("mission on A: %d %s", r.Status, r.Body)
	}
	if r := tr.a.marti(t, "PUT", "/Marti/api/missions/trio-ops/contents?creatorUid="+tr.uidA, map[string]any{"hashes": []string{hash}}); r.Status != 200 {
		t.Fatalf("mission contents on A: %d %s", r.Status, r.Body)
	}
	for _, n := range []*fedNode{tr.b, tr.c} {
		testkit.WaitForWithin(t, fedWait, "the mission with its file on "+n.name, func() bool {
			r := n.marti(t, "GET", "/Marti/api/missions/trio-ops", nil)
			return r.Status == 200 && strings.Contains(string(r.Body), hash)
		})
		if r := n.marti(t, "GET", "/Marti/sync/content?hash="+hash, nil); r.Status != 200 || !bytes.Equal(r.Body, data) {
			t.Fatalf("the file on %s: %d, %d bytes (want %d)", n.name, r.Status, len(r.Body), len(data))
		}
	}
	tr.onC.wait(t, "C's client told of the mission", 1, func(e *cot.Event) bool {
		return e.Type == "t-x-m-n" && bytes.Contains(e.Detail.XML, []byte(`name="trio-ops"`))
	})
	for _, n := range []*fedNode{tr.b, tr.c} {
		var doc struct {
			Federates []struct {
				FilesStored uint64 `json:"filesStored"`
				ROLFailed   uint64 `json:"rolFailed"`
			} `json:"federates"`
		}
		n.api(t, "GET", "/api/federation", nil, 200).JSON(t, &doc)
		var stored, failed uint64
		for _, f := range doc.Federates {
			stored += f.FilesStored
			failed += f.ROLFailed
		}
		if stored != 1 || failed != 0 {
			t.Fatalf("%s stored the file %d times (%d ROL failed), want once", n.name, stored, failed)
		}
	}
}

// marti calls n's client API (8080) from inside its namespace.
func (n *fedNode) marti(t *testing.T, method, route string, body any, headers ...string) testkit.Response {
	t.Helper()
	_, port, err := net.SplitHostPort(n.p.Addr(t, netx.ListenerHTTP))
	if err != nil {
		t.Fatal(err)
	}
	return testkit.Do(t, n.hc, method, "http://127.0.0.1:"+port+route, body, headers...)
}

// fedTrioCut: A's client sends positions of three uids, 20 a second; 2 s
// in, A's interface to the LAN goes down for fedCut, then up again, and
// A's client goes on for 3 s more. Every position A's listener accepted
// reaches C's client exactly once, in the order sent per uid.
func fedTrioCut(t *testing.T, tr *fedTrio) {
	const uids = 3
	isCut := func(e *cot.Event) bool { return strings.HasPrefix(e.UID, "CUT-") }
	var sent atomic.Int64
	stop := make(chan struct{})
	done := make(chan error, 1)
	go func() {
		tick := time.NewTicker(50 * time.Millisecond)
		defer tick.Stop()
		for i := 0; ; i++ {
			select {
			case <-stop:
				done <- nil
				return
			case <-tick.C:
			}
			if err := tr.onA.c.Send(takclient.SA("CUT-"+strconv.Itoa(i%uids), "CUT", float64(i)/100, 2)); err != nil {
				done <- fmt.Errorf("position %d: %w", i, err)
				return
			}
			sent.Store(int64(i + 1))
		}
	}()
	before := tr.a.federates(t)["B"]
	time.Sleep(2 * time.Second)
	ipLink(t, tr.lanA, "down")
	cutAt, cutFrom := time.Now(), sent.Load()
	time.Sleep(fedCut)
	ipLink(t, tr.lanA, "up")
	t.Logf("A's interface down for %v, %d positions sent so far", time.Since(cutAt).Round(time.Millisecond), sent.Load())
	time.Sleep(3 * time.Second)
	close(stop)
	if err := <-done; err != nil {
		t.Fatalf("A's client stopped sending: %v", err)
	}
	n := int(sent.Load())
	deadline := time.Now().Add(fedRecover)
	for tr.onC.count(isCut) < n && time.Now().Before(deadline) {
		time.Sleep(100 * time.Millisecond)
	}
	time.Sleep(fedQuiet)

	got := map[int]int{}     // sequence number → times received
	last := map[string]int{} // uid → last sequence number received
	tr.onC.mu.Lock()
	for _, ev := range tr.onC.evs {
		if !isCut(ev) {
			continue
		}
		q := int(math.Round(ev.Point.Lat * 100))
		got[q]++
		if p, ok := last[ev.UID]; ok && q <= p {
			t.Errorf("%s: position %d after %d at C's client", ev.UID, q, p)
		}
		last[ev.UID] = q
	}
	tr.onC.mu.Unlock()
	var missing []int
	twice := 0
	for i := range n {
		switch {
		case got[i] == 0:
			missing = append(missing, i)
		case got[i] > 1:
			twice++
		}
	}
	after := tr.a.federates(t)["B"]
	t.Logf("A's client sent %d positions; C's client got %d distinct; A's counters of B across the cut: "+
		"reconnects %d→%d, queued %d→%d, sent from the queue %d→%d, dropped (queue full) %d→%d, (queued, expired) %d→%d",
		n, len(got), before.Reconnects, after.Reconnects, before.Queued, after.Queued,
		before.QueueSent, after.QueueSent, before.DroppedQueue, after.DroppedQueue, before.DroppedQueued, after.DroppedQueued)
	if len(missing) > 0 || twice > 0 || len(got) != n {
		t.Fatalf("of %d positions (A's interface down from about position %d), %d missing %v, %d received more than once, %d distinct",
			n, cutFrom, len(missing), missing, twice, len(got))
	}
	if b := tr.onB.count(isCut); b < n {
		t.Fatalf("B's client got %d of the %d positions", b, n)
	}
}

// ipLink sets ns's LAN interface down or up.
func ipLink(t *testing.T, ns *testkit.Netns, state string) {
	t.Helper()
	if out, err := exec.Command("ip", "-n", ns.Name, "link", "set", testkit.NetnsIface, state).CombinedOutput(); err != nil {
		t.Fatalf("ip link set %s %s in %s: %v: %s", testkit.NetnsIface, state, ns.Name, err, out)
	}
}

// fedTrioLoop: C adds A as a managed federate (management API), closing
// the loop A–B–C–A. A position and a chat from A's client, and a position
// from C's client, reach each other client once; nothing comes back to
// its sender; the servers drop the copies that come round.
func fedTrioLoop(t *testing.T, tr *fedTrio) {
	tr.c.api(t, "POST", "/api/federation/federates",
		map[string]any{"name": "A", "address": tr.a.fedAddr(), "ca": tr.ca.pem()}, 201)
	tr.c.waitLinked(t, "A")
	sendRec(t, tr.onA, takclient.SA("LOOP-A", "LOOPA", 60, 1))
	sendRec(t, tr.onA, takclient.Chat("GeoChat.LOOP-A.All Chat Rooms.1", "round the loop"))
	sendRec(t, tr.onC, takclient.SA("LOOP-C", "LOOPC", 61, 3))
	loopA, loopC := uidIs("LOOP-A"), uidIs("LOOP-C")
	chat := chatFrom("LOOP-A", "round the loop")
	tr.onB.wait(t, "A's loop position at B's client", 1, loopA)
	tr.onC.wait(t, "A's loop position at C's client", 1, loopA)
	tr.onC.wait(t, "A's loop chat at C's client", 1, chat)
	tr.onB.wait(t, "A's loop chat at B's client", 1, chat)
	tr.onA.wait(t, "C's loop position at A's client", 1, loopC)
	tr.onB.wait(t, "C's loop position at B's client", 1, loopC)
	time.Sleep(fedQuiet)
	for _, x := range []struct {
		r     *clientRecord
		what  string
		match func(*cot.Event) bool
		want  int
	}{{tr.onB, "A's position", loopA, 1}, {tr.onC, "A's position", loopA, 1}, {tr.onA, "its own position", loopA, 0},
		{tr.onB, "A's chat", chat, 1}, {tr.onC, "A's chat", chat, 1}, {tr.onA, "its own chat", chat, 0},
		{tr.onA, "C's position", loopC, 1}, {tr.onB, "C's position", loopC, 1}, {tr.onC, "its own position", loopC, 0}} {
		if n := x.r.count(x.match); n != x.want {
			t.Errorf("in the loop %s got %s %d times, want %d", x.r.name, x.what, n, x.want)
		}
	}
	var dropped uint64
	for _, n := range []*fedNode{tr.a, tr.b, tr.c} {
		for _, f := range n.federates(t) {
			dropped += f.DroppedLoop + f.DroppedDuplicate
		}
	}
	if dropped == 0 {
		t.Error("no copy was dropped in the loop of three")
	}
}

// sendRec sends ev from r's client or fails the test.
func sendRec(t *testing.T, r *clientRecord, ev *cot.Event) {
	t.Helper()
	if err := r.c.Send(ev); err != nil {
		t.Fatalf("%s: send %s: %v", r.name, ev.UID, err)
	}
}
