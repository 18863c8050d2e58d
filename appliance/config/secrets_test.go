package config

import (
	"os"
	"strings"
	"testing"
)

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
