package marti_test

import (
	"encoding/json"
	"net/http"
	"strings"
	"testing"

	"outpost/appliance/netx"
	"outpost/appliance/takclient"
	"outpost/internal/testkit"
)

// TestProtectedMissionHidden: a password-protected mission shows whoever
// has not subscribed with its password its name and that it is protected,
// nothing more: its log, changes, detail, CoT and subscriptions are 403,
// all/logs and all/subscriptions leave it out, the mission list shows no
// description, keywords, uids or contents; on 8080 and on 8443, whatever
// uid is borrowed. After subscribing with the password it is all there: by
// the subscription's token or the acting uid on 8080, by the certificate's
// uid on 8443.
func TestProtectedMissionHidden(t *testing.T) {
	e := start(t, nil)
	olivia, eve := e.certHolder(t, "olivia"), e.certHolder(t, "eve")
	https, http8080 := netx.ListenerHTTPS, netx.ListenerHTTP
	const m = "/Marti/api/missions/"

	// olivia's vault: a description, a keyword, a file, a marker uid with an
	// event, a log entry.
	oc := e.DialTLS(t, olivia.cert)
	oc.Send(takclient.SA("owner1", "OLIVIA", 59.1, 18.1))
	testkit.WaitFor(t, "owner1 bound to olivia", func() bool { who, _ := e.Broker().UIDOwner("owner1"); return who == "olivia" })
	wantStatus(t, "create vault", e.doAs(t, olivia.hc, https, "PUT", m+"vault?creatorUid=owner1&password=s3cret",
		map[string]any{"description": "secret plans", "keywords": []string{"kw-secret"}}), 201)
	file := []byte("the vault's file")
	wantStatus(t, "upload", e.doAs(t, olivia.hc, https, "POST", "/Marti/sync/upload?filename=vault.txt&creatorUid=owner1", file, "Content-Type", "text/plain"), 200)
	hash := sha(file)
	wantStatus(t, "vault contents", e.doAs(t, olivia.hc, https, "PUT", m+"vault/contents?creatorUid=owner1",
		map[string]any{"hashes": []string{hash}, "uids": []string{"marker-secret"}}), 200)
	oc.Send(takclient.SA("marker-secret", "SECRET-MARKER", 59.3, 18.3))
	var entry struct{ ID string }
	var env envelopeOf
	wantStatus(t, "vault log entry", e.doAs(t, olivia.hc, https, "POST", m+"logs/entries",
		map[string]any{"content": "secret log line", "creatorUid": "owner1", "missionNames": []string{"vault"}}), 201).JSON(t, &env)
	json.Unmarshal(env.Data, &entry)
	testkit.WaitFor(t, "the marker's event in the vault's CoT", func() bool {
		r := e.doAs(t, olivia.hc, https, "GET", m+"vault/cot", nil)
		return r.Status == 200 && strings.Contains(string(r.Body), "SECRET-MARKER")
	})
	// What the vault holds: for its subscribers' eyes only.
	secrets := []string{"secret plans", "kw-secret", hash, "marker-secret", "SECRET-MARKER", "secret log line", entry.ID}

	hiddenRoutes := []string{m + "vault/log", m + "vault/changes", m + "vault?logs=true&changes=true", m + "vault",
		m + "vault/cot", m + "vault/subscriptions", m + "vault/subscriptions/roles"}
	// hidden checks what a caller that has not subscribed sees (headers: a
	// credential that must not help).
	hidden := func(who string, hc *http.Client, l string, query string, headers ...string) {
		t.Helper()
		for _, p := range hiddenRoutes {
			wantRefusal(t, who+" "+p, e.doAs(t, hc, l, "GET", addQuery(p, query), nil, headers...), http.StatusForbidden, `mission "vault" is password protected: subscribe with its password`)
		}
		for _, p := range []string{m + "all/logs", m + "all/subscriptions", "/Marti/api/missions"} {
			r := wantStatus(t, who+" "+p, e.doAs(t, hc, l, "GET", p, nil, headers...), 200)
			for _, s := range append(secrets, "owner1") {
				if strings.Contains(string(r.Body), s) {
					t.Errorf("%s %s shows %q: %s", who, p, s, r.Body)
				}
			}
		}
		var vault *missionDetail
		list := decodeMissions(t, e.doAs(t, hc, l, "GET", "/Marti/api/missions", nil, headers...))
		for i := range list {
			if list[i].Name == "vault" {
				vault = &list[i]
			}
		}
		if vault == nil || !vault.PasswordProtected || vault.Description != "" || len(vault.Keywords) != 0 || len(vault.UIDs) != 0 || len(vault.Contents) != 0 {
			t.Errorf("%s: the vault in the mission list: %+v", who, vault)
		}
	}
	// visible checks what a subscriber sees.
	visible := func(who string, hc *http.Client, l string, query string, headers ...string) {
		t.Helper()
		get := func(p string) string {
			t.Helper()
			p = addQuery(p, query)
			return string(wantStatus(t, who+" "+p, e.doAs(t, hc, l, "GET", p, nil, headers...), 200).Body)
		}
		for p, want := range map[string][]string{
			m + "vault/log":                    {entry.ID, "secret log line"},
			m + "all/logs":                     {entry.ID},
			m + "vault/changes":                {hash, "marker-secret"},
			m + "vault?logs=true&changes=true": {"secret plans", "kw-secret", hash, "marker-secret", entry.ID, "ADD_CONTENT"},
			m + "vault/cot":                    {"SECRET-MARKER"},
			m + "vault/subscriptions":          {"owner1"},
			m + "all/subscriptions":            {"vault"},
		} {
			body := get(p)
			for _, s := range want {
				if !strings.Contains(body, s) {
					t.Errorf("%s %s lacks %q: %s", who, p, s, body)
				}
			}
		}
		var vault *missionDetail
		list := decodeMissions(t, wantStatus(t, who+" list", e.doAs(t, hc, l, "GET", addQuery("/Marti/api/missions", query), nil, headers...), 200))
		for i := range list {
			if list[i].Name == "vault" {
				vault = &list[i]
			}
		}
		if vault == nil || vault.Description != "secret plans" || len(vault.Keywords) != 1 || len(vault.UIDs) != 1 || len(vault.Contents) != 1 {
			t.Errorf("%s: the vault in the mission list: %+v", who, vault)
		}
	}

	// Before anyone subscribes: anonymous, anonymous borrowing owner1 or
	// making up a token, eve, eve borrowing owner1 (refused: not hers).
	hidden("8080", nil, http8080, "")
	hidden("8080 with a made-up token", nil, http8080, "", "Authorization", "Bearer not-a-subscription-token")
	hidden("8443 eve", eve.hc, https, "")
	for _, l := range both {
		hc := eve.hc
		if l == http8080 {
			hc = nil
		}
		wantRefusal(t, l+" borrowing owner1", e.doAs(t, hc, l, "GET", m+"vault/log?clientUid=owner1", nil), http.StatusForbidden, `clientUid: uid "owner1" belongs to another user`)
	}
	// A wrong password subscribes nobody.
	wantRefusal(t, "eve with a wrong password", e.doAs(t, eve.hc, https, "PUT", m+"vault/subscription?uid=eve-1&password=guess", nil), http.StatusForbidden, "wrong mission password")
	hidden("8443 eve after a wrong password", eve.hc, https, "clientUid=eve-1")

	// 8080 subscribes with the password: its token, or its uid, shows it.
	var sub struct{ Token string }
	wantStatus(t, "8080 subscribes", e.doAs(t, nil, http8080, "PUT", m+"vault/subscription?uid=anon-sub&password=s3cret", nil), 201).JSON(t, &env)
	json.Unmarshal(env.Data, &sub)
	if sub.Token == "" {
		t.Fatal("the subscription has no token")
	}
	visible("8080 with the token", nil, http8080, "", "Authorization", "Bearer "+sub.Token)
	visible("8080 acting as anon-sub", nil, http8080, "clientUid=anon-sub")
	hidden("8080 without either", nil, http8080, "")
	hidden("8443 eve, not subscribed", eve.hc, https, "")

	// eve subscribes with the password: her certificate shows it, with or
	// without naming her uid.
	wantStatus(t, "eve subscribes", e.doAs(t, eve.hc, https, "PUT", m+"vault/subscription?uid=eve-1&password=s3cret", nil), 201)
	visible("8443 eve", eve.hc, https, "")
	visible("8443 eve acting as eve-1", eve.hc, https, "clientUid=eve-1")
}

// addQuery appends query (may be "") to path.
func addQuery(path, query string) string {
	switch {
	case query == "":
		return path
	case strings.Contains(path, "?"):
		return path + "&" + query
	}
	return path + "?" + query
}
