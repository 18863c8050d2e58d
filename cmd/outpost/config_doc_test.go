package main

import (
	"bytes"
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"outpost/appliance/config"
)

var updateDocs = flag.Bool("update-docs", false, "rewrite the generated key table of docs/configuration.md from `outpost config --markdown`")

const (
	configBegin = "<!-- config:begin -->\n"
	configEnd   = "<!-- config:end -->"
)

// TestConfigReference: the key table of docs/configuration.md is what
// `outpost config --markdown` prints. After changing a key, its meaning or
// its default, run
//
//	go test ./cmd/outpost -run TestConfigReference -update-docs
func TestConfigReference(t *testing.T) {
	path := filepath.Join("..", "..", "docs", "configuration.md")
	doc, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	code, table, errOut := outpost(t, "config", "--markdown")
	if code != exitOK {
		t.Fatalf("config --markdown: exit %d %s", code, errOut)
	}
	i := bytes.Index(doc, []byte(configBegin))
	j := bytes.Index(doc, []byte(configEnd))
	if i < 0 || j < i {
		t.Fatalf("%s has no %q ... %q block", path, strings.TrimSpace(configBegin), configEnd)
	}
	got := string(doc[i+len(configBegin) : j])
	if *updateDocs {
		updated := string(doc[:i+len(configBegin)]) + table + string(doc[j:])
		if err := os.WriteFile(path, []byte(updated), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	if got != table {
		gl, wl := strings.Split(got, "\n"), strings.Split(table, "\n")
		for n := 0; n < len(gl) || n < len(wl); n++ {
			var g, w string
			if n < len(gl) {
				g = gl[n]
			}
			if n < len(wl) {
				w = wl[n]
			}
			if g != w {
				t.Fatalf("docs/configuration.md's key table is not what `outpost config --markdown` prints; "+
					"run `go test ./cmd/outpost -run TestConfigReference -update-docs`.\nFirst difference, row %d:\n doc:  %s\n code: %s", n+1, g, w)
			}
		}
	}
}

// TestConfigMarkdown: one row per key, the code's defaults whatever the
// environment says, and no secret's value.
func TestConfigMarkdown(t *testing.T) {
	secrets := map[string]string{
		"OUTPOST_SECRET_KEY":              "k3y-that-must-not-show",
		"OUTPOST_WEBSOCKET_KEY":           "ws-k3y-that-must-not-show",
		"OUTPOST_PASSWORD":                "pkcs12-pw-that-must-not-show",
		"OUTPOST_FEDERATION_KEY_PASSWORD": "fed-pw-that-must-not-show",
		"OUTPOST_HISTORY_RETENTION":       "3d",
	}
	env := func(k string) (string, bool) { v, ok := secrets[k]; return v, ok }
	var out, errb bytes.Buffer
	if code := run([]string{"config", "--markdown"}, strings.NewReader(""), &out, &errb, env); code != exitOK {
		t.Fatalf("config --markdown: exit %d %s", code, errb.String())
	}
	for _, v := range secrets {
		if v != "3d" && strings.Contains(out.String(), v) {
			t.Errorf("a secret's value was printed: %s", v)
		}
	}
	rows := map[string]string{}
	for _, line := range strings.Split(strings.TrimSpace(out.String()), "\n")[2:] {
		cells := strings.Split(line, " | ")
		rows[strings.Trim(cells[0], "|` ")] = line
	}
	keys := config.Describe()
	if len(rows) != len(keys) {
		t.Errorf("%d rows for %d keys", len(rows), len(keys))
	}
	for _, k := range keys {
		row, ok := rows[k.Key]
		switch {
		case !ok:
			t.Errorf("no row for %s", k.Key)
		case k.Secret && !strings.Contains(row, "never printed"):
			t.Errorf("the secret %s is not marked: %s", k.Key, row)
		}
	}
	if !strings.Contains(rows["historyRetention"], "| `7d` |") {
		t.Errorf("historyRetention's default is not the code's: %s", rows["historyRetention"])
	}
	if !strings.Contains(rows["SecretKey"], "generated on first run") {
		t.Errorf("SecretKey: %s", rows["SecretKey"])
	}
}
