package config

import "fmt"

// Certificates are where the certificate authority and the server's
// certificates are kept (api.md §5.12) and the key type of new ones. Empty
// file locations mean the spec's default names inside CertsPath.
type Certificates struct {
	CertsPath      string // certsPath (default <dataDir>/certs, filled by Finish)
	KeyType        string // keyType: rsa or ecdsa-p256
	KeyDir         string // keyDir: server.key
	PemDir         string // pemDir: server.pem
	UnencryptedKey string // unencryptedKey: server.key.unencrypted
	P12Dir         string // p12Dir: server.p12
	CA             string // CA: ca.pem
	CAKey          string // CAkey: ca.key
	CRLFile        string // CRLFile: the JSON revocation list (api.md §2.15)
	ClientPackages string // ClientPackages: directory of built client packages
}

func defaultCertificates() Certificates { return Certificates{KeyType: "rsa"} }

// Validate checks keyType; the file locations are checked when they are
// opened.
func (c Certificates) Validate() error {
	switch c.KeyType {
	case "rsa", "ecdsa-p256":
	default:
		return keyErr("keyType", fmt.Sprintf("%q is not rsa or ecdsa-p256", c.KeyType))
	}
	return nil
}
