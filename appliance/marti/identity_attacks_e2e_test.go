package marti_test

// The identity issue's attacks on the client API and the CoT streams, each
// turned into a test that holds (access.md "Uids belong to identities",
// "Missions", "Password guesses cost the guesser"):
//
//   - a certificate acting for the uids of other certificates (a mission's
//     owner, a subscriber) on 8443, anonymous clients doing so on 8080, and
//     an impostor announcing another certificate's uid over CoT TLS;
//   - a password-protected mission read by whoever has not subscribed with
//     its password, on both listeners (mission_protected_e2e_test.go);
//   - password guesses from one address locking out the rightful user, who
//     comes from another (guessing_e2e_test.go).
//
// Every refusal is checked with its status and message, and with what it
// would have changed, which must not have changed.

import (
	"crypto/tls"
	"encoding/json"
	"net/http"
	"strings"
	"testing"
	"time"

	"outpost/appliance/cot"
	"outpost/appliance/netx"
	"outpost/appliance/takclient"
	"outpost/internal/testkit"
)

// certHolder is a client certificate and the 8443 client presenting it.
type certHolder struct {
	name string
	cert *tls.Certificate
	hc   *http.Client
}

func (e *env) certHolder(t *testing.T, name string) certHolder {
	t.Helper()
	cert := e.Issue(t, name)
	return certHolder{name: name, cert: cert, hc: e.HTTPSClient(cert)}
}

// doAs sends a request to a listener with an HTTP client of the test's
// choosing (nil: the plain client, for 8080).
func (e *env) doAs(t *testing.T, hc *http.Client, listener, method, path string, body any, headers ...string) testkit.Response {
	t.Helper()
	return testkit.Do(t, hc, method, e.URL(t, listener, path), body, headers...)
}

// wantRefusal checks a refusal: its status and that its message says msg.
func wantRefusal(t *testing.T, what string, r testkit.Response, status int, msg string) {
	t.Helper()
	if r.Status != status || !strings.Contains(r.Message(), msg) {
		t.Errorf("%s: %d %s, want %d with a message containing %q", what, r.Status, r.Body, status, msg)
	}
}

// wantStatus fails unless r has status.
func wantStatus(t *testing.T, what string, r testkit.Response, status int) testkit.Response {
	t.Helper()
	if r.Status != status {
		t.Fatalf("%s: %d %s, want %d", what, r.Status, r.Body, status)
	}
	return r
}

// missionDetail is a mission as the client API shows it, with what a
// password-protected one hides.
type missionDetail struct {
	Name              string   `json:"name"`
	Description       string   `json:"description"`
	Keywords          []string `json:"keywords"`
	PasswordProtected bool     `json:"passwordProtected"`
	UIDs              []struct {
		Data string `json:"data"`
	} `json:"uids"`
	Contents []struct {
		Data struct {
			Hash string `json:"hash"`
		} `json:"data"`
	} `json:"contents"`
	Subscriptions  []struct{ ClientUID string }   `json:"subscriptions"`
	Logs           []struct{ ID, Content string } `json:"logs"`
	MissionChanges []struct{ Type string }        `json:"missionChanges"`
}

// decodeMissions decodes an envelope of missions.
func decodeMissions(t *testing.T, r testkit.Response) []missionDetail {
	t.Helper()
	var env envelopeOf
	r.JSON(t, &env)
	var ms []missionDetail
	if err := json.Unmarshal(env.Data, &ms); err != nil {
		t.Fatalf("missions: %v: %s", err, r.Body)
	}
	return ms
}

// TestForeignUIDsRefused: uids belong to the certificate identity that used
// them first. eve's certificate may not act for owner1 (olivia's uid, first
// used on her CoT TLS connection, the creator of mission ro) or reader
// (rita's, first used on 8443) to add contents, change the mission, write
// its log or drop rita's subscription; 8080 may not use them at all. Each
// is 403 naming the field and the mission, its contents and its
// subscriptions stay as they were. Over CoT TLS, eve announcing owner1 is
// refused and counted as an impostor while olivia's connection carries on.
func TestForeignUIDsRefused(t *testing.T) {
	e := start(t, nil)
	olivia, rita, eve := e.certHolder(t, "olivia"), e.certHolder(t, "rita"), e.certHolder(t, "eve")
	https := netx.ListenerHTTPS

	// olivia's CoT TLS connection uses owner1 first; an anonymous TCP
	// client watches the picture.
	watcher := e.DialTCP(t)
	oc := e.DialTLS(t, olivia.cert)
	if err := oc.Send(takclient.SA("owner1", "OLIVIA", 59.1, 18.1)); err != nil {
		t.Fatal(err)
	}
	testkit.WaitFor(t, "owner1 bound to olivia", func() bool {
		who, ok := e.Broker().UIDOwner("owner1")
		return ok && who == "olivia"
	})
	const m = "/Marti/api/missions/"
	wantStatus(t, "olivia creates ro", e.doAs(t, olivia.hc, https, "PUT", m+"ro?creatorUid=owner1&description=original&defaultRole=MISSION_READONLY_SUBSCRIBER", nil), 201)
	file := []byte("a file for mission ro")
	wantStatus(t, "olivia uploads", e.doAs(t, olivia.hc, https, "POST", "/Marti/sync/upload?filename=ro.txt&creatorUid=owner1", file, "Content-Type", "text/plain"), 200)
	hash := sha(file)
	// rita subscribes as reader on 8443: the uid is hers from now on.
	wantStatus(t, "rita subscribes", e.doAs(t, rita.hc, https, "PUT", m+"ro/subscription?uid=reader", nil), 201)
	if who, ok := e.Broker().UIDOwner("reader"); !ok || who != "rita" {
		t.Fatalf("reader bound to %q (%v), want rita", who, ok)
	}

	roState := func() (missionDetail, []string, int) {
		ms := decodeMissions(t, wantStatus(t, "ro as olivia", e.doAs(t, olivia.hc, https, "GET", m+"ro", nil), 200))
		var subs []string
		var env envelopeOf
		wantStatus(t, "ro's subscriptions", e.doAs(t, olivia.hc, https, "GET", m+"ro/subscriptions", nil), 200).JSON(t, &env)
		json.Unmarshal(env.Data, &subs)
		var changes []changeOut
		wantStatus(t, "ro's changes", e.doAs(t, olivia.hc, https, "GET", m+"ro/changes", nil), 200).JSON(t, &env)
		json.Unmarshal(env.Data, &changes)
		return ms[0], subs, len(changes)
	}
	before, subsBefore, changesBefore := roState()
	if strings.Join(subsBefore, ",") != "owner1,reader" || before.Description != "original" || len(before.Contents) != 0 {
		t.Fatalf("ro before the attacks: %+v, subscriptions %v", before, subsBefore)
	}

	attacks := []struct {
		name, method, path string
		body               any
		field, uid         string
	}{
		{"add contents as the owner", "PUT", m + "ro/contents?creatorUid=owner1", map[string]any{"hashes": []string{hash}, "uids": []string{"planted"}}, "creatorUid", "owner1"},
		{"change the mission as the owner", "PUT", m + "ro?creatorUid=owner1&description=x", nil, "creatorUid", "owner1"},
		{"drop the reader's subscription", "DELETE", m + "ro/subscription?uid=reader", nil, "uid", "reader"},
		{"write the log as the owner", "POST", m + "logs/entries", map[string]any{"content": "forged", "creatorUid": "owner1", "missionNames": []string{"ro"}}, "creatorUid", "owner1"},
	}
	for _, l := range both {
		hc := eve.hc
		if l == netx.ListenerHTTP {
			hc = nil // anonymous
		}
		for _, a := range attacks {
			r := e.doAs(t, hc, l, a.method, a.path, a.body)
			wantRefusal(t, l+" "+a.name, r, http.StatusForbidden, a.field+`: uid "`+a.uid+`" belongs to another user`)
		}
	}
	after, subsAfter, changesAfter := roState()
	if after.Description != "original" || len(after.Contents) != 0 || len(after.UIDs) != 0 ||
		strings.Join(subsAfter, ",") != "owner1,reader" || changesAfter != changesBefore {
		t.Fatalf("ro after the attacks: %+v, subscriptions %v, %d changes (were %d)", after, subsAfter, changesAfter, changesBefore)
	}
	var logs []struct{ Content string }
	var env envelopeOf
	wantStatus(t, "ro's log", e.doAs(t, olivia.hc, https, "GET", m+"ro/log", nil), 200).JSON(t, &env)
	if json.Unmarshal(env.Data, &logs); len(logs) != 0 {
		t.Fatalf("ro's log after the attacks: %+v", logs)
	}
	// The uids are still their owners'.
	for uid, who := range map[string]string{"owner1": "olivia", "reader": "rita"} {
		if got, _ := e.Broker().UIDOwner(uid); got != who {
			t.Fatalf("%s now belongs to %q", uid, got)
		}
	}
	// What eve tried is what the owner does: olivia's own request goes
	// through (the refusals were about the uid, not the request).
	wantStatus(t, "olivia adds contents", e.doAs(t, olivia.hc, https, "PUT", m+"ro/contents?creatorUid=owner1", map[string]any{"hashes": []string{hash}}), 200)
	// eve as herself is a read-only subscriber of ro: impersonating the
	// owner was her only way to write.
	wantStatus(t, "eve subscribes as herself", e.doAs(t, eve.hc, https, "PUT", m+"ro/subscription?uid=eve-1", nil), 201)
	wantRefusal(t, "eve writes as herself", e.doAs(t, eve.hc, https, "PUT", m+"ro/contents?creatorUid=eve-1", map[string]any{"uids": []string{"planted"}}), http.StatusForbidden, "may not change it")

	// CoT TLS: eve announces owner1. The broker refuses it (an impostor);
	// olivia's next report still reaches the watcher, eve's never does.
	ec := e.DialTLS(t, eve.cert)
	impostors := e.Broker().Stats().Impostor
	if err := ec.Send(takclient.SA("owner1", "EVIL", 10, 10)); err != nil {
		t.Fatal(err)
	}
	testkit.WaitFor(t, "eve's report refused as an impostor's", func() bool { return e.Broker().Stats().Impostor == impostors+1 })
	if err := oc.Send(takclient.SA("owner1", "OLIVIA-2", 59.2, 18.2)); err != nil {
		t.Fatal(err)
	}
	callsign := func(ev *cot.Event) string {
		if ev.Detail.Contact == nil {
			return ""
		}
		return ev.Detail.Contact.Callsign
	}
	_, err := watcher.WaitFor(func(ev *cot.Event) bool {
		if ev.UID == "owner1" && callsign(ev) == "EVIL" {
			t.Errorf("the watcher received eve's report as owner1: %s", ev.Detail.XML)
		}
		return ev.UID == "owner1" && callsign(ev) == "OLIVIA-2"
	}, 10*time.Second)
	if err != nil {
		t.Fatalf("olivia's report after eve's attempt: %v", err)
	}
	select {
	case <-oc.Done():
		t.Fatalf("olivia's connection closed: %v", oc.Err())
	default:
	}
	testkit.WaitFor(t, "owner1's latest event stored", func() bool {
		r := e.doAs(t, nil, netx.ListenerHTTP, "GET", "/Marti/api/cot/xml/owner1", nil)
		return r.Status == 200 && strings.Contains(string(r.Body), "OLIVIA-2")
	})
	if r := e.doAs(t, nil, netx.ListenerHTTP, "GET", "/Marti/api/cot/xml/owner1", nil); strings.Contains(string(r.Body), "EVIL") {
		t.Fatalf("owner1's stored event is eve's: %s", r.Body)
	}
	if who, _ := e.Broker().UIDOwner("owner1"); who != "olivia" {
		t.Fatalf("owner1 belongs to %q after eve's attempt", who)
	}
}
