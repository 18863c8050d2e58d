package config

import (
	"errors"
	"flag"
	"net/netip"
	"os"
	"path/filepath"
	"slices"
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

func TestErrorsNameTheKey(t *testing.T) {
	cases := []struct {
		name string
		args []string
		env  map[string]string
		file string
		key  string
	}{
		{"port range", []string{"--cot-port", "70000"}, nil, "", "cotPort"},
		{"port not a number", []string{"--rest-port", "abc"}, nil, "", "restPort"},
		{"duplicate port", []string{"--cot-port", "8080"}, nil, "", "cotPort"},
		{"bad bind", []string{"--bind", "not-an-ip"}, nil, "", "bind"},
		{"unspecified public host", []string{"--public-host", "0.0.0.0"}, nil, "", "publicHost"},
		{"bad log format", []string{"--log-format", "xml"}, nil, "", "logFormat"},
		{"bad http access", []string{"--http-access", "public"}, nil, "", "httpAccess"},
		{"bad env duration", nil, map[string]string{"OUTPOST_WRITE_TIMEOUT": "soon"}, "", "writeTimeout"},
		{"zero handshake", nil, map[string]string{"OUTPOST_WRAP_SSL_TIMEOUT": "0"}, "", "WRAP_SSL_TIMEOUT"},
		{"unknown file key", nil, nil, "cotport: 1\n", "cotport"},
		{"file list for scalar", nil, nil, "bind: [a, b]\n", "bind"},
		{"bad cidr", nil, nil, "AllowedCLIIPs: [10.0.0.0/99]\n", "AllowedCLIIPs"},
		{"published default secret", nil, nil, "SecretKey: supersecret\n", "SecretKey"},
		{"bad key type", []string{"--key-type", "dsa"}, nil, "", "keyType"},
		{"hard below soft", nil, map[string]string{"OUTPOST_QUEUE_HARD_BYTES": "4096"}, "", "queueHardBytes"},
		{"bad server name", []string{"--server-name", "../x"}, nil, "", "serverName"},
		{"upload limit too small", []string{"--max-upload-bytes", "10"}, nil, "", "maxUploadBytes"},
		{"upload limit overflow", []string{"--max-upload-bytes", "99999999999999GiB"}, nil, "", "maxUploadBytes"},
		{"negative audit retention", nil, map[string]string{"OUTPOST_AUDIT_RETENTION": "-1h"}, "", "auditRetention"},
		{"audit budget too small", []string{"--max-audit-records", "99"}, nil, "", "maxAuditRecords"},
		{"no data package budget", nil, map[string]string{"OUTPOST_MAX_DATA_PACKAGES": "0"}, "", "maxDataPackages"},
		{"ExCheck bytes too small", nil, nil, "maxExCheckBytes: 1KiB\n", "maxExCheckBytes"},
		{"negative video budget", nil, nil, "maxVideoConnections: -1\n", "maxVideoConnections"},
		{"zero login lifetime", nil, nil, "loginTokenLifetime: 0\n", "loginTokenLifetime"},
		{"geocoder not http", []string{"--geocoder-url", "ftp://maps.local"}, nil, "", "geocoderURL"},
		{"geocoder without host", nil, map[string]string{"OUTPOST_GEOCODER_URL": "http://"}, "", "geocoderURL"},
		{"geocoder with credentials", nil, nil, "geocoderURL: http://u:p@maps.local\n", "geocoderURL"},
		{"geocoder with query", []string{"--geocoder-url", "http://maps.local/?key=1"}, nil, "", "geocoderURL"},
		{"repeat interval too short", []string{"--repeat-interval", "500ms"}, nil, "", "repeatInterval"},
		{"repeat interval too long", nil, nil, "repeatInterval: 2d\n", "repeatInterval"},
		{"emergency repeat zero", nil, map[string]string{"OUTPOST_EMERGENCY_REPEAT_INTERVAL": "0"}, "", "emergencyRepeatInterval"},
		{"channel auth timeout zero", nil, map[string]string{"OUTPOST_CHANNEL_AUTH_TIMEOUT": "0"}, "", "channelAuthTimeout"},
		{"channel auth timeout too long", []string{"--channel-auth-timeout", "2m"}, nil, "", "channelAuthTimeout"},
		{"channel unauthenticated zero", nil, nil, "channelUnauthenticatedPerSource: 0\n", "channelUnauthenticatedPerSource"},
		{"channel unauthenticated over half", []string{"--channel-unauthenticated-per-source", "17"}, nil, "", "channelUnauthenticatedPerSource"},
		{"emergency repeat too long", []string{"--emergency-repeat-interval", "2h"}, nil, "", "emergencyRepeatInterval"},
		{"no log entry at all", nil, nil, "missionLogEntryMaxBytes: 0\n", "missionLogEntryMaxBytes"},
		{"log entry past a request", nil, map[string]string{"OUTPOST_MISSION_LOG_ENTRY_MAX_BYTES": "200KiB"}, "", "missionLogEntryMaxBytes"},
		{"negative mission changes", nil, nil, "missionMaxChanges: -1\n", "missionMaxChanges"},
		{"negative mission contents", nil, map[string]string{"OUTPOST_MISSION_MAX_CONTENTS": "-5"}, "", "missionMaxContents"},
		{"log bytes rate below one entry", nil, nil, "missionLogBytesPerMinute: 1KiB\n", "missionLogBytesPerMinute"},
		{"mesh mode", []string{"--mesh", "on"}, nil, "", "mesh"},
		{"mesh SA group not multicast", nil, nil, "meshSAGroup: 10.0.0.1:6969\n", "meshSAGroup"},
		{"mesh chat group without port", nil, map[string]string{"OUTPOST_MESH_CHAT_GROUP": "224.10.10.1"}, "", "meshChatGroup"},
		{"mesh listen group IPv6", nil, nil, "meshListenGroups: [\"[ff02::1]:7171\"]\n", "meshListenGroups"},
		{"mesh interface empty name", nil, nil, "meshInterfaces: [\"\"]\n", "meshInterfaces"},
		{"mesh group empty", nil, nil, "meshGroup: \"\"\n", "meshGroup"},
		{"mesh TTL zero", nil, nil, "meshTTL: 0\n", "meshTTL"},
		{"mesh datagram past UDP", nil, nil, "meshMaxDatagram: 70000\n", "meshMaxDatagram"},
		{"mesh no sources", nil, nil, "meshMaxSources: 0\n", "meshMaxSources"},
		{"mesh idle too short", nil, nil, "meshIdleTimeout: 1s\n", "meshIdleTimeout"},
		{"mesh direct port", nil, nil, "meshDirectPort: 70000\n", "meshDirectPort"},
		{"udp port", []string{"--udp-port", "-2"}, nil, "", "udpPort"},
		{"federation port", []string{"--federation-port", "70000"}, nil, "", "federationPort"},
		{"federate without address", nil, nil, "federates: [bravo]\nfederationTrust: /x\n", "federates"},
		{"federate without port", nil, map[string]string{"OUTPOST_FEDERATES": "bravo=10.0.0.2", "OUTPOST_FEDERATION_TRUST": "/x"}, "", "federates"},
		{"federate bad port", nil, nil, "federates: [\"bravo=10.0.0.2:0\"]\nfederationTrust: /x\n", "federates"},
		{"federate named twice", nil, nil, "federates: [\"b=h:1\", \"b=h:2\"]\nfederationTrust: /x\n", "federates"},
		{"federates without trust", nil, nil, "federates: [\"b=h:1\"]\n", "federationTrust"},
		{"federates with federation off", nil, nil, "federates: [\"b=h:1\"]\nfederationTrust: /x\nfederationPort: -1\n", "federationPort"},
		{"federation cert without key", nil, nil, "federationCert: /c.pem\n", "federationCert"},
		{"federation hops", nil, nil, "federationMaxHops: 65\n", "federationMaxHops"},
		{"federation allow empty entry", nil, nil, "federationAllow: [\"\"]\n", "federationAllow"},
		{"federate unknown protocol", nil, nil, "federates: [\"b=h:1/v3\"]\nfederationTrust: /x\n", "federates"},
		{"federation v1 port", []string{"--federation-v1-port", "70000"}, nil, "", "federationV1Port"},
		{"federation v1 port with federation off", nil, nil, "federationV1Port: 9000\nfederationPort: -1\n", "federationV1Port"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			args := tc.args
			if tc.file != "" {
				args = append([]string{"--config", writeFile(t, tc.file)}, args...)
			}
			_, err := load(t, args, tc.env)
			if err == nil {
				t.Fatal("expected an error")
			}
			var ce *Error
			if !errors.As(err, &ce) || ce.Key != tc.key {
				t.Fatalf("error %q does not name key %q", err, tc.key)
			}
			if !strings.Contains(err.Error(), tc.key) {
				t.Fatalf("message %q does not contain the key", err)
			}
		})
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

func TestEnsureSecrets(t *testing.T) {
	dir := t.TempDir()
	c := Defaults()
	c.DataDir = dir
	c.WebsocketKey = "configured-key-123"
	gen, path, err := c.EnsureSecrets()
	if err != nil {
		t.Fatal(err)
	}
	if len(gen) != 3 || c.SecretKey == "" || c.Password == "" || c.EnrollTokenKey == "" || c.WebsocketKey != "configured-key-123" {
		t.Fatalf("generated %v secret=%d pw=%d ws=%q", gen, len(c.SecretKey), len(c.Password), c.WebsocketKey)
	}
	st, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	if st.Mode().Perm() != 0o600 {
		t.Errorf("secrets file mode %v, want 0600", st.Mode().Perm())
	}
	data, _ := os.ReadFile(path)
	if strings.Contains(string(data), "configured-key-123") {
		t.Error("a configured secret must not be copied into the secrets file")
	}
	// A second run reuses the stored values and generates nothing.
	c2 := Defaults()
	c2.DataDir = dir
	gen2, _, err := c2.EnsureSecrets()
	if err != nil {
		t.Fatal(err)
	}
	if len(gen2) != 1 || gen2[0] != "websocketkey" || c2.SecretKey != c.SecretKey || c2.Password != c.Password || c2.EnrollTokenKey != c.EnrollTokenKey {
		t.Fatalf("second run generated %v; secrets must persist", gen2)
	}
	// Two fresh data dirs never share secrets.
	c3 := Defaults()
	c3.DataDir = t.TempDir()
	if _, _, err := c3.EnsureSecrets(); err != nil {
		t.Fatal(err)
	}
	if c3.SecretKey == c.SecretKey || c3.Password == c.Password || c3.EnrollTokenKey == c.EnrollTokenKey {
		t.Error("secrets repeat across installations")
	}
	// A corrupt secrets file is an error, not a silent regeneration.
	if err := os.WriteFile(path, []byte("SecretKey: [\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	c4 := Defaults()
	c4.DataDir = dir
	if _, _, err := c4.EnsureSecrets(); err == nil {
		t.Error("corrupt secrets file accepted")
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

func TestDiskKeys(t *testing.T) {
	c, err := load(t, nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	if c.DiskReserve.Set || c.DiskFloor.Set {
		t.Fatalf("defaults: diskReserve %s diskFloor %s, want auto", c.DiskReserve, c.DiskFloor)
	}
	file := writeFile(t, "diskReserve: 5%\ndiskFloor: 8MiB\n")
	c, err = load(t, []string{"--config", file}, nil)
	if err != nil || c.DiskReserve.Percent != 5 || c.DiskFloor.Bytes != 8<<20 {
		t.Fatalf("file: %+v %+v %v", c.DiskReserve, c.DiskFloor, err)
	}
	c, err = load(t, []string{"--config", file, "--disk-reserve", "1GiB"}, map[string]string{"OUTPOST_DISK_FLOOR": "0"})
	if err != nil || c.DiskReserve.Bytes != 1<<30 || !c.DiskFloor.Set || c.DiskFloor.Bytes != 0 {
		t.Fatalf("flag and env: %+v %+v %v", c.DiskReserve, c.DiskFloor, err)
	}
	cases := []struct {
		name string
		args []string
		env  map[string]string
		file string
		key  string
	}{
		{"reserve not a size", []string{"--disk-reserve", "lots"}, nil, "", "diskReserve"},
		{"reserve negative", nil, map[string]string{"OUTPOST_DISK_RESERVE": "-1MiB"}, "", "diskReserve"},
		{"reserve over half the disk", nil, nil, "diskReserve: 60%\n", "diskReserve"},
		{"floor zero percent", []string{"--disk-floor", "0%"}, nil, "", "diskFloor"},
		{"floor above reserve", []string{"--disk-reserve", "64MiB", "--disk-floor", "128MiB"}, nil, "", "diskFloor"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			args := tc.args
			if tc.file != "" {
				args = append([]string{"--config", writeFile(t, tc.file)}, args...)
			}
			c, err := load(t, args, tc.env)
			var ce *Error
			if !errors.As(err, &ce) || ce.Key != tc.key || !strings.Contains(err.Error(), tc.key) {
				t.Fatalf("error %v (config %+v %+v) does not name key %q", err, c.DiskReserve, c.DiskFloor, tc.key)
			}
		})
	}
}

// A federates entry names its protocol with /v1 or /v2 (v2 without
// either); federation v1's listener is off unless federationV1Port is set.
func TestFederateProtocols(t *testing.T) {
	c, err := load(t, []string{"--config", writeFile(t, "federates: [\"a=h:1/v1\", \"b=h:2/v2\", \"c=10.0.0.3:9001\"]\nfederationTrust: /x\n")}, nil)
	if err != nil {
		t.Fatal(err)
	}
	names, addrs := c.FederateList()
	if !slices.Equal(names, []string{"a", "b", "c"}) || !slices.Equal(addrs, []string{"h:1", "h:2", "10.0.0.3:9001"}) ||
		!slices.Equal(c.FederateV1(), []bool{true, false, false}) {
		t.Fatalf("federates %v %v %v", names, addrs, c.FederateV1())
	}
	if c.FederationV1Port != -1 {
		t.Fatalf("federationV1Port defaults to %d", c.FederationV1Port)
	}
	c, err = load(t, []string{"--federation-v1-port", "9000"}, nil)
	if err != nil || c.FederationV1Port != 9000 {
		t.Fatalf("--federation-v1-port 9000: %v %d", err, c.FederationV1Port)
	}
}
