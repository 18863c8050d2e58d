package e2e

import (
	"context"
	"encoding/json"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"

	"outpost/appliance"
	"outpost/appliance/apptest"
	"outpost/appliance/config"
	"outpost/appliance/cot"
	"outpost/appliance/mesh"
	"outpost/appliance/netx"
	"outpost/appliance/takclient"
	"outpost/internal/testkit"
)

// TestUDPInput: CoT sent by unicast UDP (udpPort) reaches a TCP client,
// and /Clients lists the sender with listener "udp" and its address
// (docs/mesh.md "What a device is").
func TestUDPInput(t *testing.T) {
	a := apptest.Start(t, func(c *config.Config) { c.UDPPort = 0 })
	to, ok := a.Addrs()[mesh.InputListenerName].(*net.UDPAddr)
	if !ok {
		t.Fatalf("no UDP input bound: %v", a.Addrs())
	}
	tcp := a.DialTCP(t)
	tcp.Send(takclient.SA("TCP-UDP", "TCP", 1, 2))
	dev, err := net.DialUDP("udp4", nil, to)
	if err != nil {
		t.Fatal(err)
	}
	defer dev.Close()
	if _, err := dev.Write(takclient.SA("UDP-DEVICE", "BY UDP", 3, 4).AppendXML(nil)); err != nil {
		t.Fatal(err)
	}
	if _, err := tcp.WaitFor(func(e *cot.Event) bool { return e.UID == "UDP-DEVICE" }, 10*time.Second); err != nil {
		t.Fatalf("the UDP device's SA: %v", err)
	}
	r := testkit.Do(t, nil, "GET", a.URL(t, netx.ListenerREST, "/Clients"), nil)
	if r.Status != http.StatusOK {
		t.Fatalf("/Clients: %d %s", r.Status, r.Body)
	}
	var rows []struct{ UID, Address, Listener string }
	if err := json.Unmarshal(r.Body, &rows); err != nil {
		t.Fatal(err)
	}
	found := false
	for _, row := range rows {
		if row.UID == "UDP-DEVICE" {
			found = row.Listener == mesh.InputListenerName && row.Address == "127.0.0.1"
		}
	}
	if !found {
		t.Fatalf("/Clients does not list the UDP device with listener udp and its address: %s", r.Body)
	}
}

// TestMeshGroupMustExist: a meshGroup that names no group stops the start
// with a message naming the key; the defaults serve no mesh and no UDP.
func TestMeshGroupMustExist(t *testing.T) {
	a := apptest.Start(t, nil)
	for _, l := range []string{mesh.ListenerName, mesh.InputListenerName} {
		if addr, ok := a.Addrs()[l]; ok {
			t.Fatalf("listener %s served by default on %v", l, addr)
		}
	}
	cfg := config.Defaults()
	cfg.DataDir, cfg.Bind, cfg.PublicHost, cfg.KeyType = t.TempDir(), "127.0.0.1", "127.0.0.1", "ecdsa-p256"
	cfg.RESTPort, cfg.HTTPPort, cfg.HTTPSPort, cfg.CoTPort, cfg.SSLCoTPort, cfg.EnrollPort = 0, 0, 0, 0, 0, 0
	cfg.UDPPort, cfg.MeshGroup = 0, "no-such-group"
	cfg.Finish()
	if err := cfg.Validate(); err != nil {
		t.Fatal(err)
	}
	ap := appliance.New(cfg, testkit.Discard())
	err := ap.Open(context.Background())
	if err == nil {
		ap.Close(context.Background())
		t.Fatal("started with a meshGroup that does not exist")
	}
	if !strings.Contains(err.Error(), "meshGroup") || !strings.Contains(err.Error(), "no-such-group") {
		t.Fatalf("error %q does not name the key and the group", err)
	}
}
