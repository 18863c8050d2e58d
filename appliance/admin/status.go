package admin

import (
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"

	"outpost/appliance/config"
)

// Sample is one metric value of a running server, as `outpost status`
// shows it: the metric name without its outpost_ prefix, its labels, its
// value.
type Sample struct {
	Name   string
	Labels map[string]string
	Value  float64
}

// Label returns one label's value ("" when absent).
func (s Sample) Label(k string) string { return s.Labels[k] }

// Status reads the metrics of the server running on cfg's data (GET
// /metrics on its management port, over loopback when it binds every
// address; with the first-run admin token when there is one). It is what
// `outpost status` prints.
func Status(ctx context.Context, cfg config.Config) ([]Sample, error) {
	return StatusOf(ctx, cfg, "", "")
}

// StatusOf is Status asking host (default: the bind address, loopback when
// it binds every address) with the token in tokenFile (default: the first
// run's admin.token); `outpost doctor` asks the public host.
func StatusOf(ctx context.Context, cfg config.Config, host, tokenFile string) ([]Sample, error) {
	if cfg.RESTPort <= 0 {
		return nil, fmt.Errorf("the management listener is disabled or on a random port (restPort %d): no server to ask", cfg.RESTPort)
	}
	if host == "" {
		host = cfg.Bind
		if ip := net.ParseIP(host); ip == nil || ip.IsUnspecified() {
			host = "127.0.0.1"
		}
	}
	if tokenFile == "" {
		tokenFile = filepath.Join(cfg.DataDir, AdminTokenFile)
	}
	url := "http://" + net.JoinHostPort(host, strconv.Itoa(cfg.RESTPort)) + "/metrics"
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return nil, err
	}
	if tok, err := readInput(tokenFile); err == nil {
		req.Header.Set("Authorization", "Bearer "+strings.TrimSpace(string(tok)))
	}
	client := &http.Client{Timeout: 10 * time.Second}
	resp, err := client.Do(req)
	if err != nil {
		return nil, fmt.Errorf("no server answers at %s: %w", url, err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		b, _ := io.ReadAll(io.LimitReader(resp.Body, 1024))
		return nil, fmt.Errorf("%s answered %s: %s", url, resp.Status, strings.TrimSpace(string(b)))
	}
	p := expfmt.NewTextParser(model.UTF8Validation)
	fams, err := p.TextToMetricFamilies(io.LimitReader(resp.Body, 16<<20))
	if err != nil {
		return nil, fmt.Errorf("reading the metrics of %s: %w", url, err)
	}
	var out []Sample
	for name, f := range fams {
		short, ok := strings.CutPrefix(name, "outpost_")
		if !ok {
			if name != "process_resident_memory_bytes" && name != "process_start_time_seconds" && name != "go_goroutines" {
				continue
			}
			short = name
		}
		for _, m := range f.GetMetric() {
			s := Sample{Name: short, Labels: map[string]string{}}
			for _, lp := range m.GetLabel() {
				s.Labels[lp.GetName()] = lp.GetValue()
			}
			switch {
			case m.Counter != nil:
				s.Value = m.GetCounter().GetValue()
			case m.Gauge != nil:
				s.Value = m.GetGauge().GetValue()
			case m.Histogram != nil:
				s.Value = float64(m.GetHistogram().GetSampleCount())
			default:
				continue
			}
			out = append(out, s)
		}
	}
	sort.Slice(out, func(i, j int) bool {
		if out[i].Name != out[j].Name {
			return out[i].Name < out[j].Name
		}
		return fmt.Sprint(out[i].Labels) < fmt.Sprint(out[j].Labels)
	})
	return out, nil
}
