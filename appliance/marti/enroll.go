package marti

// Certificate enrollment (protocol.md §8): the HTTPS listener, by convention on port
// 8446, where ATAK's and iTAK's "quick connect" trade a user name, a password
// and a CSR for a client certificate. Sources of fact (facts only, nothing
// copied):
//
//   - TAK Server: CertManagerApi.java and CertManagerService.java
//     (TAK-Product-Center/Server, src/takserver-core/takserver-war/.../com/bbn/tak/tls/)
//     and CoreConfig.xsd (src/takserver-common/src/main/xsd/). GET /tls/config
//     marshals certificateConfig (only a nameEntries child of nameEntry
//     name/value pairs) under the root QName ("com.bbn.marti.config",
//     "certificateConfig"); POST /tls/signClient answers a PKCS#12 of
//     certificate entries "signedCert", "ca0", "ca1", ... with the password
//     "atakatak"; POST /tls/signClient/v2 answers JSON {"signedCert", "ca0",
//     ...} when Accept is absent, empty, */* or application/json (checked in
//     that order), <enrollment><signedCert/><ca/>...</enrollment> when it
//     contains application/xml, 400 otherwise. Certificates are base64 DER in
//     64-column lines without the PEM armour (Util.certToPEM(cert, false)).
//     The CSR arrives as the body, PEM armour optional.
//   - ATAK-CIV 5.5 commoncommo/core/impl/enrollmentmanager.cpp (mirrored in
//     hotelzululima/atak-civ-5.5): GET config (root element certificateConfig,
//     child nameEntries; CSR subject = CN=<user> then each nameEntry), then POST
//     signClient/v2?clientUid=<uid>&version=<v> with Basic auth, "Accept:
//     application/xml", "Content-Type: application/octet-stream" and the PEM
//     CSR minus its armour lines. Only 200 is success, 401 is an auth error.
//     Every child node of <enrollment> other than signedCert is read as a CA
//     certificate, text nodes included, so the XML answer has no whitespace.
//   - iOS clients: flighttactics/TAKTracker CSRRequestor.swift accepts the
//     config only as text/plain and the v2 answer as application/json or
//     text/plain, and trusts every "ca*" key; brian7704/OpenTAKServer
//     certificate_enrollment_api.py answers iTAK with JSON holding ca0 and ca1,
//     takes the CSR with or without armour and the uid as clientUid or
//     clientUID; kdudkov/goatak cert_api.go notes "iTAK needs server cert in
//     answer" and sends it as a caN entry.
//   - dfpc-coe/node-tak lib/api/credentials.ts and lib/api.ts (CloudTAK): the
//     config root must literally be "ns2:certificateConfig" with at least two
//     nameEntry elements; JSON is recognised only by a Content-Type of exactly
//     "application/json"; ca0 and ca1 are read.

import (
	"crypto/rand"
	"crypto/x509"
	"encoding/base64"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"net/netip"
	"strings"
	"time"

	"outpost/appliance/access"
	"outpost/appliance/httpapi"
	"outpost/appliance/logx"
	"outpost/appliance/pki"
	"outpost/appliance/qr"
	"outpost/appliance/store"
)

// EnrollOptions configure the enrollment handler.
type EnrollOptions struct {
	Authority *pki.Authority
	Accounts  EnrollAccountStore // stores.go
	// Guard budgets the password checks (access.md "Password guesses cost
	// the guesser"); nil: a guard of the defaults.
	Guard  *access.Guard
	Logger *slog.Logger
	// KeystorePassword protects the PKCS#12 answers of signClient (v1); empty
	// means the TAK convention "atakatak".
	KeystorePassword string
	// Now is the handler's clock (tests); default time.Now.
	Now func() time.Time
	// TokenKey signs the access tokens of POST /oauth/token (HS256; the
	// generated secret enrollTokenKey); empty: a random key of this
	// process (tokens die with it).
	TokenKey []byte
}

// Limits of the enrollment handler.
const (
	enrollRealm       = `Basic realm="Outpost enrollment"`
	enrollMaxBody     = 64 << 10   // a CSR is 1-2 KiB; 64 KiB leaves room for RSA 8192 in PEM
	defaultKeystorePW = "atakatak" // CertManagerApi.DEFAULT_PASSWORD
)

// NewEnrollmentHandler returns the handler of the enrollment listener
// (protocol.md §8). Every route needs HTTP Basic credentials of a system
// user; the listener must be TLS (Authority.EnrollmentTLSConfig): a request that did not
// arrive over TLS is refused before its credentials are checked.
//
//	GET  /Marti/api/tls/config              certificateConfig XML (O and OU for the CSR subject)
//	POST /Marti/api/tls/signClient          CSR -> PKCS#12 (signedCert, ca0), KeystorePassword
//	POST /Marti/api/tls/signClient/v2       CSR -> JSON {signedCert, ca0, ca1} or XML <enrollment>
//	GET  /Marti/api/tls/profile/enrollment  204: no enrollment profile is configured
//	GET  /Marti/api/tls/config/qr           PNG of iTAK's server code (no credential in it)
//	GET  /Marti/api/tls/enrollment-package  the enrollment-only package (?device=, default wintak)
//	POST /oauth/token                       password login of TAK libraries: a JWT (enroll_oauth.go)
//
// The four GET routes also take that JWT instead of Basic credentials
// (Authorization: Bearer, or the cookie access_token); the signing routes
// never do.
//
// The password may be an enrollment invitation's token of that user
// (protocol.md §8 "Enrolling with an invitation"): accepted by every route,
// spent (one use) only when a certificate is signed.
//
// The certificate's CN is always the authenticated user's name, whatever the
// CSR's subject says. Every password check passes the password guard
// (access.md "Password guesses cost the guesser"): a refusal is 429 with
// Retry-After. Every route is registered with the rule access.Password
// (access.md "Route matrix"); the handler checks the credentials itself.
func NewEnrollmentHandler(opts EnrollOptions) *EnrollmentHandler {
	if opts.Logger == nil {
		opts.Logger = slog.Default()
	}
	if opts.Now == nil {
		opts.Now = time.Now
	}
	if opts.KeystorePassword == "" {
		opts.KeystorePassword = defaultKeystorePW
	}
	if opts.Guard == nil {
		opts.Guard = access.NewGuard(access.GuardOptions{Now: opts.Now})
	}
	h := &EnrollmentHandler{
		opts: opts,
		log:  opts.Logger.With("component", "enroll"),
	}
	h.busyLog = logx.NewLimiter(h.log, 5, 10*time.Second)
	h.mux = httpapi.NewMux(h.log)
	h.tokenKey = opts.TokenKey
	if len(h.tokenKey) == 0 {
		h.tokenKey = make([]byte, 32)
		if _, err := rand.Read(h.tokenKey); err != nil {
			h.log.Error("no key for access tokens", "err", err)
			h.notConfigured()
			return h
		}
	}
	if opts.Authority == nil || opts.Accounts == nil {
		h.log.Error("enrollment handler has no certificate authority or no store; every request fails")
		h.notConfigured()
		return h
	}
	h.configXML = certificateConfigXML(opts.Authority)
	h.rules = access.NewRoutes(h.mux)
	for _, rt := range []struct {
		method, path string
		serve        enrollRoute
		token        bool // an access token is accepted (read-only routes)
	}{
		{http.MethodGet, "/Marti/api/tls/config", h.config, true},
		{http.MethodPost, "/Marti/api/tls/signClient", h.signClientV1, false},
		{http.MethodPost, "/Marti/api/tls/signClient/v2", h.signClientV2, false},
		{http.MethodGet, "/Marti/api/tls/profile/enrollment", h.profileEnrollment, true},
		{http.MethodGet, "/Marti/api/tls/config/qr", h.configQR, true},
		{http.MethodGet, qr.EnrollmentPackagePath, h.enrollmentPackage, true},
	} {
		// A trailing slash is a spelling some servers accept; GET also
		// answers HEAD (ServeMux).
		h.handle(rt.method+" "+rt.path, h.authenticated(rt.serve, rt.token))
		h.handle(rt.method+" "+rt.path+"/{$}", h.authenticated(rt.serve, rt.token))
	}
	// The handler checks the credentials itself (username and password).
	h.handle(http.MethodPost+" "+OAuthTokenPath, h.oauthToken)
	return h
}

// handle registers an enrollment route under the rule access.Password
// (access.md "Route matrix"), its failures answered by enrollEdge.
func (h *EnrollmentHandler) handle(pattern string, f httpapi.HandlerFunc) {
	h.rules.Handle(pattern, access.Password, enrollEdge(f))
}

// errNotConfigured is the failure of every request to an enrollment
// handler without a certificate authority, a store or a token key.
var errNotConfigured = errors.New("enrollment is not configured (no certificate authority, store or token key)")

// notConfigured makes every request fail with 500 (no route is served).
func (h *EnrollmentHandler) notConfigured() {
	h.mux.Handle("/", httpapi.HandlerFunc(func(w http.ResponseWriter, r *http.Request) error {
		return httpapi.Internal(errNotConfigured, "enrollment is not configured on this server")
	}))
}

// EnrollmentHandler is the enrollment listener's handler.
type EnrollmentHandler struct {
	opts      EnrollOptions
	log       *slog.Logger
	busyLog   *logx.Limiter // "too many password checks" and refusal lines
	configXML []byte
	tokenKey  []byte         // HS256 key of the access tokens
	mux       *httpapi.Mux   // every route, or the one failure when enrollment is not configured
	rules     *access.Routes // every route with its rule; nil when enrollment is not configured
}

// Routes are the enrollment routes with their rules (the matrix test); nil
// when enrollment is not configured (no route is served).
func (h *EnrollmentHandler) Routes() *access.Routes { return h.rules }

// enrollCall is one authenticated request.
type enrollCall struct {
	user   store.User
	remote string // client address (no port)
	uid    string // clientUid query parameter, clipped for logs
	// invitation is the id of the invitation whose token was the password
	// ("" for the user's password): signing spends one of its uses.
	invitation string
}

func (h *EnrollmentHandler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	w.Header().Set("Cache-Control", "no-store")
	h.mux.ServeHTTP(w, r)
}

// config answers the certificateConfig document (protocol.md §8). Content type: the
// official server leaves it to Spring's negotiation, which gives text/plain
// to "*/*" or no Accept (TAKTracker accepts nothing else) and application/xml
// to an explicit XML Accept; ATAK reads the body whatever the type.
func (h *EnrollmentHandler) config(w http.ResponseWriter, r *http.Request, c *enrollCall) error {
	ct := "text/plain; charset=utf-8"
	switch accept := strings.ToLower(r.Header.Get("Accept")); {
	case strings.Contains(accept, "application/xml"):
		ct = "application/xml; charset=utf-8"
	case strings.Contains(accept, "text/xml"):
		ct = "text/xml; charset=utf-8"
	}
	w.Header().Set("Content-Type", ct)
	w.WriteHeader(http.StatusOK)
	w.Write(h.configXML)
	return nil
}

// profileEnrollment: ATAK asks after enrolling whether the server has a
// device profile (a mission package) for it; 204 means none and is not an
// error for the client. Outpost has no profile store yet.
func (h *EnrollmentHandler) profileEnrollment(w http.ResponseWriter, r *http.Request, c *enrollCall) error {
	h.log.Debug("enrollment profile requested", "user", logx.Clip(c.user.Name), "client_uid", c.uid, "remote", c.remote, "result", "none configured")
	w.WriteHeader(http.StatusNoContent)
	return nil
}

// signClientV1 answers the signed certificate and the CA as a PKCS#12 of
// certificate entries "signedCert" and "ca0" (no private key: it never left
// the client), protected with KeystorePassword.
func (h *EnrollmentHandler) signClientV1(w http.ResponseWriter, r *http.Request, c *enrollCall) error {
	cert, err := h.sign(w, r, c, "pkcs12")
	if err != nil {
		return err
	}
	p12, err := h.opts.Authority.KeyStoreP12(cert, h.opts.KeystorePassword)
	if err != nil {
		return ours(err, "the keystore could not be built", fmt.Sprintf("the keystore of %s's certificate %s (client uid %s)",
			logx.Clip(c.user.Name), cert.SerialNumber, c.uid))
	}
	w.Header().Set("Content-Type", "application/x-pkcs12")
	w.WriteHeader(http.StatusOK)
	w.Write(p12)
	return nil
}

// signClientV2 answers JSON or XML by Accept (see enrollFormat), decided
// before signing so that no certificate is issued for an answer that cannot
// be given.
func (h *EnrollmentHandler) signClientV2(w http.ResponseWriter, r *http.Request, c *enrollCall) error {
	format, ok := negotiateEnrollment(r.Header.Get("Accept"))
	if !ok {
		h.log.Warn("enrollment failed", "user", logx.Clip(c.user.Name), "remote", c.remote, "reason", "unsupported Accept", "accept", logx.Clip(r.Header.Get("Accept")))
		return httpapi.Errorf(http.StatusNotAcceptable, "Accept must allow application/json, application/xml or text/plain")
	}
	cert, err := h.sign(w, r, c, format.name)
	if err != nil {
		return err
	}
	chain := h.opts.Authority.CAChain()
	var body []byte
	if format.xml {
		body = enrollmentXML(cert, chain)
	} else {
		var err error
		body, err = enrollmentJSON(cert, chain, serverLeaf(h.opts.Authority))
		if err != nil {
			return ours(err, "the answer could not be built", fmt.Sprintf("the answer to %s's enrollment (certificate %s, client uid %s)",
				logx.Clip(c.user.Name), cert.SerialNumber, c.uid))
		}
	}
	w.Header().Set("Content-Type", format.contentType)
	w.WriteHeader(http.StatusOK)
	w.Write(body)
	return nil
}

// sign reads and checks the CSR and signs it for the authenticated user.
// Every refusal is logged ("enrollment failed") before it is returned; a
// certificate the authority could not sign is a fault of ours.
func (h *EnrollmentHandler) sign(w http.ResponseWriter, r *http.Request, c *enrollCall, format string) (*x509.Certificate, error) {
	user := logx.Clip(c.user.Name)
	refuse := func(refusal error, reason string, err error) (*x509.Certificate, error) {
		status, _, _ := httpapi.Refusal(refusal)
		level := slog.LevelWarn
		if status >= 500 {
			level = slog.LevelError
		}
		attrs := []any{"user", user, "client_uid", c.uid, "remote", c.remote, "reason", reason}
		if err != nil {
			attrs = append(attrs, "err", err)
		}
		h.log.Log(r.Context(), level, "enrollment failed", attrs...)
		return nil, refusal
	}
	fail := func(status int, reason string, err error) (*x509.Certificate, error) {
		return refuse(httpapi.Errorf(status, "%s", reason), reason, err)
	}
	body, err := readLimited(w, r, enrollMaxBody)
	if err != nil {
		var tooLarge *http.MaxBytesError
		if errors.As(err, &tooLarge) {
			return fail(http.StatusRequestEntityTooLarge, fmt.Sprintf("the request body is larger than %d bytes", enrollMaxBody), nil)
		}
		return fail(http.StatusBadRequest, "the request body could not be read", err)
	}
	csr, err := parseCSR(body)
	if err != nil {
		return fail(http.StatusBadRequest, err.Error(), nil)
	}
	if err := checkCSR(csr); err != nil {
		return fail(http.StatusBadRequest, err.Error(), nil)
	}
	if c.invitation != "" {
		// One use is spent before signing: of two requests racing for an
		// invitation's last use, one gets a certificate, the other 401.
		if err := h.opts.Accounts.SpendEnrollInvitation(r.Context(), c.invitation, h.opts.Now()); err != nil {
			if errors.Is(err, store.ErrBadCredentials) {
				return refuse(challenge("bad user name or password"), "bad user name or password",
					errors.New("the invitation was used up, revoked or expired meanwhile"))
			}
			return refuse(errCannotCheck, "credentials cannot be checked right now", err)
		}
	}
	cert, err := h.opts.Authority.SignCSR(csr, c.user.Name)
	if err != nil {
		return nil, ours(err, "the certificate could not be signed", fmt.Sprintf("signing a certificate for %s (client uid %s)", user, c.uid))
	}
	h.log.Info("client certificate enrolled", "user", user, "client_uid", c.uid, "invitation", c.invitation,
		"version", logx.Clip(r.URL.Query().Get("version")), "serial", cert.SerialNumber.String(),
		"remote", c.remote, "format", format, "not_after", cert.NotAfter)
	return cert, nil
}

// enrollFormat is the shape of a signClient/v2 answer.
type enrollFormat struct {
	name        string // for the log
	contentType string
	xml         bool
}

// negotiateEnrollment follows CertManagerApi.signClientCertV2: no Accept, an
// empty one, */* or application/json gives JSON (checked first, so ATAK's
// "application/xml" alone is the XML case and a browser-style list gets JSON);
// application/xml (or text/xml) gives XML. Beyond the official server,
// text/plain gives the JSON body labelled text/plain, as OpenTAKServer does
// for iTAK. Anything else is not acceptable (the official server says 400).
func negotiateEnrollment(accept string) (enrollFormat, bool) {
	a := strings.ToLower(strings.TrimSpace(accept))
	switch {
	case a == "", strings.Contains(a, "*/*"), strings.Contains(a, "application/json"):
		return enrollFormat{name: "json", contentType: "application/json"}, true
	case strings.Contains(a, "application/xml"):
		return enrollFormat{name: "xml", contentType: "application/xml; charset=utf-8", xml: true}, true
	case strings.Contains(a, "text/xml"):
		return enrollFormat{name: "xml", contentType: "text/xml; charset=utf-8", xml: true}, true
	case strings.Contains(a, "text/plain"), strings.Contains(a, "text/*"):
		return enrollFormat{name: "json-as-text", contentType: "text/plain; charset=utf-8"}, true
	}
	return enrollFormat{}, false
}

// serverLeaf is the server certificate iTAK wants beside the CA (protocol.md §8).
func serverLeaf(a *pki.Authority) *x509.Certificate {
	sc := a.ServerCertificate()
	if sc.Leaf != nil {
		return sc.Leaf
	}
	if len(sc.Certificate) == 0 {
		return nil
	}
	leaf, err := x509.ParseCertificate(sc.Certificate[0])
	if err != nil {
		return nil
	}
	return leaf
}

// certBase64 is Util.certToPEM(cert, false) of TAK Server: base64 DER in
// lines of 64 characters, no armour. No newline follows the last line
// (clients add the footer themselves and some tolerate no blank line).
func certBase64(cert *x509.Certificate) string {
	s := base64.StdEncoding.EncodeToString(cert.Raw)
	var b strings.Builder
	b.Grow(len(s) + len(s)/64)
	for len(s) > 64 {
		b.WriteString(s[:64])
		b.WriteByte('\n')
		s = s[64:]
	}
	b.WriteString(s)
	return b.String()
}

// clientUID reads the client's uid: clientUid (TAK Server, ATAK), or
// clientUID (TAKTracker, per OpenTAKServer's handler).
func clientUID(r *http.Request) string {
	q := r.URL.Query()
	if v := q.Get("clientUid"); v != "" {
		return v
	}
	return q.Get("clientUID")
}

// clientAddr is the client's IP address without the port, IPv4-mapped IPv6
// addresses unmapped, so one host is one key of the password guard.
func clientAddr(remote string) string {
	if ap, err := netip.ParseAddrPort(remote); err == nil {
		return ap.Addr().Unmap().String()
	}
	if host, _, err := net.SplitHostPort(remote); err == nil {
		return host
	}
	return remote
}
