package config

import (
	"os"
	"regexp"
	"strings"
	"testing"
)

// TestPackagedConfig checks the commented default configuration the .deb
// installs as /etc/outpost/outpost.yaml: it loads as shipped, it names
// every key, and each commented example is valid on its own once
// uncommented.
func TestPackagedConfig(t *testing.T) {
	const path = "../../packaging/outpost.yaml"
	body, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	c := Defaults()
	if err := c.LoadFile(path); err != nil {
		t.Fatalf("as shipped: %v", err)
	}
	if c.DataDir != "/var/lib/outpost" {
		t.Fatalf("dataDir %q, want the package's /var/lib/outpost", c.DataDir)
	}
	example := regexp.MustCompile(`^# ([A-Za-z0-9_]+): (.*)$`)
	named := map[string]bool{}
	for _, line := range strings.Split(string(body), "\n") {
		m := example.FindStringSubmatch(line)
		if m == nil {
			if k, _, ok := strings.Cut(line, ":"); ok && !strings.HasPrefix(line, "#") && !strings.HasPrefix(line, " ") {
				named[k] = true
			}
			continue
		}
		named[m[1]] = true
		one := Defaults()
		if err := one.applyYAML([]byte(m[1] + ": " + m[2] + "\n")); err != nil {
			t.Errorf("example %q does not load: %v", line, err)
		}
	}
	for _, f := range fields {
		if !named[f.key] {
			t.Errorf("key %s is missing from %s: add it, commented out with its default", f.key, path)
		}
	}
}
