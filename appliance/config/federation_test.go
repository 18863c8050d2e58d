package config

import (
	"slices"
	"testing"
)

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
