package config

import "testing"

// TestHTTPListen: where the client API over HTTP listens for each value
// of httpAccess.
func TestHTTPListen(t *testing.T) {
	c := Defaults()
	c.Bind, c.HTTPPort, c.PublicHost = "0.0.0.0", 8080, "192.0.2.10"
	for access, want := range map[string]struct {
		host string
		port int
	}{
		HTTPAccessOpen:     {"0.0.0.0", 8080},
		HTTPAccessLoopback: {"127.0.0.1", 8080},
		HTTPAccessOff:      {"0.0.0.0", -1},
	} {
		c.HTTPAccess = access
		if err := c.Validate(); err != nil {
			t.Fatalf("%s: %v", access, err)
		}
		if host, port := c.HTTPListen(); host != want.host || port != want.port {
			t.Errorf("httpAccess %s: %s:%d, want %s:%d", access, host, port, want.host, want.port)
		}
	}
	if Defaults().HTTPAccess != HTTPAccessOpen {
		t.Error("the default is not open (the interface's behaviour)")
	}
}
