package mgmt

// A new user's certificate package, offered to its device (api.md §5.10,
// §6.2): a user created with Certs "true" (REST or the socket.io channel)
// is sent, as FreeTAKServer does, a file-transfer request (b-f-t-r) naming
// its connection package. FreeTAKServer sends it once, at creation, to
// whichever client then carries the user's name as its callsign; Outpost
// keeps the offer until such a client is connected (over a connection:
// CoT over TCP, TLS or websocket, never a datagram) or the offer expires,
// whichever comes first, and sends it once.
//
// The package holds the user's private key and no group may read it
// (access.md "Groups"), so the request does not point at the package's
// enterprise-sync URL, which the device could not read: it carries a
// download link of its own on this port, GET /api/certpackage/{ticket},
// whose ticket is random (256 bits), lives as long as the request
// (certLinkLife), serves at most certLinkUses downloads and dies with the
// user. The request is a notification (broker.Notify): never stored in the
// history, never replayed, so the link reaches that device alone.
//
// A callsign proves nothing on the TCP port: whoever connects first under
// the user's name gets the package. api-management.md "Certificate
// packages offered to devices" says so, and that certOfferWait 0 turns the
// offer off.

import (
	"bytes"
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/xml"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/google/uuid"

	"outpost/appliance/cot"
	"outpost/appliance/httpapi"
	"outpost/appliance/logx"
	"outpost/appliance/store"
	"outpost/appliance/users"
)

// Limits of the offers.
const (
	DefaultCertOfferWait = time.Hour        // an offer waits this long for its device
	certLinkLife         = 10 * time.Minute // a sent link works this long (FreeTAKServer's stale time)
	certLinkUses         = 5                // and for this many downloads (a retry, a resumed download)
	maxCertOffers        = 256              // offers waiting at once; beyond, the oldest is dropped
	certTicketBytes      = 32
	certSenderCallsign   = "Outpost"
)

// CertOfferOptions configure the offer of certificate packages.
type CertOfferOptions struct {
	// Wait is how long an offer waits for a client with the user's
	// callsign; zero: DefaultCertOfferWait; negative: no offer is made.
	Wait time.Duration
	// Listeners are the listeners whose clients may receive an offer (the
	// connection-oriented CoT listeners); nil: any.
	Listeners []string
	// ServerUID is the sender uid of the request.
	ServerUID string
}

// certOffer is a package waiting for its device.
type certOffer struct {
	uid, name string // the user
	hostPort  string // where the device downloads it (this port)
	until     time.Time
}

// certLink is a sent download link.
type certLink struct {
	uid   string // the user
	until time.Time
	uses  int
}

// certSender keeps the offers and the links.
type certSender struct {
	a    *API
	opts CertOfferOptions
	log  *logx.Limiter

	mu     sync.Mutex // guards offers and links
	offers map[string]certOffer
	links  map[[32]byte]*certLink // by the SHA-256 of the ticket

	waiting  atomic.Int32 // len(offers), read without the lock
	checking atomic.Bool  // a check runs
	again    atomic.Bool  // clients changed while it ran
}

func newCertSender(a *API, opts CertOfferOptions) *certSender {
	if opts.Wait == 0 {
		opts.Wait = DefaultCertOfferWait
	}
	return &certSender{a: a, opts: opts, log: logx.NewLimiter(a.log, 10, time.Minute),
		offers: map[string]certOffer{}, links: map[[32]byte]*certLink{}}
}

// offer keeps u's package for its device, and looks for it at once.
func (c *certSender) offer(u users.User, hostPort string) {
	if c == nil || c.opts.Wait < 0 || c.a.opts.Broker == nil || u.CertificatePackageHash == "" {
		return
	}
	now := c.a.opts.Now()
	c.mu.Lock()
	c.pruneLocked(now)
	if len(c.offers) >= maxCertOffers {
		oldest := ""
		for uid, o := range c.offers {
			if oldest == "" || o.until.Before(c.offers[oldest].until) {
				oldest = uid
			}
		}
		c.a.log.Warn("certificate package offer dropped: too many waiting", "user", logx.Clip(c.offers[oldest].name), "max", maxCertOffers)
		delete(c.offers, oldest)
	}
	c.offers[u.UID] = certOffer{uid: u.UID, name: u.Name, hostPort: hostPort, until: now.Add(c.opts.Wait)}
	c.waiting.Store(int32(len(c.offers)))
	c.mu.Unlock()
	c.clientsChanged()
}

// withdraw forgets the offer and the links of a deleted user.
func (c *certSender) withdraw(uid string) {
	if c == nil {
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	delete(c.offers, uid)
	c.waiting.Store(int32(len(c.offers)))
	for k, l := range c.links {
		if l.uid == uid {
			delete(c.links, k)
		}
	}
}

// pruneLocked drops expired offers and links.
func (c *certSender) pruneLocked(now time.Time) {
	for uid, o := range c.offers {
		if !now.Before(o.until) {
			c.a.log.Info("certificate package offer expired: no client with the user's callsign connected", "user", logx.Clip(o.name))
			delete(c.offers, uid)
		}
	}
	for k, l := range c.links {
		if !now.Before(l.until) {
			delete(c.links, k)
		}
	}
	c.waiting.Store(int32(len(c.offers)))
}

// clientsChanged looks for the devices of waiting offers, off the
// caller's goroutine (it is called from the broker's session events and
// never blocks): one check at a time, and one more when clients changed
// while it ran.
func (c *certSender) clientsChanged() {
	if c == nil || c.waiting.Load() == 0 {
		return
	}
	c.again.Store(true)
	if !c.checking.CompareAndSwap(false, true) {
		return
	}
	go func() {
		for c.again.Swap(false) {
			c.check()
		}
		c.checking.Store(false)
		if c.again.Load() {
			c.clientsChanged()
		}
	}()
}

// check sends every waiting offer whose device is connected.
func (c *certSender) check() {
	clients := c.a.opts.Broker.Clients()
	now := c.a.opts.Now()
	type send struct {
		offer certOffer
		uids  []string
	}
	var sends []send
	c.mu.Lock()
	c.pruneLocked(now)
	for uid, o := range c.offers {
		var to []string
		for _, cl := range clients {
			if cl.Callsign == o.name && (c.opts.Listeners == nil || slices.Contains(c.opts.Listeners, cl.Listener)) {
				to = append(to, cl.UID)
			}
		}
		if len(to) > 0 {
			delete(c.offers, uid)
			sends = append(sends, send{o, to})
		}
	}
	c.waiting.Store(int32(len(c.offers)))
	c.mu.Unlock()
	for _, s := range sends {
		c.send(s.offer, s.uids, now)
	}
}

// send makes a link and sends the file-transfer request to uids.
func (c *certSender) send(o certOffer, uids []string, now time.Time) {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	u, err := c.a.opts.Users.Get(ctx, o.uid)
	var p store.DataPackage
	if err == nil {
		p, err = c.a.opts.Users.CertificatePackage(ctx, u.User)
	}
	if err != nil {
		c.a.log.Warn("certificate package not offered: the user or its package is gone", "user", logx.Clip(o.name), "err", err)
		return
	}
	var raw [certTicketBytes]byte
	rand.Read(raw[:])
	ticket := base64.RawURLEncoding.EncodeToString(raw[:])
	until := now.Add(certLinkLife)
	c.mu.Lock()
	c.links[sha256.Sum256([]byte(ticket))] = &certLink{uid: o.uid, until: until}
	c.mu.Unlock()
	url := "http://" + o.hostPort + "/api/certpackage/" + ticket
	ev := fileShareEvent(p, url, c.opts.ServerUID, now, until)
	if err := c.a.opts.Broker.Notify(ev, uids, store.AllGroups); err != nil {
		c.a.log.Warn("certificate package not offered", "user", logx.Clip(o.name), "err", err)
		return
	}
	c.a.log.Info("certificate package offered to the user's device", "user", logx.Clip(o.name),
		"uids", logx.Clip(strings.Join(uids, ",")), "package", logx.Clip(p.Name))
}

// fileShareEvent is the file-transfer request (protocol.md §1, b-f-t-r)
// for package p at url, as ATAK sends one to offer a data package.
func fileShareEvent(p store.DataPackage, url, serverUID string, now, stale time.Time) *cot.Event {
	now = now.UTC().Truncate(time.Millisecond)
	var b bytes.Buffer
	attr := func(name, v string) {
		b.WriteString(" " + name + `="`)
		xml.EscapeText(&b, []byte(v))
		b.WriteByte('"')
	}
	b.WriteString("<fileshare")
	attr("filename", p.Name)
	attr("senderUrl", url)
	attr("sizeInBytes", strconv.FormatInt(p.Size, 10))
	attr("sha256", p.Hash)
	attr("senderUid", serverUID)
	attr("senderCallsign", certSenderCallsign)
	attr("name", strings.TrimSuffix(p.Name, ".zip"))
	b.WriteString("/><ackrequest")
	attr("uid", uuid.NewString())
	attr("ackrequested", "true")
	attr("tag", p.Name)
	b.WriteString("/>")
	ev := &cot.Event{Version: "2.0", UID: uuid.NewString(), Type: "b-f-t-r", How: "h-e", Time: now, Start: now,
		Stale: stale.UTC().Truncate(time.Millisecond), Point: cot.Point{Hae: cot.Unknown, Ce: cot.Unknown, Le: cot.Unknown}}
	ev.Detail.XML = b.Bytes()
	return ev
}

// errNoLink answers every link that does not work (unknown, expired, used
// up, its user deleted): which of these it is is nobody's business.
var errNoLink = httpapi.Errorf(http.StatusNotFound, "ticket: unknown or expired download link")

// certPackageLink answers GET /api/certpackage/{ticket} with the package
// the link was sent for.
func (a *API) certPackageLink(w http.ResponseWriter, r *http.Request) error {
	ticket := r.PathValue("ticket")
	if !validTicket(ticket) {
		return errNoLink
	}
	c := a.certSends
	now := a.opts.Now()
	c.mu.Lock()
	c.pruneLocked(now)
	l := c.links[sha256.Sum256([]byte(ticket))]
	uid := ""
	if l != nil && l.uses < certLinkUses {
		l.uses++
		uid = l.uid
	}
	c.mu.Unlock()
	if uid == "" {
		c.log.Debug("certificate package link refused", "remote", logx.Clip(r.RemoteAddr))
		return errNoLink
	}
	u, err := a.opts.Users.Get(r.Context(), uid)
	var p store.DataPackage
	if err == nil {
		p, err = a.opts.Users.CertificatePackage(r.Context(), u.User)
	}
	if err != nil {
		if _, _, ok := httpapi.Refusal(err); ok {
			err = errNoLink
		}
		return httpapi.Internal(err, usersError)
	}
	a.log.Info("certificate package downloaded through its link", "user", logx.Clip(u.Name), "remote", logx.Clip(r.RemoteAddr))
	return a.servePackage(w, r, p)
}

// validTicket reports whether s has a ticket's form (URL-safe base64 of
// certTicketBytes bytes).
func validTicket(s string) bool {
	if len(s) != base64.RawURLEncoding.EncodedLen(certTicketBytes) {
		return false
	}
	_, err := base64.RawURLEncoding.DecodeString(s)
	return err == nil
}
