package config

import (
	"errors"
	"reflect"
	"slices"
	"testing"
	"time"

	"outpost/appliance/diskspace"
)

// badKey is one configuration that one check refuses: the section that
// holds the key, the key the error must name, and the change to a valid
// configuration that makes it bad.
type badKey struct {
	section string
	key     string
	mutate  func(*Config)
}

// badKeys holds a bad value for every key Validate checks (one for each of
// its rules), in the order Validate checks them: section by section in
// sectionOrder, each section's in the order it checks its keys.
var badKeys = []badKey{
	{"Server", "dataDir", func(c *Config) { c.DataDir = " " }},
	{"Server", "bind", func(c *Config) { c.Bind = "" }},
	{"Server", "bind", func(c *Config) { c.Bind = "not-an-ip" }},
	{"Server", "publicHost", func(c *Config) { c.PublicHost = "0.0.0.0" }},
	{"Server", "serverName", func(c *Config) { c.ServerName = "../x" }},
	{"Server", "logFormat", func(c *Config) { c.LogFormat = "xml" }},
	{"Server", "logLevel", func(c *Config) { c.LogLevel = "trace" }},
	{"Server", "shutdownTimeout", func(c *Config) { c.ShutdownTimeout = 0 }},

	{"Listeners", "restPort", func(c *Config) { c.RESTPort = 70000 }},
	{"Listeners", "httpPort", func(c *Config) { c.HTTPPort = -2 }},
	{"Listeners", "httpsPort", func(c *Config) { c.HTTPSPort = 65536 }},
	{"Listeners", "cotPort", func(c *Config) { c.CoTPort = c.HTTPPort }},
	{"Listeners", "sslCotPort", func(c *Config) { c.SSLCoTPort = -5 }},
	{"Listeners", "enrollPort", func(c *Config) { c.EnrollPort = c.HTTPSPort }},
	{"Listeners", "httpAccess", func(c *Config) { c.HTTPAccess = "public" }},
	{"Listeners", "WRAP_SSL_TIMEOUT", func(c *Config) { c.SSLHandshakeTimeout = 0 }},
	{"Listeners", "httpBodyTimeout", func(c *Config) { c.HTTPBodyTimeout = 0 }},
	{"Listeners", "maxPendingHandshakes", func(c *Config) { c.MaxPendingHandshakes = 0 }},
	{"Listeners", "maxPendingHandshakesPerSource", func(c *Config) { c.MaxPendingHandshakesPerSource = 0 }},
	{"Listeners", "httpMaxConnections", func(c *Config) { c.HTTPMaxConnections = 0 }},
	{"Listeners", "httpMaxConnectionsPerSource", func(c *Config) { c.HTTPMaxConnectionsPerSource = -1 }},
	{"Listeners", "passwordChecksPerSecond", func(c *Config) { c.PasswordChecksPerSecond = 0 }},

	{"Relay", "cotIdleTimeout", func(c *Config) { c.CoTIdleTimeout = 0 }},
	{"Relay", "SSL_SOCK_TIMEOUT", func(c *Config) { c.SSLSockTimeout = -time.Second }},
	{"Relay", "writeTimeout", func(c *Config) { c.WriteTimeout = 0 }},
	{"Relay", "maxMessageBytes", func(c *Config) { c.MaxMessageBytes = 100 }},
	{"Relay", "maxConnections", func(c *Config) { c.MaxConnections = 0 }},
	{"Relay", "maxConnectionsPerSource", func(c *Config) { c.MaxConnectionsPerSource = -1 }},
	{"Relay", "clientEventsPerSecond", func(c *Config) { c.ClientEventsPerSecond = -1 }},
	{"Relay", "clientBytesPerSecond", func(c *Config) { c.ClientBytesPerSecond = -1 }},
	{"Relay", "queueSoftBytes", func(c *Config) { c.QueueSoftBytes = 100 }},
	{"Relay", "queueHardBytes", func(c *Config) { c.QueueHardBytes = 4096 }},

	{"Storage", "historyRetention", func(c *Config) { c.HistoryRetention = -time.Hour }},
	{"Storage", "historyMaxBytes", func(c *Config) { c.HistoryMaxBytes = -1 }},
	{"Storage", "historyClientRate", func(c *Config) { c.HistoryClientRate = -1 }},
	{"Storage", "historyClientBytes", func(c *Config) { c.HistoryClientBytes = -1 }},
	{"Storage", "historyTotalRate", func(c *Config) { c.HistoryTotalRate = -1 }},
	{"Storage", "historyTotalBytes", func(c *Config) { c.HistoryTotalBytes = -1 }},
	{"Storage", "maxUploadBytes", func(c *Config) { c.MaxUploadBytes = 10 }},
	{"Storage", "maxDataPackages", func(c *Config) { c.MaxDataPackages = 0 }},
	{"Storage", "maxExCheckDocuments", func(c *Config) { c.MaxExCheckDocuments = 0 }},
	{"Storage", "maxExCheckBytes", func(c *Config) { c.MaxExCheckBytes = 1 }},
	{"Storage", "maxVideoConnections", func(c *Config) { c.MaxVideoConnections = 0 }},
	{"Storage", "maxServerObjects", func(c *Config) { c.MaxServerObjects = -1 }},
	{"Storage", "maxAuditRecords", func(c *Config) { c.MaxAuditRecords = 99 }},
	{"Storage", "auditRetention", func(c *Config) { c.AuditRetention = -time.Hour }},
	{"Storage", "diskFloor", func(c *Config) {
		c.DiskReserve = diskspace.Amount{Set: true, Bytes: 64 << 20}
		c.DiskFloor = diskspace.Amount{Set: true, Bytes: 128 << 20}
	}},

	{"Missions", "missionLogEntryMaxBytes", func(c *Config) { c.MissionLogEntryMaxBytes = -1 }},
	{"Missions", "missionLogMaxEntries", func(c *Config) { c.MissionLogMaxEntries = -1 }},
	{"Missions", "missionLogMaxBytes", func(c *Config) { c.MissionLogMaxBytes = -1 }},
	{"Missions", "missionLogEntriesPerMinute", func(c *Config) { c.MissionLogEntriesPerMinute = -1 }},
	{"Missions", "missionLogBytesPerMinute", func(c *Config) { c.MissionLogBytesPerMinute = -1 }},
	{"Missions", "missionMaxContents", func(c *Config) { c.MissionMaxContents = -1 }},
	{"Missions", "missionMaxChanges", func(c *Config) { c.MissionMaxChanges = -1 }},
	{"Missions", "missionMaxChangeBytes", func(c *Config) { c.MissionMaxChangeBytes = -1 }},
	{"Missions", "missionLogEntryMaxBytes", func(c *Config) { c.MissionLogEntryMaxBytes = 0 }},
	{"Missions", "missionLogBytesPerMinute", func(c *Config) { c.MissionLogBytesPerMinute = 1 << 10 }},

	{"Management", "loginTokenLifetime", func(c *Config) { c.LoginTokenLifetime = 0 }},
	{"Management", "channelAuthTimeout", func(c *Config) { c.ChannelAuthTimeout = 2 * time.Minute }},
	{"Management", "channelUnauthenticatedPerSource", func(c *Config) { c.ChannelUnauthenticatedPerSource = 17 }},
	{"Management", "certOfferWait", func(c *Config) { c.CertOfferWait = -time.Second }},
	{"Management", "AllowedCLIIPs", func(c *Config) { c.AllowedCLIIPs = []string{"10.0.0.0/99"} }},
	{"Management", "AllowCLIIPs", func(c *Config) { c.AllowCLIIPs = []string{"x"} }},

	{"Geo", "geocoderURL", func(c *Config) { c.GeocoderURL = "ftp://maps.local" }},
	{"Geo", "repeatInterval", func(c *Config) { c.RepeatInterval = 0 }},
	{"Geo", "emergencyRepeatInterval", func(c *Config) { c.EmergencyRepeatInterval = 2 * time.Hour }},

	{"Federation", "federationPort", func(c *Config) { c.FederationPort = 70000 }},
	{"Federation", "federationV1Port", func(c *Config) { c.FederationV1Port = 70000 }},
	{"Federation", "federationV1Port", func(c *Config) { c.FederationV1Port, c.FederationPort = 9000, -1 }},
	{"Federation", "federates", func(c *Config) { c.Federates, c.FederationTrust = []string{"bravo"}, "/x" }},
	{"Federation", "federates", func(c *Config) { c.Federates, c.FederationTrust = []string{"b=h:1", "b=h:2"}, "/x" }},
	{"Federation", "federationTrust", func(c *Config) { c.Federates = []string{"b=h:1"} }},
	{"Federation", "federationPort", func(c *Config) {
		c.Federates, c.FederationTrust, c.FederationPort = []string{"b=h:1"}, "/x", -1
	}},
	{"Federation", "federationAllow", func(c *Config) { c.FederationAllow = []string{""} }},
	{"Federation", "federationCert", func(c *Config) { c.FederationCert = "/c.pem" }},
	{"Federation", "federationQueueAge", func(c *Config) { c.FederationQueueAge = 0 }},
	{"Federation", "federationQueueBytes", func(c *Config) { c.FederationQueueBytes = 1 }},
	{"Federation", "federationMaxHops", func(c *Config) { c.FederationMaxHops = 65 }},

	{"FieldMesh", "mesh", func(c *Config) { c.Mesh = "on" }},
	{"FieldMesh", "meshSAGroup", func(c *Config) { c.MeshSAGroup = "10.0.0.1:6969" }},
	{"FieldMesh", "meshChatGroup", func(c *Config) { c.MeshChatGroup = "224.10.10.1" }},
	{"FieldMesh", "meshListenGroups", func(c *Config) { c.MeshListenGroups = []string{"[ff02::1]:7171"} }},
	{"FieldMesh", "meshInterfaces", func(c *Config) { c.MeshInterfaces = []string{""} }},
	{"FieldMesh", "meshGroup", func(c *Config) { c.MeshGroup = "" }},
	{"FieldMesh", "meshTTL", func(c *Config) { c.MeshTTL = 0 }},
	{"FieldMesh", "meshMaxDatagram", func(c *Config) { c.MeshMaxDatagram = 70000 }},
	{"FieldMesh", "meshMaxSources", func(c *Config) { c.MeshMaxSources = 0 }},
	{"FieldMesh", "meshIdleTimeout", func(c *Config) { c.MeshIdleTimeout = time.Second }},
	{"FieldMesh", "meshDirectPort", func(c *Config) { c.MeshDirectPort = 70000 }},
	{"FieldMesh", "udpPort", func(c *Config) { c.UDPPort = -2 }},

	{"Memory", "memoryLimit", func(c *Config) { c.MemoryLimit = 1 << 20 }},
	{"Memory", "gcPercent", func(c *Config) { c.GCPercent = 5 }},
	{"Memory", "idleMemoryReturn", func(c *Config) { c.IdleMemoryReturn = 100 * time.Millisecond }},

	{"Certificates", "keyType", func(c *Config) { c.KeyType = "dsa" }},

	{"Secrets", "SecretKey", func(c *Config) { c.SecretKey = "supersecret" }},
	{"Secrets", "websocketkey", func(c *Config) { c.WebsocketKey = "changeme" }},
	{"Secrets", "password", func(c *Config) { c.Password = "Password" }},
}

// validConfig is Defaults with what Finish would fill.
func validConfig(t *testing.T) Config {
	t.Helper()
	c := Defaults()
	c.PublicHost = "192.0.2.10"
	if err := c.Validate(); err != nil {
		t.Fatalf("defaults: %v", err)
	}
	return c
}

// badConfig is a valid configuration with the given bad keys applied.
func badConfig(t *testing.T, bad ...badKey) Config {
	t.Helper()
	c := validConfig(t)
	for _, b := range bad {
		b.mutate(&c)
	}
	return c
}

// TestValidateNamesEachKey: each bad value alone is refused with an error
// naming its key.
func TestValidateNamesEachKey(t *testing.T) {
	for _, b := range badKeys {
		c := badConfig(t, b)
		var ce *Error
		if err := c.Validate(); !errors.As(err, &ce) || ce.Key != b.key {
			t.Errorf("%s: Validate = %v, want an error naming %s", b.key, err, b.key)
		}
	}
}

// sectionOrder is the order Validate checks the sections in, by subsystem:
// of two bad keys in different sections, the earlier section's is reported.
var sectionOrder = []string{
	"Server", "Listeners", "Relay", "Storage", "Missions", "Management",
	"Geo", "Federation", "FieldMesh", "Memory", "Certificates", "Secrets",
}

// TestValidateOrder: Validate asks the sections in sectionOrder, and of two
// bad keys in different sections it reports the earlier section's, word for
// word as when it is alone.
func TestValidateOrder(t *testing.T) {
	var c Config
	var asked []string
	for _, s := range c.sections() {
		asked = append(asked, reflect.TypeOf(s).Elem().Name())
	}
	if !slices.Equal(asked, sectionOrder) {
		t.Fatalf("Validate asks the sections in the order %v, want %v", asked, sectionOrder)
	}
	rank := map[string]int{}
	for i, name := range sectionOrder {
		rank[name] = i
	}
	for _, first := range badKeys {
		alone := badConfig(t, first)
		want := alone.Validate().Error()
		for _, later := range badKeys {
			if rank[later.section] <= rank[first.section] {
				continue
			}
			both := badConfig(t, later, first)
			if err := both.Validate(); err == nil || err.Error() != want {
				t.Errorf("%s (%s) and %s (%s): %v, want %q", first.key, first.section, later.key, later.section, err, want)
			}
		}
	}
}

// TestSectionsValidateTheirKeys: each section's Validate reports a bad key
// of its own section, with the message Config.Validate gives, and
// Config.Validate asks every section, in the order of Config's fields and
// of badKeys.
func TestSectionsValidateTheirKeys(t *testing.T) {
	var c Config
	where := sectionOf(t, &c)
	keySection := map[string]string{}
	for _, f := range fields {
		keySection[f.key] = where[reflect.ValueOf(f.ptr(&c)).Pointer()][0]
	}
	ct := reflect.TypeOf(c)
	order := c.sections()
	if len(order) != ct.NumField() {
		t.Fatalf("Validate asks %d sections, Config has %d", len(order), ct.NumField())
	}
	for i, s := range order {
		if name := reflect.TypeOf(s).Elem().Name(); name != ct.Field(i).Name {
			t.Errorf("section %d validated is %s, Config's is %s", i, name, ct.Field(i).Name)
		}
	}
	next := 0 // index in Config of the section badKeys may name next
	for _, b := range badKeys {
		for next < ct.NumField() && ct.Field(next).Name != b.section {
			next++
		}
		if next == ct.NumField() {
			t.Fatalf("%s: section %s is not a section, or badKeys is not in the order of the sections", b.key, b.section)
		}
		if keySection[b.key] != b.section {
			t.Errorf("key %s is in section %q, not %s", b.key, keySection[b.key], b.section)
		}
		bad := badConfig(t, b)
		err := bad.sections()[next].Validate()
		var ce *Error
		if !errors.As(err, &ce) || ce.Key != b.key {
			t.Errorf("%s.Validate = %v, want an error naming %s", b.section, err, b.key)
		} else if whole := bad.Validate(); whole == nil || whole.Error() != err.Error() {
			t.Errorf("%s: Config.Validate = %v, %s.Validate = %v", b.key, whole, b.section, err)
		}
	}
	named := map[string]bool{}
	for _, b := range badKeys {
		named[b.section] = true
	}
	for i := range ct.NumField() {
		if !named[ct.Field(i).Name] {
			t.Errorf("no bad key of section %s in badKeys", ct.Field(i).Name)
		}
	}
}
