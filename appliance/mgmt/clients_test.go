package mgmt

import (
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"testing"
	"time"

	"outpost/appliance/broker"
	"outpost/appliance/cot"
)

func allowList(entries ...string) func(netip.Addr) bool {
	var ps []netip.Prefix
	for _, e := range entries {
		ps = append(ps, netip.MustParsePrefix(e))
	}
	return func(a netip.Addr) bool {
		a = a.Unmap()
		for _, p := range ps {
			if p.Contains(a) {
				return true
			}
		}
		return false
	}
}

func TestClients(t *testing.T) {
	b := broker.New(broker.Options{Logger: slog.New(slog.NewTextHandler(io.Discard, nil))})
	s := b.Join(broker.SessionInfo{Addr: "10.9.8.7:4242", User: "alice", Listener: "cot-tls"})
	now := time.Now().UTC()
	b.Publish(&cot.Event{Version: "2.0", UID: "ANDROID-A", Type: "a-f-G-U-C", How: "m-g", Time: now, Start: now, Stale: now.Add(time.Minute),
		Detail: cot.Detail{
			XML:     []byte(`<contact callsign="ALPHA"/><__group name="Cyan" role="HQ"/>`),
			Contact: &cot.Contact{Callsign: "ALPHA"}, Group: &cot.Group{Name: "Cyan", Role: "HQ"},
		}}, s)
	b.Join(broker.SessionInfo{Addr: "10.9.8.6:1"}) // connected but never identified: not listed

	cases := []struct {
		name    string
		allowed []string
		headers map[string]string
		want    int
	}{
		{"loopback allowed", []string{"127.0.0.1/32"}, nil, 200},
		{"CIDR allowed", []string{"127.0.0.0/24"}, nil, 200},
		{"not in the list", []string{"10.0.0.0/8"}, nil, 401},
		{"empty list", nil, nil, 401},
		{"proxy, forwarded client allowed", []string{"127.0.0.1/32", "192.168.1.0/24"}, map[string]string{"X-Forwarded-For": "192.168.1.20"}, 200},
		{"proxy, forwarded client refused", []string{"127.0.0.1/32"}, map[string]string{"X-Forwarded-For": "203.0.113.9, 127.0.0.1"}, 401},
		{"X-Real-IP refused", []string{"127.0.0.1/32"}, map[string]string{"X-Real-IP": "203.0.113.9"}, 401},
		{"garbage header", []string{"127.0.0.1/32"}, map[string]string{"X-Forwarded-For": "not-an-ip"}, 401},
		// A remote peer cannot get in by claiming an allowed address.
		{"spoofed header from a refused peer", []string{"192.168.1.0/24"}, map[string]string{"X-Forwarded-For": "192.168.1.20"}, 401},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			srv := httptest.NewServer(New(Options{Broker: b, AllowedClientIP: allowList(tc.allowed...),
				Logger: slog.New(slog.NewTextHandler(io.Discard, nil))}))
			defer srv.Close()
			req, _ := http.NewRequest("GET", srv.URL+"/Clients", nil)
			for k, v := range tc.headers {
				req.Header.Set(k, v)
			}
			resp, err := http.DefaultClient.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			body, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			if resp.StatusCode != tc.want {
				t.Fatalf("status %d, want %d: %s", resp.StatusCode, tc.want, body)
			}
			if tc.want == 401 {
				if string(body) != `{"message":"endpoint can only be accessed by approved IPs"}`+"\n" {
					t.Fatalf("401 body %q", body)
				}
				return
			}
			var items []map[string]string
			if err := json.Unmarshal(body, &items); err != nil || len(items) != 1 {
				t.Fatalf("body %s", body)
			}
			it := items[0]
			if it["uid"] != "ANDROID-A" || it["callsign"] != "ALPHA" || it["team"] != "Cyan" || it["role"] != "HQ" ||
				it["address"] != "10.9.8.7" || it["user"] != "alice" {
				t.Fatalf("item %v", it)
			}
			if _, err := time.Parse(cot.TimeFormat, it["lastSeen"]); err != nil {
				t.Fatalf("lastSeen %q", it["lastSeen"])
			}
		})
	}
}
