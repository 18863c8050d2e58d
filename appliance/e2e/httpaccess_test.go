package e2e

import (
	"net"
	"net/http"
	"testing"

	"outpost/appliance/apptest"
	"outpost/appliance/config"
	"outpost/appliance/netx"
	"outpost/internal/testkit"
)

// TestHTTPAccess: httpAccess limits the client API over HTTP, which asks
// for no credential (access.md "The listeners"): loopback binds it to
// 127.0.0.1 whatever the other listeners bind to, off does not serve it,
// and neither touches 8443.
func TestHTTPAccess(t *testing.T) {
	t.Run("loopback", func(t *testing.T) {
		a := apptest.Start(t, func(c *config.Config) { c.Bind, c.HTTPAccess = "0.0.0.0", config.HTTPAccessLoopback })
		addrs := a.Addrs()
		httpAddr, ok := addrs[netx.ListenerHTTP].(*net.TCPAddr)
		if !ok || !httpAddr.IP.Equal(net.IPv4(127, 0, 0, 1)) {
			t.Fatalf("8080 bound to %v, want 127.0.0.1", addrs[netx.ListenerHTTP])
		}
		if rest, ok := addrs[netx.ListenerREST].(*net.TCPAddr); !ok || !rest.IP.IsUnspecified() {
			t.Fatalf("the management port bound to %v, want the configured 0.0.0.0", addrs[netx.ListenerREST])
		}
		if r := testkit.Do(t, nil, "GET", "http://"+httpAddr.String()+"/Marti/api/version", nil); r.Status != http.StatusOK {
			t.Fatalf("8080 from this machine: %d", r.Status)
		}
	})
	t.Run("off", func(t *testing.T) {
		a := apptest.Start(t, func(c *config.Config) { c.HTTPAccess = config.HTTPAccessOff })
		addrs := a.Addrs()
		if addr, served := addrs[netx.ListenerHTTP]; served {
			t.Fatalf("httpAccess off still serves 8080 on %v", addr)
		}
		if addrs[netx.ListenerHTTPS] == nil {
			t.Fatal("httpAccess off turned 8443 off too")
		}
		cert := a.Issue(t, "alice")
		r := testkit.Do(t, a.HTTPSClient(cert), "GET", a.URL(t, netx.ListenerHTTPS, "/Marti/api/version"), nil)
		if r.Status != http.StatusOK {
			t.Fatalf("8443 with httpAccess off: %d", r.Status)
		}
	})
}
