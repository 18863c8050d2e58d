package marti

import (
	"crypto/x509"
	"encoding/base64"
	"encoding/json"
	"encoding/xml"
	"strings"
	"testing"

	"outpost/internal/testkit"
)

// TestEnrollmentAnswersCarryTheChain: with an imported intermediate the XML
// answer has one <ca> per certificate of the chain, the CA first, and the
// JSON answer numbers them ca0, ca1, then the server certificate.
func TestEnrollmentAnswersCarryTheChain(t *testing.T) {
	root := testkit.MakeCA(t, "Example Root", nil, testkit.CAOptions{})
	inter := testkit.MakeCA(t, "Example Issuing CA", &root, testkit.CAOptions{})
	leaf := testkit.MakeCA(t, "device", &inter, testkit.CAOptions{NotCA: true})
	server := testkit.MakeCA(t, "server", &inter, testkit.CAOptions{NotCA: true})
	b64 := func(der []byte) string { return base64.StdEncoding.EncodeToString(der) }
	unwrap := func(s string) string { return strings.ReplaceAll(s, "\n", "") }

	var doc struct {
		SignedCert string   `xml:"signedCert"`
		CA         []string `xml:"ca"`
	}
	if err := xml.Unmarshal(enrollmentXML(leaf.Cert, []*x509.Certificate{inter.Cert, root.Cert}), &doc); err != nil {
		t.Fatal(err)
	}
	if unwrap(doc.SignedCert) != b64(leaf.Cert.Raw) || len(doc.CA) != 2 || unwrap(doc.CA[0]) != b64(inter.Cert.Raw) || unwrap(doc.CA[1]) != b64(root.Cert.Raw) {
		t.Fatalf("XML answer: %d <ca> elements", len(doc.CA))
	}

	body, err := enrollmentJSON(leaf.Cert, []*x509.Certificate{inter.Cert, root.Cert}, server.Cert)
	if err != nil {
		t.Fatal(err)
	}
	var ans map[string]string
	if err := json.Unmarshal(body, &ans); err != nil {
		t.Fatal(err)
	}
	for k, want := range map[string][]byte{"signedCert": leaf.Cert.Raw, "ca0": inter.Cert.Raw, "ca1": root.Cert.Raw, "ca2": server.Cert.Raw} {
		if unwrap(ans[k]) != b64(want) {
			t.Errorf("JSON %s is not the expected certificate", k)
		}
	}
	if len(ans) != 4 {
		t.Errorf("JSON answer has %d keys", len(ans))
	}
}
