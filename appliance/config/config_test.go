package config

import (
	"flag"
	"net/netip"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

func envMap(m map[string]string) func(string) (string, bool) {
	return func(k string) (string, bool) { v, ok := m[k]; return v, ok }
}

func load(t *testing.T, args []string, env map[string]string) (Config, error) {
	t.Helper()
	fs := flag.NewFlagSet("run", flag.ContinueOnError)
	fs.SetOutput(new(strings.Builder))
	f := Register(fs)
	if err := fs.Parse(args); err != nil {
		return Config{}, err
	}
	return f.Load(envMap(env))
}

func writeFile(t *testing.T, body string) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), "outpost.yaml")
	if err := os.WriteFile(p, []byte(body), 0o600); err != nil {
		t.Fatal(err)
	}
	return p
}

func TestDefaults(t *testing.T) {
	c, err := load(t, nil, nil)
	if err != nil {
		t.Fatalf("defaults do not validate: %v", err)
	}
	want := map[string]int{"rest": 19023, "http": 8080, "https": 8443, "cot": 8087, "ssl": 8089, "enroll": 8446}
	got := map[string]int{"rest": c.RESTPort, "http": c.HTTPPort, "https": c.HTTPSPort, "cot": c.CoTPort, "ssl": c.SSLCoTPort, "enroll": c.EnrollPort}
	for k, v := range want {
		if got[k] != v {
			t.Errorf("%s port = %d, want %d", k, got[k], v)
		}
	}
	if c.DataDir != "./outpost-data" || c.Bind != "0.0.0.0" {
		t.Errorf("dataDir=%q bind=%q", c.DataDir, c.Bind)
	}
	if c.CertsPath != filepath.Join("./outpost-data", "certs") {
		t.Errorf("certsPath = %q", c.CertsPath)
	}
	if c.PublicHost == "" || c.PublicHost == "0.0.0.0" {
		t.Errorf("publicHost = %q", c.PublicHost)
	}
	if c.SSLHandshakeTimeout != time.Second || c.SSLSockTimeout != 60*time.Second {
		t.Errorf("TLS timeouts %v %v, want api.md §8 values", c.SSLHandshakeTimeout, c.SSLSockTimeout)
	}
	if c.HistoryRetention != 7*24*time.Hour {
		t.Errorf("retention = %v", c.HistoryRetention)
	}
	if c.SecretKey != "" || c.WebsocketKey != "" || c.Password != "" {
		t.Error("defaults must not carry fixed secrets")
	}
	if c.MissionLogEntryMaxBytes != 64<<10 || c.MissionLogMaxEntries != 10000 || c.MissionLogMaxBytes != 16<<20 ||
		c.MissionLogEntriesPerMinute != 60 || c.MissionLogBytesPerMinute != 1<<20 || c.MissionMaxContents != 10000 ||
		c.MissionMaxChanges != 10000 || c.MissionMaxChangeBytes != 32<<20 {
		t.Errorf("mission budgets: %d %d %d %d %d %d %d %d", c.MissionLogEntryMaxBytes, c.MissionLogMaxEntries, c.MissionLogMaxBytes,
			c.MissionLogEntriesPerMinute, c.MissionLogBytesPerMinute, c.MissionMaxContents, c.MissionMaxChanges, c.MissionMaxChangeBytes)
	}
	if c.MaxUploadBytes != 2<<30 || c.AuditRetention != 90*24*time.Hour || c.LoginTokenLifetime != 12*time.Hour {
		t.Errorf("management defaults: maxUploadBytes %d auditRetention %v loginTokenLifetime %v",
			c.MaxUploadBytes, c.AuditRetention, c.LoginTokenLifetime)
	}
	if c.ChannelAuthTimeout != 10*time.Second || c.ChannelUnauthenticatedPerSource != 4 {
		t.Errorf("channel defaults: channelAuthTimeout %v channelUnauthenticatedPerSource %d", c.ChannelAuthTimeout, c.ChannelUnauthenticatedPerSource)
	}
}

func TestManagementKeys(t *testing.T) {
	file := writeFile(t, "maxUploadBytes: 5GiB\nauditRetention: 0\n")
	c, err := load(t, []string{"--config", file, "--login-token-lifetime", "30m"}, map[string]string{"OUTPOST_MAX_UPLOAD_BYTES": "64KiB"})
	if err != nil {
		t.Fatal(err)
	}
	if c.MaxUploadBytes != 64<<10 || c.AuditRetention != 0 || c.LoginTokenLifetime != 30*time.Minute {
		t.Fatalf("maxUploadBytes %d auditRetention %v loginTokenLifetime %v", c.MaxUploadBytes, c.AuditRetention, c.LoginTokenLifetime)
	}
	c, err = load(t, []string{"--config", file}, nil)
	if err != nil || c.MaxUploadBytes != 5<<30 {
		t.Fatalf("5GiB: %d %v", c.MaxUploadBytes, err)
	}
}

func TestGeoKeys(t *testing.T) {
	c, err := load(t, nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	if c.GeocoderURL != "" || c.RepeatInterval != 60*time.Second || c.EmergencyRepeatInterval != 3*time.Second {
		t.Fatalf("defaults: geocoderURL %q repeatInterval %v emergencyRepeatInterval %v", c.GeocoderURL, c.RepeatInterval, c.EmergencyRepeatInterval)
	}
	file := writeFile(t, "geocoderURL: http://10.0.0.5:8080/nominatim\nrepeatInterval: 90s\n")
	c, err = load(t, []string{"--config", file, "--emergency-repeat-interval", "5"}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if c.GeocoderURL != "http://10.0.0.5:8080/nominatim" || c.RepeatInterval != 90*time.Second || c.EmergencyRepeatInterval != 5*time.Second {
		t.Fatalf("geocoderURL %q repeatInterval %v emergencyRepeatInterval %v", c.GeocoderURL, c.RepeatInterval, c.EmergencyRepeatInterval)
	}
}

func TestPrecedence(t *testing.T) {
	file := writeFile(t, "cotPort: 9001\nrestPort: 9002\nhttpPort: 9003\nlogFormat: json\n")
	env := map[string]string{"OUTPOST_COT_PORT": "9101", "OUTPOST_REST_PORT": "9102"}
	c, err := load(t, []string{"--config", file, "--cot-port", "9201"}, env)
	if err != nil {
		t.Fatal(err)
	}
	if c.CoTPort != 9201 {
		t.Errorf("flag must win: cotPort = %d", c.CoTPort)
	}
	if c.RESTPort != 9102 {
		t.Errorf("env must win over file: restPort = %d", c.RESTPort)
	}
	if c.HTTPPort != 9003 || c.LogFormat != "json" {
		t.Errorf("file must win over defaults: httpPort=%d logFormat=%q", c.HTTPPort, c.LogFormat)
	}
	// OUTPOST_CONFIG names the file when --config is absent.
	c, err = load(t, nil, map[string]string{"OUTPOST_CONFIG": file})
	if err != nil || c.CoTPort != 9001 {
		t.Fatalf("OUTPOST_CONFIG: port %d err %v", c.CoTPort, err)
	}
}

func TestFileValues(t *testing.T) {
	file := writeFile(t, `
dataDir: /srv/outpost
publicHost: tak.example.org
WRAP_SSL_TIMEOUT: 1.5
historyRetention: 3d
queueHardBytes: 32MiB
AllowedCLIIPs:
  - 10.0.0.0/24
  - 192.168.1.7
CRLFile: /etc/outpost/crl.json
websocketkey: 'k3y-from-file-0123'
`)
	c, err := load(t, []string{"--config", file}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if c.SSLHandshakeTimeout != 1500*time.Millisecond {
		t.Errorf("WRAP_SSL_TIMEOUT = %v", c.SSLHandshakeTimeout)
	}
	if c.HistoryRetention != 72*time.Hour || c.QueueHardBytes != 32<<20 {
		t.Errorf("retention %v hard %d", c.HistoryRetention, c.QueueHardBytes)
	}
	if len(c.AllowedCLIIPs) != 2 || c.CRLFile != "/etc/outpost/crl.json" || c.WebsocketKey != "k3y-from-file-0123" {
		t.Errorf("lists/strings not applied: %+v %q %q", c.AllowedCLIIPs, c.CRLFile, c.WebsocketKey)
	}
	if c.CertsPath != filepath.Join("/srv/outpost", "certs") {
		t.Errorf("certsPath must follow dataDir: %q", c.CertsPath)
	}
	al, _ := ParseAllowList(c.AllowedCLIIPs)
	if !al.Contains(netip.MustParseAddr("10.0.0.77")) || al.Contains(netip.MustParseAddr("10.0.1.1")) {
		t.Error("allow-list CIDR matching wrong")
	}
	if !al.Contains(netip.MustParseAddr("::ffff:192.168.1.7")) {
		t.Error("allow-list must match IPv4-mapped IPv6 addresses")
	}
}

func TestBadFile(t *testing.T) {
	if _, err := load(t, []string{"--config", filepath.Join(t.TempDir(), "missing.yaml")}, nil); err == nil {
		t.Error("missing file accepted")
	}
	if _, err := load(t, []string{"--config", writeFile(t, "cotPort: [\n")}, nil); err == nil {
		t.Error("broken YAML accepted")
	}
	if _, err := load(t, []string{"--config", writeFile(t, "- a\n- b\n")}, nil); err == nil {
		t.Error("top-level list accepted")
	}
	if _, err := load(t, []string{"--config", writeFile(t, "")}, nil); err != nil {
		t.Errorf("empty file must be accepted: %v", err)
	}
	if _, err := load(t, []string{"--no-such-flag"}, nil); err == nil {
		t.Error("unknown flag accepted")
	}
}

func TestDisableAndAnyPort(t *testing.T) {
	c, err := load(t, []string{"--cot-port", "-1", "--rest-port", "0", "--http-port", "0"}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if c.CoTPort != -1 || c.RESTPort != 0 || c.HTTPPort != 0 {
		t.Errorf("ports %d %d %d", c.CoTPort, c.RESTPort, c.HTTPPort)
	}
}

func TestParseDuration(t *testing.T) {
	cases := map[string]time.Duration{"1.0": time.Second, "90s": 90 * time.Second, "7d": 168 * time.Hour, "36h": 36 * time.Hour, "0": 0}
	for in, want := range cases {
		got, err := ParseDuration(in)
		if err != nil || got != want {
			t.Errorf("%q -> %v %v, want %v", in, got, err, want)
		}
	}
	for _, bad := range []string{"", "x", "-1", "3w", "1e20"} {
		if _, err := ParseDuration(bad); err == nil {
			t.Errorf("%q accepted", bad)
		}
	}
}

func TestDescribeCoversEveryFlag(t *testing.T) {
	seenEnv := map[string]bool{}
	for _, k := range Describe() {
		if !strings.HasPrefix(k.Env, "OUTPOST_") {
			t.Errorf("%s: env %q", k.Key, k.Env)
		}
		if seenEnv[k.Env] {
			t.Errorf("env %s used twice", k.Env)
		}
		seenEnv[k.Env] = true
	}
	for _, name := range []string{"data-dir", "bind", "public-host", "rest-port", "http-port", "https-port", "cot-port", "ssl-cot-port", "log-format"} {
		found := false
		for _, k := range Describe() {
			found = found || k.Flag == name
		}
		if !found {
			t.Errorf("flag --%s missing", name)
		}
	}
}
