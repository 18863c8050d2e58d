package store

// Password hashing for system users: PBKDF2-HMAC-SHA256 (stdlib
// crypto/pbkdf2), a random 16-byte salt per password, stored in a
// self-describing form so the iteration count can be raised later without
// breaking old hashes:
//
//	pbkdf2-sha256$<iterations>$<salt, base64 std no padding>$<32-byte key, same>
//
// Comparison is constant-time (crypto/subtle).

import (
	"crypto/pbkdf2"
	"crypto/rand"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/base64"
	"fmt"
	"strconv"
	"strings"
)

const (
	pbkdf2Scheme     = "pbkdf2-sha256"
	pbkdf2Iterations = 210000 // OWASP 2023 figure for PBKDF2-HMAC-SHA256
	pbkdf2SaltLen    = 16
	pbkdf2KeyLen     = 32
	// A stored count above this is treated as damage, not honoured, so a
	// corrupt row cannot make a login spin for minutes.
	pbkdf2MaxIterations = 10_000_000
)

var b64 = base64.RawStdEncoding

// dummySalt is hashed against when the user is unknown, so an unknown name
// costs the same work as a wrong password.
var dummySalt = make([]byte, pbkdf2SaltLen)

func hashPassword(password string, iter int) (string, error) {
	salt := make([]byte, pbkdf2SaltLen)
	if _, err := rand.Read(salt); err != nil {
		return "", fmt.Errorf("store: password salt: %w", err)
	}
	key, err := pbkdf2.Key(sha256.New, password, salt, iter, pbkdf2KeyLen)
	if err != nil {
		return "", fmt.Errorf("store: hash password: %w", err)
	}
	return pbkdf2Scheme + "$" + strconv.Itoa(iter) + "$" + b64.EncodeToString(salt) + "$" + b64.EncodeToString(key), nil
}

// checkPassword reports whether password matches the stored hash. A stored
// value it cannot parse is an error (and never a match).
func checkPassword(stored, password string) (bool, error) {
	parts := strings.Split(stored, "$")
	if len(parts) != 4 || parts[0] != pbkdf2Scheme {
		return false, fmt.Errorf("store: stored password hash has an unknown format")
	}
	iter, err := strconv.Atoi(parts[1])
	if err != nil || iter < 1 || iter > pbkdf2MaxIterations {
		return false, fmt.Errorf("store: stored password hash has a bad iteration count")
	}
	salt, err := b64.DecodeString(parts[2])
	if err != nil || len(salt) == 0 {
		return false, fmt.Errorf("store: stored password hash has a bad salt")
	}
	want, err := b64.DecodeString(parts[3])
	if err != nil || len(want) == 0 {
		return false, fmt.Errorf("store: stored password hash has a bad key")
	}
	got, err := pbkdf2.Key(sha256.New, password, salt, iter, len(want))
	if err != nil {
		return false, fmt.Errorf("store: hash password: %w", err)
	}
	return subtle.ConstantTimeCompare(got, want) == 1, nil
}

// burnPasswordWork does the work of one verification and throws it away.
func burnPasswordWork(password string, iter int) {
	got, _ := pbkdf2.Key(sha256.New, password, dummySalt, iter, pbkdf2KeyLen)
	subtle.ConstantTimeCompare(got, got)
}
