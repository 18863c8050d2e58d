package marti

import (
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"outpost/appliance/broker"
	"outpost/appliance/cot"
)

func get(t *testing.T, url string) (int, string, http.Header) {
	t.Helper()
	resp, err := http.Get(url)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b), resp.Header
}

func TestConnectEndpoints(t *testing.T) {
	b := broker.New(broker.Options{Logger: slog.New(slog.NewTextHandler(io.Discard, nil))})
	s := b.Join(broker.SessionInfo{Addr: "10.1.2.3:5555", User: "alice"})
	now := time.Now().UTC()
	b.Publish(&cot.Event{Version: "2.0", UID: "ANDROID-1", Type: "a-f-G-U-C", How: "m-g", Time: now, Start: now, Stale: now.Add(time.Minute),
		Detail: cot.Detail{XML: []byte(`<contact callsign="JAKAL"/>`), Contact: &cot.Contact{Callsign: "JAKAL"}}}, s)
	srv := httptest.NewServer(NewHandler(Options{Version: "9.9.9", Hostname: "tak.example", NodeID: "node-1", Broker: b}))
	defer srv.Close()

	code, body, hdr := get(t, srv.URL+"/Marti/api/version")
	if code != 200 || !strings.Contains(body, "TAK Server") || !strings.HasPrefix(hdr.Get("Content-Type"), "text/plain") {
		t.Fatalf("version: %d %q %v", code, body, hdr)
	}
	code, body, _ = get(t, srv.URL+"/Marti/api/version/config")
	var vc struct {
		Version, Type, NodeID string
		Data                  map[string]string
	}
	if err := json.Unmarshal([]byte(body), &vc); err != nil || code != 200 {
		t.Fatalf("version/config: %d %q", code, body)
	}
	if vc.Version != "3" || vc.Type != "ServerConfig" || vc.NodeID != "node-1" ||
		vc.Data["version"] != "9.9.9" || vc.Data["api"] != "3" || vc.Data["hostname"] != "tak.example" {
		t.Fatalf("version/config %+v", vc)
	}
	code, body, _ = get(t, srv.URL+"/Marti/api/clientEndPoints")
	var eps struct {
		Type string
		Data []map[string]string
	}
	if err := json.Unmarshal([]byte(body), &eps); err != nil || code != 200 {
		t.Fatalf("clientEndPoints: %d %q", code, body)
	}
	if eps.Type != "com.bbn.marti.remote.ClientEndpoint" || len(eps.Data) != 1 {
		t.Fatalf("clientEndPoints %q", body)
	}
	e := eps.Data[0]
	if e["uid"] != "ANDROID-1" || e["callsign"] != "JAKAL" || e["username"] != "alice" || e["lastStatus"] != "Connected" {
		t.Fatalf("endpoint %v", e)
	}
	if _, err := time.Parse("2006-01-02T15:04:05.000Z", e["lastEventTime"]); err != nil {
		t.Fatalf("lastEventTime %q: %v", e["lastEventTime"], err)
	}
	code, body, _ = get(t, srv.URL+"/Marti/nope")
	if code != 404 || !strings.Contains(body, `"message"`) {
		t.Fatalf("unknown path: %d %q", code, body)
	}
}

func TestEmptyClientList(t *testing.T) {
	srv := httptest.NewServer(NewHandler(Options{Broker: broker.New(broker.Options{})}))
	defer srv.Close()
	_, body, _ := get(t, srv.URL+"/Marti/api/clientEndPoints")
	if !strings.Contains(body, `"data":[]`) {
		t.Fatalf("an empty list must be [] (not null): %q", body)
	}
}
