//go:build !linux

package testkit

import (
	"context"
	"errors"
	"net"
	"net/http"
	"net/netip"
	"testing"
)

// Netns is a network namespace; they exist on Linux only (netns_linux.go).
type Netns struct {
	Name string
	Addr netip.Addr
}

// NetnsIface is the name of each namespace's interface on the LAN.
const NetnsIface = "mesh0"

var errNoNetns = errors.New("network namespaces need Linux")

// NetnsLAN skips the test: network namespaces need Linux (see
// netns_linux.go), or fails it where tools are required.
func NetnsLAN(t testing.TB, n int) []*Netns {
	t.Helper()
	MissingTool(t, "network namespaces need Linux")
	return nil
}

// Command is argv as it would run inside the namespace (never reached:
// NetnsLAN skipped).
func (ns *Netns) Command(argv ...string) []string {
	return append([]string{"ip", "netns", "exec", ns.Name}, argv...)
}

// Do fails: there are no namespaces here.
func (ns *Netns) Do(fn func() error) error { return errNoNetns }

// DialContext fails: there are no namespaces here.
func (ns *Netns) DialContext(ctx context.Context, network, addr string) (net.Conn, error) {
	return nil, errNoNetns
}

// Dial fails the test: there are no namespaces here.
func (ns *Netns) Dial(t testing.TB, addr string) net.Conn {
	t.Helper()
	t.Fatal(errNoNetns)
	return nil
}

// ListenUDP fails the test: there are no namespaces here.
func (ns *Netns) ListenUDP(t testing.TB, addr string) *net.UDPConn {
	t.Helper()
	t.Fatal(errNoNetns)
	return nil
}

// HTTPClient returns a client whose every connection fails.
func (ns *Netns) HTTPClient() *http.Client {
	return &http.Client{Transport: &http.Transport{DialContext: ns.DialContext}}
}
