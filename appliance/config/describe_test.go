package config

import (
	"reflect"
	"testing"
)

// TestDescribeDefaults: every default Describe prints reads back as the
// default it describes, the notes name real keys, and no secret carries a
// value.
func TestDescribeDefaults(t *testing.T) {
	for _, m := range []map[string]string{derivedDefaults, defaultNotes} {
		for key := range m {
			if _, ok := fieldByKey(key); !ok {
				t.Errorf("note for unknown key %q", key)
			}
		}
	}
	def := Defaults()
	for _, k := range Describe() {
		fd, _ := fieldByKey(k.Key)
		if k.Secret && k.Default != "" {
			t.Errorf("%s: a secret shows a default", k.Key)
		}
		if k.Secret && k.DefaultNote == "" {
			t.Errorf("%s: a secret without a note on its default", k.Key)
		}
		if k.DefaultNote != "" || derivedDefaults[k.Key] != "" || k.Secret {
			continue
		}
		var c Config
		if k.Default != "" {
			if err := fd.set(&c, k.Default); err != nil {
				t.Errorf("%s: default %q does not read back: %v", k.Key, k.Default, err)
				continue
			}
		}
		if got, want := fd.ptr(&c), fd.ptr(&def); !reflect.DeepEqual(got, want) {
			t.Errorf("%s: default %q reads back as %v, want %v", k.Key, k.Default, reflect.ValueOf(got).Elem(), reflect.ValueOf(want).Elem())
		}
	}
}

func TestFormatDefaults(t *testing.T) {
	for _, tc := range []struct {
		key, want string
	}{
		{"historyRetention", "7d"}, {"loginTokenLifetime", "12h"}, {"cotIdleTimeout", "1m"},
		{"WRAP_SSL_TIMEOUT", "1s"}, {"maxMessageBytes", "64KiB"}, {"maxUploadBytes", "2GiB"},
		{"maxConnections", "4096"}, {"AllowedCLIIPs", "127.0.0.1, ::1"}, {"diskReserve", "auto"},
		{"certOfferWait", "0"}, {"udpPort", "-1"}, {"meshMaxDatagram", "8KiB"},
	} {
		for _, k := range Describe() {
			if k.Key == tc.key && k.Default != tc.want {
				t.Errorf("%s: default %q, want %q", tc.key, k.Default, tc.want)
			}
		}
	}
}
