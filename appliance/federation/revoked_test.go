package federation

import (
	"crypto/x509"
	"math/big"
	"testing"

	"outpost/appliance/broker"
)

// EndRevoked ends the links whose federate's certificate is now revoked,
// whatever the transport that attached them (every one gives attach the
// certificate), and leaves the others up.
func TestEndRevoked(t *testing.T) {
	b := broker.New(broker.Options{})
	t.Cleanup(b.Close)
	bad := &x509.Certificate{SerialNumber: big.NewInt(2)}
	good := &x509.Certificate{SerialNumber: big.NewInt(3)}
	f := New(Config{ServerID: "me", Name: "me", Broker: b,
		Revoked: func(c *x509.Certificate) bool { return c.SerialNumber.Cmp(bad.SerialNumber) == 0 }})
	lb, err := f.attach("revoked", "", "test", nil, bad)
	if err != nil {
		t.Fatal(err)
	}
	lg, err := f.attach("kept", "", "test", nil, good)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { lb.close(); lb.wait(); lg.close(); lg.wait() })
	if n := f.EndRevoked(); n != 1 {
		t.Fatalf("EndRevoked ended %d links, want 1", n)
	}
	select {
	case <-lb.done:
	default:
		t.Fatal("the revoked federate's link is still up")
	}
	select {
	case <-lg.done:
		t.Fatal("the good federate's link ended")
	default:
	}
}
