package marti_test

// What the CoT history tests share: reading an <events> answer, writing
// events into the running appliance's history with chosen receive times
// and groups, and two teams of users.

import (
	"context"
	"encoding/xml"
	"fmt"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"outpost/appliance/admin"
	"outpost/appliance/netx"
	"outpost/appliance/store"
	"outpost/appliance/takclient"
	"outpost/internal/testkit"
)

// eventsDoc is an <events> answer: uid:lat of each event, in order.
type eventsDoc []string

func (d eventsDoc) String() string { return fmt.Sprint([]string(d)) }

// readEvents checks that r is 200 with the <events> document the official
// server answers (the declaration, then the events each followed by a
// newline) and returns its events.
func readEvents(t *testing.T, what string, r testkit.Response) eventsDoc {
	t.Helper()
	const head = `<?xml version="1.0" encoding="UTF-8"?>` + "\n<events>"
	body := string(r.Body)
	if r.Status != 200 || !strings.HasPrefix(r.Header.Get("Content-Type"), "application/xml") ||
		!strings.HasPrefix(body, head) || !strings.HasSuffix(body, "</events>") ||
		(body != head+"</events>" && !strings.HasSuffix(body, "/event>\n</events>")) {
		t.Fatalf("%s: %d %s: %.300s", what, r.Status, r.Header.Get("Content-Type"), body)
	}
	var doc struct {
		Events []struct {
			UID   string `xml:"uid,attr"`
			Point struct {
				Lat float64 `xml:"lat,attr"`
			} `xml:"point"`
		} `xml:"event"`
	}
	if err := xml.Unmarshal(r.Body, &doc); err != nil {
		t.Fatalf("%s: %v: %.300s", what, err, body)
	}
	out := eventsDoc{}
	for _, e := range doc.Events {
		out = append(out, fmt.Sprintf("%s:%v", e.UID, e.Point.Lat))
	}
	return out
}

// stored is an event to write into the history: a position report of uid
// at lat (of type typ when not ""), received at, sent to groups.
type stored struct {
	uid    string
	lat    float64
	typ    string
	at     time.Time
	groups uint64
}

// storeEvents writes events into the running appliance's history as if the
// relay had received them at their times (a second history writer on its
// store, flushed before it returns).
func storeEvents(t *testing.T, e *env, events ...stored) {
	t.Helper()
	h := e.Store().StartHistory(store.HistoryOptions{FlushInterval: time.Hour})
	defer h.Close(context.Background())
	for _, s := range events {
		ev := takclient.SA(s.uid, s.uid, s.lat, 1)
		if s.typ != "" {
			ev.Type = s.typ
		}
		if !h.Add(ev, nil, s.at, "test", 0, s.groups) {
			t.Fatal("history Add refused")
		}
	}
	if err := h.Flush(context.Background()); err != nil {
		t.Fatal(err)
	}
}

// teams makes the groups Red and Blue and their users reddy and bluey (each
// a member both ways) through the management API, and returns the groups'
// masks and the users' 8443 clients.
func teams(t *testing.T, e *env) (red, blue uint64, reddy, bluey certHolder) {
	t.Helper()
	tok, err := os.ReadFile(filepath.Join(e.Cfg.DataDir, admin.AdminTokenFile))
	if err != nil {
		t.Fatal(err)
	}
	api := func(method, path string, body any) testkit.Response {
		t.Helper()
		r := testkit.Do(t, nil, method, e.URL(t, netx.ListenerREST, path), body, "Authorization", "Bearer "+strings.TrimSpace(string(tok)))
		if r.Status != 201 {
			t.Fatalf("%s %s: %d %s", method, path, r.Status, r.Body)
		}
		return r
	}
	masks := map[string]uint64{}
	for _, g := range []string{"Red", "Blue"} {
		var out struct{ Bitpos int }
		api("POST", "/api/groups", map[string]string{"name": g, "description": g + " team"}).JSON(t, &out)
		masks[g] = 1 << out.Bitpos
	}
	api("POST", "/ManageSystemUser/postSystemUser", map[string]any{"systemUsers": []map[string]string{
		{"Name": "reddy", "Password": "reddy-pw", "Group": "Red"},
		{"Name": "bluey", "Password": "bluey-pw", "Group": "Blue"},
	}})
	return masks["Red"], masks["Blue"], e.certHolder(t, "reddy"), e.certHolder(t, "bluey")
}

// relayed waits until the broker's live state holds an event of uid: the
// relay has routed it.
func relayed(t *testing.T, e *env, uid string) {
	t.Helper()
	testkit.WaitFor(t, uid+" relayed", func() bool { return len(e.Broker().LiveEvents(uid)) > 0 })
}

// minutesAgo names the times min minutes before now: as times, and as
// query values.
func minutesAgo(now time.Time) (ago func(min int) time.Time, iso func(min int) string) {
	ago = func(min int) time.Time { return now.Add(-time.Duration(min) * time.Minute) }
	iso = func(min int) string { return url.QueryEscape(ago(min).Format(time.RFC3339Nano)) }
	return ago, iso
}
