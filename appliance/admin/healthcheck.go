package admin

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"strconv"
	"strings"
	"time"

	"outpost/appliance/config"
	"outpost/appliance/netx"
)

// Check is the result of probing one listener.
type Check struct {
	Listener string
	Addr     string
	Err      error // nil: healthy
}

// Healthcheck probes a running appliance from outside, with the same
// configuration it runs with (`outpost healthcheck`): /Alive on the
// management port must answer 200, and every enabled listener must accept
// a TCP connection. A wildcard bind address is probed on loopback.
func Healthcheck(ctx context.Context, cfg config.Config, timeout time.Duration) []Check {
	host := cfg.Bind
	switch host {
	case "0.0.0.0", "":
		host = "127.0.0.1"
	case "::":
		host = "::1"
	}
	var out []Check
	for _, t := range probeTargets(&cfg, host) {
		c := Check{Listener: t.name, Addr: t.addr}
		switch {
		case t.port == 0:
			c.Err = errPortAtStart
		case t.name == netx.ListenerREST:
			_, c.Err = checkAlive(ctx, t.addr, timeout)
		default:
			c.Err = checkDial(ctx, t.addr, timeout)
		}
		out = append(out, c)
	}
	return out
}

var errPortAtStart = errors.New("port 0 is chosen at start; configure a fixed port to check it")

// probeTarget is one enabled listener as a prober reaches it.
type probeTarget struct {
	name     string
	port     int
	addr     string // host:port
	loopback bool   // the HTTP listener on loopback only (httpAccess), probed there
}

// probeTargets lists the enabled listeners at host, the HTTP listener at
// its own host when httpAccess keeps it on loopback. Healthcheck and Doctor
// probe these.
func probeTargets(cfg *config.Config, host string) []probeTarget {
	httpHost, httpPort := cfg.HTTPListen()
	var out []probeTarget
	for _, l := range []struct {
		name string
		port int
	}{
		{netx.ListenerREST, cfg.RESTPort}, {netx.ListenerHTTP, httpPort}, {netx.ListenerHTTPS, cfg.HTTPSPort},
		{netx.ListenerCoTTCP, cfg.CoTPort}, {netx.ListenerCoTTLS, cfg.SSLCoTPort}, {netx.ListenerEnroll, cfg.EnrollPort},
	} {
		if l.port < 0 {
			continue
		}
		t := probeTarget{name: l.name, port: l.port}
		h := host
		if l.name == netx.ListenerHTTP && httpHost != cfg.Bind {
			h, t.loopback = httpHost, true // httpAccess: loopback
		}
		t.addr = net.JoinHostPort(h, strconv.Itoa(l.port))
		out = append(out, t)
	}
	return out
}

func checkDial(ctx context.Context, addr string, timeout time.Duration) error {
	d := net.Dialer{Timeout: timeout}
	conn, err := d.DialContext(ctx, "tcp", addr)
	if err != nil {
		return fmt.Errorf("no connection: %w", err)
	}
	return conn.Close()
}

// checkAlive asks the management API's /Alive (api.md §4.1) and returns
// the server's clock as its Date header says (zero when absent).
func checkAlive(ctx context.Context, addr string, timeout time.Duration) (time.Time, error) {
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, "http://"+addr+"/Alive", nil)
	if err != nil {
		return time.Time{}, err
	}
	client := &http.Client{Transport: &http.Transport{DisableKeepAlives: true, Proxy: nil}}
	resp, err := client.Do(req)
	if err != nil {
		return time.Time{}, fmt.Errorf("/Alive: %w", err)
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(io.LimitReader(resp.Body, 256))
	if resp.StatusCode != http.StatusOK {
		return time.Time{}, fmt.Errorf("/Alive answered %s: %s", resp.Status, strings.TrimSpace(string(body)))
	}
	date, _ := http.ParseTime(resp.Header.Get("Date"))
	return date, nil
}
