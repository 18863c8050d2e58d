package pki

import (
	"crypto"
	"crypto/ecdsa"
	"crypto/ed25519"
	"crypto/rsa"
	"crypto/x509"
	"encoding/pem"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"strconv"
	"strings"
	"time"
)

// Size limits for files this package reads (security: size limits on input).
const (
	maxPEMFile   = 1 << 20  // certificates and keys
	maxCRLFile   = 16 << 20 // crl.json
	maxIndexFile = 64 << 20 // issued.json
	maxChain     = 8        // certificates in a CA bundle (the CA and its issuers)
)

// Lock-file timing for files shared with another process. Locks are held for
// milliseconds (a key generation at most), so an older lock file was left by a
// crashed process; lockWait exceeds lockStale so such a lock is always broken
// before a waiter gives up.
const (
	lockStale = 30 * time.Second
	lockWait  = 40 * time.Second
)

// readFileLimited reads a whole file, refusing files larger than limit.
func readFileLimited(path string, limit int64) ([]byte, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	data, err := io.ReadAll(io.LimitReader(f, limit+1))
	if err != nil {
		return nil, fmt.Errorf("read %s: %w", path, err)
	}
	if int64(len(data)) > limit {
		return nil, fmt.Errorf("read %s: file is larger than %d bytes", path, limit)
	}
	return data, nil
}

func fileExists(path string) (bool, error) {
	_, err := os.Stat(path)
	if err == nil {
		return true, nil
	}
	if errors.Is(err, fs.ErrNotExist) {
		return false, nil
	}
	return false, err
}

// lockFile takes an exclusive lock shared with other processes by creating
// path+".lock" with O_EXCL. A lock older than lockStale is taken to be left
// behind by a crashed process and is removed. The returned func releases it.
func lockFile(path string) (unlock func(), err error) {
	lock := path + ".lock"
	deadline := time.Now().Add(lockWait)
	wait := 2 * time.Millisecond
	for {
		f, err := os.OpenFile(lock, os.O_CREATE|os.O_EXCL|os.O_WRONLY, 0o600)
		if err == nil {
			_, _ = f.WriteString(strconv.Itoa(os.Getpid()))
			_ = f.Close()
			return func() { _ = os.Remove(lock) }, nil
		}
		if !errors.Is(err, fs.ErrExist) {
			return nil, fmt.Errorf("lock %s: %w", lock, err)
		}
		if st, serr := os.Stat(lock); serr == nil && time.Since(st.ModTime()) > lockStale {
			_ = os.Remove(lock)
			continue
		}
		if time.Now().After(deadline) {
			return nil, fmt.Errorf("lock %s: held by another process for more than %s", lock, lockWait)
		}
		time.Sleep(wait)
		if wait < 50*time.Millisecond {
			wait *= 2
		}
	}
}

// readCertFile parses the first CERTIFICATE block of a PEM file. Other blocks
// (FreeTAKServer appends its CRL to ca.pem) are skipped.
func readCertFile(path string) (*x509.Certificate, []byte, error) {
	data, err := readFileLimited(path, maxPEMFile)
	if err != nil {
		return nil, nil, err
	}
	rest := data
	for {
		var block *pem.Block
		block, rest = pem.Decode(rest)
		if block == nil {
			return nil, nil, fmt.Errorf("%s: no PEM CERTIFICATE block found", path)
		}
		if block.Type != "CERTIFICATE" {
			continue
		}
		cert, err := x509.ParseCertificate(block.Bytes)
		if err != nil {
			return nil, nil, fmt.Errorf("%s: certificate does not parse: %w", path, err)
		}
		return cert, pem.EncodeToMemory(block), nil
	}
}

// readCertsFile parses every CERTIFICATE block of a PEM file, in order; at
// least one is required. Other blocks are skipped.
func readCertsFile(path string) ([]*x509.Certificate, error) {
	data, err := readFileLimited(path, maxPEMFile)
	if err != nil {
		return nil, err
	}
	certs, err := parseCerts(data)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return certs, nil
}

// parseCerts parses every CERTIFICATE block of PEM data, in order (at most
// maxChain); at least one is required.
func parseCerts(data []byte) ([]*x509.Certificate, error) {
	var certs []*x509.Certificate
	rest := data
	for {
		var block *pem.Block
		block, rest = pem.Decode(rest)
		if block == nil {
			break
		}
		if block.Type != "CERTIFICATE" {
			continue
		}
		cert, err := x509.ParseCertificate(block.Bytes)
		if err != nil {
			return nil, fmt.Errorf("certificate %d does not parse: %w", len(certs)+1, err)
		}
		if len(certs) == maxChain {
			return nil, fmt.Errorf("more than %d certificates", maxChain)
		}
		certs = append(certs, cert)
	}
	if len(certs) == 0 {
		return nil, errors.New("no PEM CERTIFICATE block found")
	}
	return certs, nil
}

// bundlePEM encodes certificates one after the other.
func bundlePEM(first *x509.Certificate, rest []*x509.Certificate) []byte {
	out := certPEM(first)
	for _, c := range rest {
		out = append(out, certPEM(c)...)
	}
	return out
}

// readKeyFile parses an unencrypted private key in PKCS#8, PKCS#1 or SEC 1 PEM.
func readKeyFile(path string) (crypto.Signer, error) {
	data, err := readFileLimited(path, maxPEMFile)
	if err != nil {
		return nil, err
	}
	return parseKey(path, data)
}

// parseKey parses the first private key block of PEM data; path names the
// data in errors.
func parseKey(path string, data []byte) (crypto.Signer, error) {
	var err error
	rest := data
	for {
		var block *pem.Block
		block, rest = pem.Decode(rest)
		if block == nil {
			return nil, fmt.Errorf("%s: no PEM private key block found", path)
		}
		if strings.Contains(block.Headers["Proc-Type"], "ENCRYPTED") {
			return nil, fmt.Errorf("%s: the private key is encrypted; store it unencrypted (protected by file mode)", path)
		}
		var key any
		switch block.Type {
		case "PRIVATE KEY":
			key, err = x509.ParsePKCS8PrivateKey(block.Bytes)
		case "RSA PRIVATE KEY":
			key, err = x509.ParsePKCS1PrivateKey(block.Bytes)
		case "EC PRIVATE KEY":
			key, err = x509.ParseECPrivateKey(block.Bytes)
		case "ENCRYPTED PRIVATE KEY":
			return nil, fmt.Errorf("%s: the private key is encrypted; store it unencrypted (protected by file mode)", path)
		default:
			continue
		}
		if err != nil {
			return nil, fmt.Errorf("%s: private key does not parse: %w", path, err)
		}
		signer, ok := key.(crypto.Signer)
		if !ok {
			return nil, fmt.Errorf("%s: unsupported private key type %T", path, key)
		}
		return signer, nil
	}
}

// keyPEM encodes a private key as PKCS#8 PEM.
func keyPEM(key crypto.Signer) ([]byte, error) {
	der, err := x509.MarshalPKCS8PrivateKey(key)
	if err != nil {
		return nil, fmt.Errorf("encode private key: %w", err)
	}
	return pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: der}), nil
}

func certPEM(cert *x509.Certificate) []byte {
	return pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: cert.Raw})
}

// publicKeysEqual reports whether a certificate's public key belongs to key.
func publicKeysEqual(cert *x509.Certificate, key crypto.Signer) bool {
	type equaler interface{ Equal(crypto.PublicKey) bool }
	switch pub := key.Public().(type) {
	case *rsa.PublicKey, *ecdsa.PublicKey, ed25519.PublicKey:
		return pub.(equaler).Equal(cert.PublicKey)
	default:
		return false
	}
}
