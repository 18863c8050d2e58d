package appliance

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
)

// healthStoreTimeout bounds the store ping of Healthy.
const healthStoreTimeout = time.Second

// Healthy is the cheap liveness check behind the systemd watchdog: the
// broker is running and the store answers a read within a second.
func (a *Appliance) Healthy(ctx context.Context) error {
	if !a.opened.Load() {
		return errors.New("not started")
	}
	if a.broker == nil || a.broker.Closed() {
		return errors.New("broker is closed")
	}
	ctx, cancel := context.WithTimeout(ctx, healthStoreTimeout)
	defer cancel()
	if err := a.store.Ping(ctx); err != nil {
		return fmt.Errorf("store does not answer: %w", err)
	}
	return nil
}

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
	httpHost, httpPort := cfg.HTTPListen()
	var out []Check
	for _, l := range []struct {
		name string
		port int
	}{
		{ListenerREST, cfg.RESTPort}, {ListenerHTTP, httpPort}, {ListenerHTTPS, cfg.HTTPSPort},
		{ListenerCoTTCP, cfg.CoTPort}, {ListenerCoTTLS, cfg.SSLCoTPort}, {ListenerEnroll, cfg.EnrollPort},
	} {
		if l.port < 0 {
			continue
		}
		h := host
		if l.name == ListenerHTTP && httpHost != cfg.Bind {
			h = httpHost // httpAccess: loopback
		}
		addr := net.JoinHostPort(h, strconv.Itoa(l.port))
		c := Check{Listener: l.name, Addr: addr}
		switch {
		case l.port == 0:
			c.Err = errors.New("port 0 is chosen at start; configure a fixed port to check it")
		case l.name == ListenerREST:
			c.Err = checkAlive(ctx, addr, timeout)
		default:
			c.Err = checkDial(ctx, addr, timeout)
		}
		out = append(out, c)
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

// checkAlive asks the management API's /Alive (api.md §4.1).
func checkAlive(ctx context.Context, addr string, timeout time.Duration) error {
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, "http://"+addr+"/Alive", nil)
	if err != nil {
		return err
	}
	client := &http.Client{Transport: &http.Transport{DisableKeepAlives: true, Proxy: nil}}
	resp, err := client.Do(req)
	if err != nil {
		return fmt.Errorf("/Alive: %w", err)
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(io.LimitReader(resp.Body, 256))
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("/Alive answered %s: %s", resp.Status, strings.TrimSpace(string(body)))
	}
	return nil
}
