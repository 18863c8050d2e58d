package config

import (
	"errors"
	"strings"
	"testing"
)

// keyCase is a configuration given by flags, environment and file that
// must be refused with an error naming key.
type keyCase struct {
	name string
	args []string
	env  map[string]string
	file string
	key  string
}

var keyCases = []keyCase{
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

func TestErrorsNameTheKey(t *testing.T) {
	for _, tc := range keyCases {
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
