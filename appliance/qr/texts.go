package qr

// The texts TAK clients read from a QR code. Sources of fact (facts only,
// nothing copied):
//
//   - ATAK-CIV 5.5 CotMapComponent and CertificateEnrollmentClient, as
//     restated in joshuafuller/qrtak docs/qr-formats.md and
//     docs/TAK_URL_SCHEME_REVERSE_ENGINEERING.md: ATAK's scanner accepts
//     tak://com.atakmap.app/enroll with the query parameters host, username
//     and token (read with Uri.getQueryParameter, so values are
//     percent-decoded); host may be a connect string "host:port" or
//     "host:port:quic", the port defaulting to 8089 and the protocol to ssl.
//     ATAK then enrolls on its enrollment port (8446) with username and
//     token as the Basic credentials, and connects the streaming port.
//   - brian7704/OpenTAKServer blueprints/ots_api/token_api.py builds the same
//     form (host, username, token); blueprints/ots_api/api.py serves iTAK's
//     text "OpenTAKServer_<host>,<host>,<port>,SSL".
//   - qrtak docs/qr-formats.md, its iTAK Quick Connect (CSV) section: exactly four
//     comma-separated fields description,host,port,protocol with no quoting
//     (a comma in the description breaks it), protocol ssl or tcp, case
//     insensitive; iTAK asks for the user name and password after scanning,
//     so the code carries no credential.

import (
	"net/url"
	"strconv"
	"strings"
)

// DefaultStreamPort is the streaming port ATAK assumes when an enrollment
// code's host names none.
const DefaultStreamPort = 8089

// ATAKEnroll is the text of ATAK's enrollment code: ATAK (and ATAK-CIV)
// enrolls for a certificate on host's enrollment port with user and token,
// then connects to host's streaming port over TLS. The port is written into
// host only when it is not 8089.
func ATAKEnroll(host string, streamPort int, user, token string) string {
	h := host
	if streamPort != 0 && streamPort != DefaultStreamPort {
		h += ":" + strconv.Itoa(streamPort)
	}
	// Written by hand rather than url.Values.Encode, which sorts the keys:
	// ATAK reads each by name, and people reading the text expect the
	// documented order.
	return "tak://com.atakmap.app/enroll?host=" + url.QueryEscape(h) +
		"&username=" + url.QueryEscape(user) + "&token=" + url.QueryEscape(token)
}

// ITAKQuickConnect is the text of iTAK's server code: a description, the
// host, the TLS streaming port and "SSL". iTAK then asks for the user name
// and the password (the invitation's token). Commas cannot be escaped in
// this form, so they are dropped from the description.
func ITAKQuickConnect(description, host string, streamPort int) string {
	d := strings.Map(func(r rune) rune {
		if r == ',' || r < ' ' || r == 0x7f {
			return -1
		}
		return r
	}, description)
	d = strings.TrimSpace(d)
	if d == "" {
		d = host
	}
	return d + "," + host + "," + strconv.Itoa(streamPort) + ",SSL"
}

// EnrollmentPackagePath is the enrollment port's route of the
// enrollment-only connection package (protocol.md §8): the CA truststore and
// a connection that enrolls, no private key, no credential. The client
// authenticates for it like for enrollment itself.
const EnrollmentPackagePath = "/Marti/api/tls/enrollment-package"

// PackageLink is the address of the enrollment-only package for device
// (atak, itak or wintak) on the enrollment port: what WinTAK's user opens
// (WinTAK has no scanner) and imports.
func PackageLink(host string, enrollPort int, device string) string {
	u := url.URL{Scheme: "https", Host: host + ":" + strconv.Itoa(enrollPort), Path: EnrollmentPackagePath, RawQuery: "device=" + url.QueryEscape(device)}
	return u.String()
}
