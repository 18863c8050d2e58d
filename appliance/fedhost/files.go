package fedhost

import (
	"crypto/tls"
	"crypto/x509"
	"encoding/pem"
	"errors"
	"fmt"
	"io"
	"os"
)

// maxPEMFile bounds the certificate and key files read for federation.
const maxPEMFile = 1 << 20

// readTrust reads a PEM file of CA certificates.
func readTrust(path string) (*x509.CertPool, error) {
	b, err := readSmall(path)
	if err != nil {
		return nil, err
	}
	pool := x509.NewCertPool()
	if !pool.AppendCertsFromPEM(b) {
		return nil, errors.New("no PEM certificate in " + path)
	}
	return pool, nil
}

// readKeyPair reads a PEM certificate (with its chain) and its PEM key,
// decrypting a key encrypted the legacy PEM way with password.
func readKeyPair(certPath, keyPath, password string) (tls.Certificate, error) {
	cb, err := readSmall(certPath)
	if err != nil {
		return tls.Certificate{}, err
	}
	kb, err := readSmall(keyPath)
	if err != nil {
		return tls.Certificate{}, err
	}
	if blk, _ := pem.Decode(kb); blk != nil && x509.IsEncryptedPEMBlock(blk) { //nolint:staticcheck // the legacy format is what such keys are in
		if password == "" {
			return tls.Certificate{}, errors.New("the key is encrypted: set federationKeyPassword")
		}
		der, err := x509.DecryptPEMBlock(blk, []byte(password)) //nolint:staticcheck
		if err != nil {
			return tls.Certificate{}, fmt.Errorf("decrypting the key: %w", err)
		}
		kb = pem.EncodeToMemory(&pem.Block{Type: blk.Type, Bytes: der})
	}
	return tls.X509KeyPair(cb, kb)
}

func readSmall(path string) ([]byte, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return nil, err
	}
	if st.Size() > maxPEMFile {
		return nil, fmt.Errorf("%s is larger than %d bytes", path, maxPEMFile)
	}
	b := make([]byte, st.Size())
	_, err = io.ReadFull(f, b)
	return b, err
}
