package journey

import (
	"bufio"
	"bytes"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"outpost/appliance/cot"
	"outpost/appliance/takclient"
	"outpost/internal/testkit"
)

// The ports a fresh appliance listens on and a device assumes when it is
// told nothing but a host: the appliance runs in a network namespace of its
// own, so they are free whatever else runs on the machine.
const (
	portREST   = "19023"
	portHTTP   = "8080"
	portHTTPS  = "8443"
	portCoT    = "8087"
	portSSLCoT = "8089"
	portEnroll = "8446"
)

// stepWait bounds each step; generous for a loaded CI machine, and the
// figures docs/development.md quotes come from the step log, not from these bounds.
const stepWait = 90 * time.Second

// timings records how long each step of the journey took.
type timings struct {
	t     *testing.T
	start time.Time
	last  time.Time
	rows  []string
}

func newTimings(t *testing.T) *timings {
	now := time.Now()
	return &timings{t: t, start: now, last: now}
}

// done closes a step: the time since the previous one.
func (s *timings) done(name string) {
	now := time.Now()
	s.rows = append(s.rows, fmt.Sprintf("%-44s %6.2f s", name, now.Sub(s.last).Seconds()))
	s.last = now
}

func (s *timings) print() {
	s.t.Logf("the five-minute journey, step by step:\n%s\n%-44s %6.2f s",
		strings.Join(s.rows, "\n"), "total", time.Since(s.start).Seconds())
}

// TestFiveMinuteJourney is README's "Five minutes to a connected team" as a
// test: what a new user does, on the real binary, with a third-party QR
// decoder and a third-party TAK library as the phone.
//
// Two network namespaces on one Ethernet segment stand for the appliance
// and the team's phones. The appliance starts on an empty data directory
// with its default ports and its address as publicHost; the administrator
// creates a user and an invitation through the management API (as the
// console does); the invitation's ATAK QR code (its PNG) is read back with
// Debian's zbarimg; the phone, given only that text, enrolls for a
// certificate and connects on 8089 (scripts/interop/journey-device.mjs with
// @tak-ps/node-tak); a second client on 8087 and the phone see each other's
// positions. The seconds each step took are logged (`make journey` prints
// them).
func TestFiveMinuteJourney(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs the binary")
	}
	testkit.RequireInterop(t, "@tak-ps/node-tak")
	lan := testkit.NetnsLAN(t, 2) // first: its cleanup runs after every process is stopped
	pi, phone := lan[0], lan[1]
	host := pi.Addr.String()
	bin := testkit.Binary(t) // built before the clock starts
	steps := newTimings(t)
	defer steps.print()

	// 1. The appliance's first start.
	p := testkit.StartWith(t, pi.Command(bin), filepath.Join(t.TempDir(), "data"),
		"--bind", "0.0.0.0", "--public-host", host,
		"--rest-port", portREST, "--http-port", portHTTP, "--https-port", portHTTPS,
		"--cot-port", portCoT, "--ssl-cot-port", portSSLCoT, "--enroll-port", portEnroll,
		"--log-level", "info")
	t.Cleanup(func() {
		if t.Failed() {
			t.Logf("the appliance's log:\n%s", p.LogText())
		}
	})
	steps.done("first start (CA, certificates, database)")

	// 2. The administrator, with the token the first start wrote.
	tok, err := os.ReadFile(filepath.Join(p.DataDir, "admin.token"))
	if err != nil {
		t.Fatalf("the first start wrote no admin token: %v", err)
	}
	admin := &mgmtClient{hc: phone.HTTPClient(), base: "http://" + net.JoinHostPort(host, portREST), token: strings.TrimSpace(string(tok))}
	t.Cleanup(admin.hc.CloseIdleConnections)
	var created struct {
		SystemUsers []struct {
			ID       string `json:"id"`
			Username string `json:"username"`
		} `json:"SystemUsers"`
	}
	admin.call(t, "POST", "/ManageSystemUser/postSystemUser", map[string]any{"systemUsers": []map[string]any{
		{"Name": "scout", "Password": "scout's own password 1", "DeviceType": "mobile", "Certs": "false"},
	}}, 201).JSON(t, &created)
	if len(created.SystemUsers) != 1 || created.SystemUsers[0].ID == "" {
		t.Fatalf("user creation answered %+v", created)
	}
	steps.done("create the user")

	var inv struct {
		ID    string `json:"id"`
		Token string `json:"token"`
		ATAK  struct {
			Text string `json:"text"`
			PNG  string `json:"png"`
		} `json:"atak"`
	}
	admin.call(t, "POST", "/api/users/"+url.PathEscape(created.SystemUsers[0].ID)+"/invitations",
		map[string]any{"device": "atak", "uses": 1, "expires": "1h"}, 201).JSON(t, &inv)
	steps.done("create the invitation")

	// 3. The QR code, as a phone's camera sees it: the PNG, decoded by a
	// decoder that is not ours.
	png, err := base64.StdEncoding.DecodeString(inv.ATAK.PNG)
	if err != nil || len(png) == 0 {
		t.Fatalf("the invitation's ATAK QR is not a base64 PNG: %v", err)
	}
	qrText := testkit.DecodeQR(t, png)
	if qrText != inv.ATAK.Text {
		t.Fatalf("the QR code says %q, the invitation %q", qrText, inv.ATAK.Text)
	}
	u, err := url.Parse(qrText)
	if err != nil || u.Scheme != "tak" || u.Host != "com.atakmap.app" || u.Path != "/enroll" {
		t.Fatalf("the QR code is not an ATAK enrollment link: %q (%v)", qrText, err)
	}
	if q := u.Query(); q.Get("host") != host || q.Get("username") != "scout" || q.Get("token") != inv.Token {
		t.Fatalf("the QR code's link names host %q, user %q: want %s and scout with the invitation's token", q.Get("host"), q.Get("username"), host)
	}
	if strings.Contains(qrText, "PRIVATE") || strings.Contains(qrText, "password") {
		t.Fatalf("the QR code carries a key or a password: %q", qrText)
	}
	steps.done("read the QR code (zbarimg)")

	// 4. The phone and a second client. The second client (a TCP client on
	// 8087, on the phones' network) sends its position until it sees the
	// phone's; the phone enrolls, connects and waits for the second
	// client's.
	const phoneUID, peerUID = "JOURNEY-PHONE", "JOURNEY-TCP"
	peer := takclient.New(phone.Dial(t, net.JoinHostPort(host, portCoT)))
	t.Cleanup(func() { peer.Close() })
	stopPeer := make(chan struct{})
	var peerWG sync.WaitGroup
	peerWG.Add(1)
	go func() {
		defer peerWG.Done()
		tick := time.NewTicker(time.Second)
		defer tick.Stop()
		for {
			if err := peer.Send(takclient.SA(peerUID, peerUID, 59.33, 18.07)); err != nil {
				return
			}
			select {
			case <-stopPeer:
				return
			case <-tick.C:
			}
		}
	}()
	sawPhone := make(chan error, 1)
	go func() {
		deadline := time.Now().Add(3 * stepWait)
		for time.Now().Before(deadline) {
			ev, err := peer.Next(time.Until(deadline))
			if err != nil {
				sawPhone <- err
				return
			}
			if ev.UID == phoneUID && ev.Type != cot.TypePing {
				sawPhone <- nil
				return
			}
		}
		sawPhone <- errors.New("deadline")
	}()

	dev := runDevice(t, phone, qrText, phoneUID, peerUID)
	for _, s := range []struct{ node, name string }{
		{"enrolled", "enroll on 8446 with the QR's token (node-tak)"},
		{"connected", "connect on 8089 with the new certificate"},
		{"exchanged", "see the second client's position"},
	} {
		dev.wait(t, s.node)
		steps.done(s.name)
	}
	if err := <-sawPhone; err != nil {
		t.Fatalf("the second client never saw the phone's position: %v", err)
	}
	close(stopPeer)
	peerWG.Wait()
	steps.done("the second client sees the phone")
	if err := dev.exit(); err != nil {
		t.Fatalf("the phone failed: %v\n%s", err, dev.output())
	}

	// The invitation was for one device: its token is spent.
	var list struct {
		Invitations []struct {
			ID       string `json:"id"`
			UsesLeft int    `json:"usesLeft"`
			State    string `json:"state"`
		} `json:"invitations"`
	}
	r := admin.call(t, "GET", "/api/invitations", nil, 200)
	if strings.Contains(string(r.Body), inv.Token) {
		t.Fatalf("the invitation listing shows the token: %s", r.Body)
	}
	r.JSON(t, &list)
	for _, i := range list.Invitations {
		if i.ID == inv.ID {
			if i.UsesLeft != 0 || i.State != "used" {
				t.Fatalf("after the phone enrolled, the invitation has %d uses left, state %q; want 0, used", i.UsesLeft, i.State)
			}
			return
		}
	}
	t.Fatalf("the invitation %s is not listed: %s", inv.ID, r.Body)
}

// mgmtClient calls the management API as the administrator.
type mgmtClient struct {
	hc    *http.Client
	base  string
	token string
}

func (m *mgmtClient) call(t *testing.T, method, route string, body any, want int) testkit.Response {
	t.Helper()
	r := testkit.Do(t, m.hc, method, m.base+route, body, "Authorization", "Bearer "+m.token)
	if r.Status != want {
		t.Fatalf("%s %s: %d %s (want %d)", method, route, r.Status, r.Body, want)
	}
	return r
}

// device is the phone: scripts/interop/journey-device.mjs in the phones'
// namespace, printing one JSON line per step.
type device struct {
	cmd   *exec.Cmd
	mu    sync.Mutex
	lines []map[string]any
	raw   bytes.Buffer
	news  chan map[string]any
	done  chan error
}

func runDevice(t *testing.T, ns *testkit.Netns, qrText, uid, peer string) *device {
	t.Helper()
	argv := ns.Command("node", "journey-device.mjs")
	cmd := exec.Command(argv[0], argv[1:]...)
	cmd.Dir = testkit.InteropDir(t)
	cmd.Env = append(os.Environ(), "TAK_URL="+qrText, "DEVICE_UID="+uid, "PEER_UID="+peer,
		"TIMEOUT_MS="+fmt.Sprint(stepWait.Milliseconds()), "NODE_TLS_REJECT_UNAUTHORIZED=0", "NODE_NO_WARNINGS=1")
	d := &device{cmd: cmd, news: make(chan map[string]any, 16), done: make(chan error, 1)}
	cmd.Stderr = &lockedWriter{d: d}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatalf("starting the phone: %v", err)
	}
	t.Cleanup(func() { _ = cmd.Process.Kill() })
	go func() {
		sc := bufio.NewScanner(stdout)
		for sc.Scan() {
			line := sc.Bytes()
			d.mu.Lock()
			d.raw.Write(line)
			d.raw.WriteByte('\n')
			d.mu.Unlock()
			var m map[string]any
			if json.Unmarshal(line, &m) == nil {
				d.news <- m
			}
		}
		close(d.news)
		d.done <- cmd.Wait()
	}()
	return d
}

// wait reads the phone's steps until name; a failure or an exit before it
// fails the test.
func (d *device) wait(t *testing.T, name string) {
	t.Helper()
	timer := time.NewTimer(stepWait)
	defer timer.Stop()
	for {
		select {
		case m, ok := <-d.news:
			if !ok {
				t.Fatalf("the phone stopped before %q:\n%s", name, d.output())
			}
			if m["step"] == "fail" {
				t.Fatalf("the phone failed before %q: %v\n%s", name, m["message"], d.output())
			}
			if m["step"] == name {
				return
			}
		case <-timer.C:
			t.Fatalf("the phone did not reach %q in %v:\n%s", name, stepWait, d.output())
		}
	}
}

func (d *device) exit() error {
	select {
	case err := <-d.done:
		return err
	case <-time.After(stepWait):
		return errors.New("the phone did not exit")
	}
}

func (d *device) output() string {
	d.mu.Lock()
	defer d.mu.Unlock()
	return d.raw.String()
}

type lockedWriter struct{ d *device }

func (w *lockedWriter) Write(b []byte) (int, error) {
	w.d.mu.Lock()
	defer w.d.mu.Unlock()
	return w.d.raw.Write(b)
}
