// Package pki owns Outpost's certificate authority and everything built on it:
//
//   - the CA, the server certificate and their files under certsPath, with the
//     spec's file names (api.md §5.12); the CA is made on the first start or
//     imported (import.go: an organisation's root, or an intermediate whose
//     chain up to the root ca.pem keeps after it, which the listeners send and
//     truststores and enrollment answers carry); Inspect reads them for
//     `outpost doctor` without changing anything;
//   - client certificates (issued here or signed from an enrollment CSR) and
//     their PKCS#12 containers;
//   - the revocation list: the JSON file of api.md §2.15 is the source of truth,
//     a signed X.509 CRL is derived from it, and revoked client certificates are
//     refused during the TLS handshake on 8089 and 8443 (api.md §5.8, §5.11);
//   - the tls.Config values for the mutual-TLS listeners and for enrollment,
//     and a listener wrapper that runs each TLS handshake in its own goroutine
//     under the WRAP_SSL_TIMEOUT deadline (api.md §8);
//   - client connection packages (data packages) for ATAK, iTAK and WinTAK, with
//     or without a client certificate (protocol.md §9), and the user-creation call that
//     issues a certificate and stores its package (api.md §5.10).
//
// Imports: the standard library, golang.org/x/crypto and
// software.sslmate.com/src/go-pkcs12 only. No other package of this module.
//
// # Files
//
// Every file is written atomically (temporary file, fsync, rename). Private keys
// and anything that contains one (server.key, server.key.unencrypted, ca.key,
// server.p12, client .key/.p12 files and client packages) are written with mode
// 0600, the certificate directory is created 0700. server.key and
// server.key.unencrypted hold the same unencrypted PKCS#8 PEM: the standard
// library has no writer for encrypted PKCS#8, so these files are protected by
// their file mode and the directory mode, not by a passphrase. The two names are
// kept because the spec's configuration names both.
//
// Open reads what exists and writes only what is missing or no longer
// current (a server certificate that expired or lacks a configured name,
// crl.pem when keepCRLPEM finds it stale), so a start on a full disk writes
// nothing. A crl.pem it cannot write is logged, never fatal; so is a server
// certificate for a new name while the current one is valid (the key,
// certificate and .p12 are written as one set, atomicfile.WriteAll, so a
// failure leaves the old ones matching).
//
// Files shared with a second process (the `outpost cert` CLI acting on a running
// appliance's data) - crl.json and issued.json - are changed by
// lock-file + re-read + modify + atomic rename, so both processes can revoke and
// issue without losing each other's changes.
//
// # PKCS#12
//
// Every .p12 this package writes uses go-pkcs12's LegacyDES encoder: keys and
// certificates encrypted with PBE-SHA1-3DES, HMAC-SHA1 MAC. That is the one
// combination that ATAK (Android's BouncyCastle KeyStore), iTAK (iOS
// SecPKCS12Import), WinTAK (.NET/Windows CryptoAPI) and OpenSSL 3 (without
// -legacy) all open. The AES/PBES2 "modern" encoding is refused by older iOS
// and Android releases; RC2 (the other legacy choice) needs OpenSSL's legacy
// provider. The price is weak file encryption, so the files are protected by
// their mode and by the per-installation password the caller generates.
//
// Comments cite the interface as "api.md §N.N" (docs/api.md) and the TAK wire
// protocol as "protocol.md §N" (docs/protocol.md).
package pki
