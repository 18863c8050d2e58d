package pki

// The client key's PKCS#12 friendlyName. TAK clients import the client .p12
// into a key store whose entry name (Android's BouncyCastle PKCS12 store,
// Windows' certificate store) is the key bag's friendlyName attribute; without
// one the entry is named after a hash. go-pkcs12 writes no friendlyName on
// key bags, so withKeyFriendlyName adds it to the file it produced (RFC 7292):
//
//	PFX { version, authSafe ContentInfo{data, [0] OCTET STRING AuthenticatedSafe}, macData }
//	AuthenticatedSafe = SEQUENCE OF ContentInfo  (certificates encrypted; the key in a plain data one)
//	SafeContents = SEQUENCE OF SafeBag{bagId, [0] bagValue, SET OF attributes}
//
// The key bag is a pkcs8ShroudedKeyBag in the unencrypted SafeContents, so
// adding an attribute changes no ciphertext; the MAC over AuthenticatedSafe
// is then recomputed with the password (HMAC-SHA1, key from the PKCS#12 key
// derivation of RFC 7292 appendix B with ID 3).

import (
	"bytes"
	"crypto/hmac"
	"crypto/sha1"
	encasn1 "encoding/asn1"
	"errors"
	"fmt"
	"sort"
	"unicode/utf16"

	"golang.org/x/crypto/cryptobyte"
	"golang.org/x/crypto/cryptobyte/asn1"
)

var (
	oidData            = encasn1.ObjectIdentifier{1, 2, 840, 113549, 1, 7, 1}
	oidShroudedKeyBag  = encasn1.ObjectIdentifier{1, 2, 840, 113549, 1, 12, 10, 1, 2}
	oidFriendlyNameAtt = encasn1.ObjectIdentifier{1, 2, 840, 113549, 1, 9, 20}
	oidSHA1            = encasn1.ObjectIdentifier{1, 3, 14, 3, 2, 26}
)

var errP12Layout = errors.New("unexpected PKCS#12 layout")

// withKeyFriendlyName returns pfx with friendlyName name on every shrouded
// key bag of its unencrypted SafeContents and the MAC recomputed.
func withKeyFriendlyName(pfx []byte, password, name string) ([]byte, error) {
	in := cryptobyte.String(pfx)
	var (
		body, authSafe, authSafeCI, ciContent, macData cryptobyte.String
		version                                        int64
		ctype                                          encasn1.ObjectIdentifier
		authBytes                                      []byte
	)
	if !in.ReadASN1(&body, asn1.SEQUENCE) || !in.Empty() ||
		!body.ReadASN1Integer(&version) ||
		!body.ReadASN1(&authSafeCI, asn1.SEQUENCE) ||
		!authSafeCI.ReadASN1ObjectIdentifier(&ctype) || !ctype.Equal(oidData) ||
		!authSafeCI.ReadASN1(&ciContent, asn1.Tag(0).Constructed().ContextSpecific()) ||
		!ciContent.ReadASN1Bytes(&authBytes, asn1.OCTET_STRING) ||
		!body.ReadASN1(&macData, asn1.SEQUENCE) || !body.Empty() {
		return nil, fmt.Errorf("friendlyName: %w", errP12Layout)
	}
	authSafe = cryptobyte.String(authBytes)
	var cis cryptobyte.String
	if !authSafe.ReadASN1(&cis, asn1.SEQUENCE) || !authSafe.Empty() {
		return nil, fmt.Errorf("friendlyName: %w", errP12Layout)
	}
	var newCIs [][]byte
	found := false
	for !cis.Empty() {
		var ci cryptobyte.String
		var raw cryptobyte.String
		if !cis.ReadASN1Element(&raw, asn1.SEQUENCE) {
			return nil, fmt.Errorf("friendlyName: %w", errP12Layout)
		}
		ci = raw
		var inner, explicit cryptobyte.String
		var oid encasn1.ObjectIdentifier
		var safeBytes []byte
		if !ci.ReadASN1(&inner, asn1.SEQUENCE) || !inner.ReadASN1ObjectIdentifier(&oid) {
			return nil, fmt.Errorf("friendlyName: %w", errP12Layout)
		}
		if !oid.Equal(oidData) {
			newCIs = append(newCIs, raw) // the encrypted certificates: unchanged
			continue
		}
		if !inner.ReadASN1(&explicit, asn1.Tag(0).Constructed().ContextSpecific()) ||
			!explicit.ReadASN1Bytes(&safeBytes, asn1.OCTET_STRING) {
			return nil, fmt.Errorf("friendlyName: %w", errP12Layout)
		}
		newSafe, n, err := nameKeyBags(safeBytes, name)
		if err != nil {
			return nil, err
		}
		found = found || n > 0
		var b cryptobyte.Builder
		b.AddASN1(asn1.SEQUENCE, func(b *cryptobyte.Builder) {
			b.AddASN1ObjectIdentifier(oidData)
			b.AddASN1(asn1.Tag(0).Constructed().ContextSpecific(), func(b *cryptobyte.Builder) {
				b.AddASN1OctetString(newSafe)
			})
		})
		enc, err := b.Bytes()
		if err != nil {
			return nil, fmt.Errorf("friendlyName: %w", err)
		}
		newCIs = append(newCIs, enc)
	}
	if !found {
		return nil, fmt.Errorf("friendlyName: no key bag: %w", errP12Layout)
	}
	var ab cryptobyte.Builder
	ab.AddASN1(asn1.SEQUENCE, func(b *cryptobyte.Builder) {
		for _, ci := range newCIs {
			b.AddBytes(ci)
		}
	})
	newAuth, err := ab.Bytes()
	if err != nil {
		return nil, fmt.Errorf("friendlyName: %w", err)
	}
	newMac, err := recomputeMAC(macData, newAuth, password)
	if err != nil {
		return nil, err
	}
	var out cryptobyte.Builder
	out.AddASN1(asn1.SEQUENCE, func(b *cryptobyte.Builder) {
		b.AddASN1Int64(version)
		b.AddASN1(asn1.SEQUENCE, func(b *cryptobyte.Builder) {
			b.AddASN1ObjectIdentifier(oidData)
			b.AddASN1(asn1.Tag(0).Constructed().ContextSpecific(), func(b *cryptobyte.Builder) {
				b.AddASN1OctetString(newAuth)
			})
		})
		b.AddBytes(newMac)
	})
	return out.Bytes()
}

// nameKeyBags adds the friendlyName attribute to every shrouded key bag of
// a SafeContents and reports how many it named.
func nameKeyBags(safe []byte, name string) ([]byte, int, error) {
	s := cryptobyte.String(safe)
	var bags cryptobyte.String
	if !s.ReadASN1(&bags, asn1.SEQUENCE) || !s.Empty() {
		return nil, 0, fmt.Errorf("friendlyName: %w", errP12Layout)
	}
	attr, err := friendlyNameAttribute(name)
	if err != nil {
		return nil, 0, err
	}
	var out [][]byte
	named := 0
	for !bags.Empty() {
		var raw, bag, value cryptobyte.String
		var oid encasn1.ObjectIdentifier
		if !bags.ReadASN1Element(&raw, asn1.SEQUENCE) {
			return nil, 0, fmt.Errorf("friendlyName: %w", errP12Layout)
		}
		bag = raw
		if !bag.ReadASN1(&bag, asn1.SEQUENCE) || !bag.ReadASN1ObjectIdentifier(&oid) {
			return nil, 0, fmt.Errorf("friendlyName: %w", errP12Layout)
		}
		if !oid.Equal(oidShroudedKeyBag) {
			out = append(out, raw)
			continue
		}
		if !bag.ReadASN1Element(&value, asn1.Tag(0).Constructed().ContextSpecific()) {
			return nil, 0, fmt.Errorf("friendlyName: %w", errP12Layout)
		}
		// Keep every attribute but an old friendlyName, add ours, and sort
		// the SET OF as DER wants.
		attrs := [][]byte{attr}
		if !bag.Empty() {
			var set cryptobyte.String
			if !bag.ReadASN1(&set, asn1.SET) || !bag.Empty() {
				return nil, 0, fmt.Errorf("friendlyName: %w", errP12Layout)
			}
			for !set.Empty() {
				var a, probe cryptobyte.String
				var aoid encasn1.ObjectIdentifier
				if !set.ReadASN1Element(&a, asn1.SEQUENCE) {
					return nil, 0, fmt.Errorf("friendlyName: %w", errP12Layout)
				}
				probe = a
				if probe.ReadASN1(&probe, asn1.SEQUENCE) && probe.ReadASN1ObjectIdentifier(&aoid) && aoid.Equal(oidFriendlyNameAtt) {
					continue
				}
				attrs = append(attrs, a)
			}
		}
		sort.Slice(attrs, func(i, j int) bool { return bytes.Compare(attrs[i], attrs[j]) < 0 })
		var b cryptobyte.Builder
		b.AddASN1(asn1.SEQUENCE, func(b *cryptobyte.Builder) {
			b.AddASN1ObjectIdentifier(oid)
			b.AddBytes(value)
			b.AddASN1(asn1.SET, func(b *cryptobyte.Builder) {
				for _, a := range attrs {
					b.AddBytes(a)
				}
			})
		})
		enc, err := b.Bytes()
		if err != nil {
			return nil, 0, fmt.Errorf("friendlyName: %w", err)
		}
		out = append(out, enc)
		named++
	}
	var b cryptobyte.Builder
	b.AddASN1(asn1.SEQUENCE, func(b *cryptobyte.Builder) {
		for _, bag := range out {
			b.AddBytes(bag)
		}
	})
	enc, err := b.Bytes()
	return enc, named, err
}

// friendlyNameAttribute is SEQUENCE { friendlyName OID, SET { BMPString } }.
func friendlyNameAttribute(name string) ([]byte, error) {
	bmp, err := bmpString(name, false)
	if err != nil {
		return nil, err
	}
	var b cryptobyte.Builder
	b.AddASN1(asn1.SEQUENCE, func(b *cryptobyte.Builder) {
		b.AddASN1ObjectIdentifier(oidFriendlyNameAtt)
		b.AddASN1(asn1.SET, func(b *cryptobyte.Builder) {
			b.AddASN1(asn1.Tag(30), func(b *cryptobyte.Builder) { b.AddBytes(bmp) }) // BMPString
		})
	})
	return b.Bytes()
}

// bmpString is s in UTF-16 big-endian, with the two-zero-byte terminator
// PKCS#12 passwords carry when terminated is true. Characters outside the
// Basic Multilingual Plane are refused (BMPString cannot hold them).
func bmpString(s string, terminated bool) ([]byte, error) {
	out := make([]byte, 0, 2*len(s)+2)
	for _, r := range s {
		if r > 0xFFFF {
			return nil, fmt.Errorf("friendlyName: %q has a character outside the Basic Multilingual Plane", s)
		}
		u := utf16.Encode([]rune{r})[0]
		out = append(out, byte(u>>8), byte(u))
	}
	if terminated {
		out = append(out, 0, 0)
	}
	return out, nil
}

// recomputeMAC returns a MacData for authSafe with the salt and iteration
// count of the old one (HMAC-SHA1 only: what the LegacyDES encoder writes).
func recomputeMAC(old cryptobyte.String, authSafe []byte, password string) ([]byte, error) {
	var digestInfo, alg cryptobyte.String
	var oid encasn1.ObjectIdentifier
	var oldDigest, salt []byte
	iter := int64(1)
	if !old.ReadASN1(&digestInfo, asn1.SEQUENCE) ||
		!digestInfo.ReadASN1(&alg, asn1.SEQUENCE) || !alg.ReadASN1ObjectIdentifier(&oid) ||
		!digestInfo.ReadASN1Bytes(&oldDigest, asn1.OCTET_STRING) ||
		!old.ReadASN1Bytes(&salt, asn1.OCTET_STRING) {
		return nil, fmt.Errorf("friendlyName: MAC: %w", errP12Layout)
	}
	if !old.Empty() && !old.ReadASN1Integer(&iter) {
		return nil, fmt.Errorf("friendlyName: MAC: %w", errP12Layout)
	}
	if !oid.Equal(oidSHA1) {
		return nil, fmt.Errorf("friendlyName: MAC algorithm %v is not HMAC-SHA1", oid)
	}
	if iter < 1 || iter > 10_000_000 {
		return nil, fmt.Errorf("friendlyName: MAC iteration count %d", iter)
	}
	pw, err := bmpString(password, true)
	if err != nil {
		return nil, err
	}
	key := pkcs12KDF(pw, salt, 3, int(iter), sha1.Size)
	m := hmac.New(sha1.New, key)
	m.Write(authSafe)
	digest := m.Sum(nil)
	var b cryptobyte.Builder
	b.AddASN1(asn1.SEQUENCE, func(b *cryptobyte.Builder) {
		b.AddASN1(asn1.SEQUENCE, func(b *cryptobyte.Builder) {
			b.AddASN1(asn1.SEQUENCE, func(b *cryptobyte.Builder) {
				b.AddASN1ObjectIdentifier(oidSHA1)
				b.AddASN1NULL()
			})
			b.AddASN1OctetString(digest)
		})
		b.AddASN1OctetString(salt)
		b.AddASN1Int64(iter)
	})
	return b.Bytes()
}

// pkcs12KDF is the key derivation of RFC 7292 appendix B.2 with SHA-1
// (u = 20, v = 64): id 3 derives MAC keys.
func pkcs12KDF(password, salt []byte, id byte, iterations, size int) []byte {
	const u, v = sha1.Size, 64
	fill := func(src []byte) []byte {
		if len(src) == 0 {
			return nil
		}
		out := make([]byte, v*((len(src)+v-1)/v))
		for i := range out {
			out[i] = src[i%len(src)]
		}
		return out
	}
	d := bytes.Repeat([]byte{id}, v)
	in := append(fill(salt), fill(password)...)
	var out []byte
	for len(out) < size {
		h := sha1.New()
		h.Write(d)
		h.Write(in)
		a := h.Sum(nil)
		for r := 1; r < iterations; r++ {
			s := sha1.Sum(a)
			a = s[:]
		}
		out = append(out, a...)
		if len(out) >= size {
			break
		}
		// I_j = (I_j + B + 1) mod 2^(8v) for every v-byte block, B = A repeated.
		b := make([]byte, v)
		for i := range b {
			b[i] = a[i%u]
		}
		for j := 0; j < len(in); j += v {
			carry := 1
			for k := v - 1; k >= 0; k-- {
				sum := int(in[j+k]) + int(b[k]) + carry
				in[j+k] = byte(sum)
				carry = sum >> 8
			}
		}
	}
	return out[:size]
}
