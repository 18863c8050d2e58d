package e2e

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/coder/websocket"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"

	"outpost/appliance/apptest"
	"outpost/appliance/config"
	"outpost/appliance/cot"
	"outpost/appliance/netx"
	"outpost/appliance/takclient"
	"outpost/internal/testkit"
)

// metricValue finds one sample of a scraped family by its labels.
func metricValue(t *testing.T, body []byte, name string, labels map[string]string) (float64, bool) {
	t.Helper()
	p := expfmt.NewTextParser(model.UTF8Validation)
	fams, err := p.TextToMetricFamilies(strings.NewReader(string(body)))
	if err != nil {
		t.Fatalf("metrics do not parse: %v", err)
	}
	f, ok := fams[name]
	if !ok {
		return 0, false
	}
	for _, m := range f.GetMetric() {
		match := true
		for k, v := range labels {
			found := false
			for _, lp := range m.GetLabel() {
				if lp.GetName() == k && lp.GetValue() == v {
					found = true
				}
			}
			match = match && found
		}
		if !match {
			continue
		}
		switch {
		case m.Counter != nil:
			return m.GetCounter().GetValue(), true
		case m.Gauge != nil:
			return m.GetGauge().GetValue(), true
		case m.Histogram != nil:
			return float64(m.GetHistogram().GetSampleCount()), true
		}
	}
	return 0, false
}

// TestMetricsAfterTraffic scrapes /metrics after real traffic through every
// kind of listener and finds the counters moved.
func TestMetricsAfterTraffic(t *testing.T) {
	a := apptest.Start(t, nil)
	tcp := a.DialTCP(t)
	if err := tcp.Negotiate(5 * time.Second); err != nil {
		t.Fatal(err)
	}
	tlsc := a.DialTLS(t, a.Issue(t, "alice"))
	tcp.Send(takclient.SA("M-TCP", "TCP", 1, 1))
	tlsc.Send(takclient.SA("M-TLS", "TLS", 2, 2))
	if _, err := tlsc.WaitFor(func(e *cot.Event) bool { return e.UID == "M-TCP" }, 5*time.Second); err != nil {
		t.Fatal(err)
	}
	if _, err := tcp.WaitFor(func(e *cot.Event) bool { return e.UID == "M-TLS" }, 5*time.Second); err != nil {
		t.Fatal(err)
	}
	if r := testkit.Do(t, nil, "GET", a.URL(t, netx.ListenerHTTP, "/Marti/api/version"), nil); r.Status != 200 {
		t.Fatal(r.Status)
	}
	testkit.Do(t, nil, "GET", a.URL(t, netx.ListenerHTTP, "/no/such/path"), nil)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	ws, _, err := websocket.Dial(ctx, "wss://"+a.Addr(t, netx.ListenerHTTPS)+"/takproto/1",
		&websocket.DialOptions{HTTPClient: a.HTTPSClient(a.Issue(t, "bob"))})
	if err != nil {
		t.Fatal(err)
	}
	defer ws.CloseNow()
	extra := a.DialTCP(t)
	extra.Send(takclient.SA("M-GONE", "GONE", 3, 3))
	testkit.WaitFor(t, "the extra client", func() bool { return len(a.Broker().Clients()) == 3 })
	extra.Close()
	testkit.WaitFor(t, "its close", func() bool { return len(a.Broker().Clients()) == 2 })

	r := testkit.Do(t, nil, "GET", a.URL(t, netx.ListenerREST, "/metrics"), nil)
	if r.Status != 200 || !strings.HasPrefix(r.Header.Get("Content-Type"), "text/plain") {
		t.Fatalf("/metrics: %d %s", r.Status, r.Header.Get("Content-Type"))
	}
	checks := []struct {
		name    string
		labels  map[string]string
		atLeast float64
	}{
		{"outpost_cot_connections", map[string]string{"listener": "cot-tcp", "format": "protobuf"}, 1},
		{"outpost_cot_connections", map[string]string{"listener": "cot-tls", "format": "xml"}, 1},
		{"outpost_cot_connections", map[string]string{"listener": "cot-ws", "format": "protobuf"}, 1},
		{"outpost_cot_events_in_total", map[string]string{"class": "position"}, 3},
		{"outpost_cot_deliveries_total", map[string]string{"class": "position"}, 2},
		{"outpost_cot_departures_total", nil, 1},
		{"outpost_cot_sessions_closed_total", map[string]string{"reason": "client_closed"}, 1},
		{"outpost_connections_accepted_total", map[string]string{"listener": "cot-tls"}, 1},
		{"outpost_http_requests_total", map[string]string{"listener": "http", "route": "GET /Marti/api/version", "code": "200"}, 1},
		{"outpost_http_requests_total", map[string]string{"listener": "http", "route": "unmatched", "code": "404"}, 1},
		{"outpost_http_request_duration_seconds", map[string]string{"listener": "http", "route": "GET /Marti/api/version"}, 1},
		{"go_goroutines", nil, 1},
		{"process_resident_memory_bytes", nil, 1},
	}
	for _, c := range checks {
		v, ok := metricValue(t, r.Body, c.name, c.labels)
		if !ok || v < c.atLeast {
			t.Errorf("%s%v = %v (present %v), want at least %v", c.name, c.labels, v, ok, c.atLeast)
		}
	}
	// History: the stored events show up once the writer has flushed.
	testkit.WaitFor(t, "history to be written", func() bool {
		r := testkit.Do(t, nil, "GET", a.URL(t, netx.ListenerREST, "/metrics"), nil)
		v, _ := metricValue(t, r.Body, "outpost_history_events_total", map[string]string{"outcome": "stored"})
		return v >= 3
	})
}

// TestMetricsOutsideAllowList: outside AllowedCLIIPs, /metrics needs a
// bearer token.
func TestMetricsOutsideAllowList(t *testing.T) {
	a := apptest.Start(t, func(c *config.Config) { c.AllowedCLIIPs = []string{"10.0.0.0/8"} })
	url := a.URL(t, netx.ListenerREST, "/metrics")
	if r := testkit.Do(t, nil, "GET", url, nil); r.Status != 401 ||
		r.Message() != "endpoint can only be accessed by approved IPs or with a bearer token" {
		t.Fatalf("no token: %d %s", r.Status, r.Body)
	}
	if r := testkit.Do(t, nil, "GET", url, nil, "Authorization", "Bearer not-a-token"); r.Status != 401 {
		t.Fatalf("wrong token: %d %s", r.Status, r.Body)
	}
	token, err := os.ReadFile(filepath.Join(a.Cfg.DataDir, "admin.token"))
	if err != nil {
		t.Fatal(err)
	}
	r := testkit.Do(t, nil, "GET", url, nil, "Authorization", "Bearer "+strings.TrimSpace(string(token)))
	if r.Status != 200 || !strings.Contains(string(r.Body), "outpost_cot_events_in_total") {
		t.Fatalf("with the admin token: %d %.200s", r.Status, r.Body)
	}
}
