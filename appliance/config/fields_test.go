package config

import (
	"reflect"
	"testing"
)

// notKeys are the section fields that no key sets.
var notKeys = map[string]bool{
	"EnrollTokenKey": true, // generated into secrets.yaml, never configured (EnsureSecrets)
}

// sectionOf maps the address of every field of every section of c to its
// section's and its own name.
func sectionOf(t *testing.T, c *Config) map[uintptr][2]string {
	t.Helper()
	out := map[uintptr][2]string{}
	v := reflect.ValueOf(c).Elem()
	for i := range v.NumField() {
		sf := v.Type().Field(i)
		if !sf.Anonymous || sf.Type.Kind() != reflect.Struct {
			t.Fatalf("Config.%s is not a section: every field of Config is an embedded section", sf.Name)
		}
		for j := range sf.Type.NumField() {
			out[v.Field(i).Field(j).Addr().Pointer()] = [2]string{sf.Name, sf.Type.Field(j).Name}
		}
	}
	return out
}

// TestFieldsCoverEverySection: every field of every section is bound to
// exactly one key of the fields table (but the generated enrollment token
// key), and every key to a field of a section.
func TestFieldsCoverEverySection(t *testing.T) {
	var c Config
	where := sectionOf(t, &c)
	count := map[[2]string]int{}
	for _, f := range fields {
		at, ok := where[reflect.ValueOf(f.ptr(&c)).Pointer()]
		if !ok {
			t.Errorf("key %s is bound to no field of a section", f.key)
			continue
		}
		count[at]++
	}
	for _, at := range where {
		want := 1
		if notKeys[at[1]] {
			want = 0
		}
		if count[at] != want {
			t.Errorf("%s.%s is bound to %d keys, want %d", at[0], at[1], count[at], want)
		}
	}
}
