package marti_test

import (
	"encoding/xml"
	"strings"
	"testing"
)

type vcmDoc struct {
	XMLName xml.Name `xml:"videoConnections"`
	Feeds   []struct {
		Protocol     string `xml:"protocol"`
		Alias        string `xml:"alias"`
		UID          string `xml:"uid"`
		Address      string `xml:"address"`
		Port         string `xml:"port"`
		RoverPort    string `xml:"roverPort"`
		Path         string `xml:"path"`
		Buffer       string `xml:"buffer"`
		Timeout      string `xml:"timeout"`
		RtspReliable string `xml:"rtspReliable"`
	} `xml:"feed"`
}

type videoList struct {
	VideoConnections []struct {
		UUID   string
		Active bool
		Alias  string
		Feeds  []map[string]any
	}
}

// TestVideoConnections: a feed published as ATAK's XML on /Marti/vcm is
// listed there and in the JSON of /Marti/api/video, and the reverse; a
// connection is read, replaced and deleted by uid.
func TestVideoConnections(t *testing.T) {
	e := start(t, nil)
	for _, l := range both {
		resp := e.do(t, l, "GET", "/Marti/vcm", nil)
		var doc vcmDoc
		if err := xml.Unmarshal(resp.Body, &doc); err != nil || resp.Status != 200 || len(doc.Feeds) != 0 {
			t.Fatalf("%s empty vcm: %d %s %v", l, resp.Status, resp.Body, err)
		}
		resp = e.do(t, l, "GET", "/Marti/api/video", nil)
		if resp.Status != 200 || strings.TrimSpace(string(resp.Body)) != `{"videoConnections":[]}` {
			t.Fatalf("%s empty video list: %s", l, resp.Body)
		}
	}

	feed := `<videoConnections><feed><protocol>rtsp</protocol><alias>Drone 1</alias><uid>feed-xml-1</uid>
		<address>10.0.0.9</address><port>8554</port><roverPort>-1</roverPort><ignoreEmbeddedKLV>false</ignoreEmbeddedKLV>
		<preferredMacAddress></preferredMacAddress><preferredInterfaceAddress></preferredInterfaceAddress>
		<path>live/drone1</path><buffer>-1</buffer><timeout>5000</timeout><rtspReliable>1</rtspReliable></feed></videoConnections>`
	if resp := e.do(t, both[0], "POST", "/Marti/vcm", feed, "Content-Type", "application/xml"); resp.Status != 200 {
		t.Fatalf("post vcm: %d %s", resp.Status, resp.Body)
	}
	body := map[string]any{"videoConnections": []any{map[string]any{
		"uuid": "conn-json-1", "active": true, "alias": "Gate camera",
		"feeds": []any{map[string]any{"uuid": "feed-json-1", "alias": "Gate", "url": "rtsp://cam.example:554/stream1",
			"active": true, "networkTimeout": "12000", "rtspReliable": 0}},
	}}}
	if resp := e.do(t, both[1], "POST", "/Marti/api/video", body); resp.Status != 200 || !strings.Contains(string(resp.Body), "conn-json-1") {
		t.Fatalf("post video: %d %s", resp.Status, resp.Body)
	}
	for _, l := range both {
		var doc vcmDoc
		resp := e.do(t, l, "GET", "/Marti/vcm", nil)
		if err := xml.Unmarshal(resp.Body, &doc); err != nil || len(doc.Feeds) != 2 {
			t.Fatalf("%s vcm: %s", l, resp.Body)
		}
		x := doc.Feeds[0]
		if x.Protocol != "rtsp" || x.Alias != "Drone 1" || x.UID != "feed-xml-1" || x.Address != "10.0.0.9" || x.Port != "8554" ||
			x.Path != "/live/drone1" || x.Timeout != "5000" || x.RtspReliable != "1" || x.Buffer != "-1" {
			t.Fatalf("%s xml feed: %+v", l, x)
		}
		if j := doc.Feeds[1]; j.Address != "cam.example" || j.Port != "554" || j.Path != "/stream1" || j.Timeout != "12000" {
			t.Fatalf("%s json feed as xml: %+v", l, j)
		}
		var list videoList
		e.do(t, l, "GET", "/Marti/api/video", nil).JSON(t, &list)
		if len(list.VideoConnections) != 2 {
			t.Fatalf("%s video list: %+v", l, list)
		}
		c := list.VideoConnections[0]
		if c.UUID != "feed-xml-1" || c.Alias != "Drone 1" || !c.Active || len(c.Feeds) != 1 || c.Feeds[0]["url"] != "rtsp://10.0.0.9:8554/live/drone1" ||
			c.Feeds[0]["rtspReliable"] != "1" || c.Feeds[0]["networkTimeout"] != "5000" {
			t.Fatalf("%s xml feed as json: %+v", l, c)
		}
	}
	// One connection by uid; replaced by PUT; deleted.
	resp := e.do(t, both[1], "GET", "/Marti/api/video/conn-json-1", nil)
	if resp.Status != 200 || !strings.Contains(string(resp.Body), `"url":"rtsp://cam.example:554/stream1"`) {
		t.Fatalf("get: %d %s", resp.Status, resp.Body)
	}
	resp = e.do(t, both[0], "PUT", "/Marti/api/video/conn-json-1", map[string]any{"alias": "Gate (moved)",
		"feeds": []any{map[string]any{"url": "srt://cam.example:9000"}}})
	if resp.Status != 200 || !strings.Contains(string(resp.Body), "Gate (moved)") {
		t.Fatalf("put: %d %s", resp.Status, resp.Body)
	}
	if c, err := e.Store().Videos().VideoConnectionByUID(t.Context(), "conn-json-1"); err != nil || c.Feeds[0].URL != "srt://cam.example:9000" || c.Feeds[0].UID == "" {
		t.Fatalf("replaced: %+v %v", c, err)
	}
	if resp := e.do(t, both[1], "DELETE", "/Marti/api/video/conn-json-1", nil); resp.Status != 200 {
		t.Fatalf("delete: %d %s", resp.Status, resp.Body)
	}
	if resp := e.do(t, both[1], "GET", "/Marti/api/video/conn-json-1", nil); resp.Status != 404 || !strings.Contains(resp.Message(), "uid: no video connection") {
		t.Fatalf("deleted: %d %s", resp.Status, resp.Body)
	}
	if resp := e.do(t, both[0], "DELETE", "/Marti/api/video/conn-json-1", nil); resp.Status != 404 {
		t.Fatalf("second delete: %d", resp.Status)
	}
}

// TestVideoBadInput: refused bodies get a 4xx naming the field and change
// nothing (the table's budget: TestVideoBudget).
func TestVideoBadInput(t *testing.T) {
	e := start(t, nil)
	xmlFeed := func(inner string) string { return "<videoConnections><feed>" + inner + "</feed></videoConnections>" }
	jsonConn := func(feed map[string]any) map[string]any {
		return map[string]any{"videoConnections": []any{map[string]any{"uuid": "c", "feeds": []any{feed}}}}
	}
	cases := []struct {
		name, method, path string
		body               any
		status             int
		msg                string
	}{
		{"vcm not XML", "POST", "/Marti/vcm", "{json}", 400, "body: must be a <videoConnections> document"},
		{"vcm other root", "POST", "/Marti/vcm", "<feeds/>", 400, "body: must be a <videoConnections> document"},
		{"vcm without protocol", "POST", "/Marti/vcm", xmlFeed("<address>h</address>"), 400, "feed[0].protocol: required"},
		{"vcm without address", "POST", "/Marti/vcm", xmlFeed("<protocol>rtsp</protocol>"), 400, "feed[0].address: required"},
		{"vcm with a bad port", "POST", "/Marti/vcm", xmlFeed("<protocol>rtsp</protocol><address>h</address><port>99999</port>"), 400, "feed[0].port: must be a port number"},
		{"vcm with a bad timeout", "POST", "/Marti/vcm", xmlFeed("<protocol>rtsp</protocol><address>h</address><timeout>soon</timeout>"), 400, "feed[0].timeout: must be a whole number"},
		{"vcm with no feed", "POST", "/Marti/vcm", "<videoConnections/>", 400, "feed: must hold 1 to 64 connections"},
		{"vcm too large", "POST", "/Marti/vcm", strings.Repeat("<a/>", 100<<10), 413, "request body larger than"},
		{"video without the list", "POST", "/Marti/api/video", map[string]any{}, 400, "videoConnections: required"},
		{"video not JSON", "POST", "/Marti/api/video", "<xml/>", 400, "malformed JSON"},
		{"video feed without url", "POST", "/Marti/api/video", jsonConn(map[string]any{"alias": "x"}), 400, "videoConnections[0].feeds[0].url: must be an absolute URL"},
		{"video feed with a relative url", "POST", "/Marti/api/video", jsonConn(map[string]any{"url": "/live"}), 400, "videoConnections[0].feeds[0].url: must be an absolute URL"},
		{"video feed with a bad flag", "POST", "/Marti/api/video", jsonConn(map[string]any{"url": "rtsp://h/x", "active": "maybe"}), 400, "videoConnections[0].feeds[0].active: must be true or false"},
		{"video feed with a bad rover port", "POST", "/Marti/api/video", jsonConn(map[string]any{"url": "rtsp://h/x", "roverPort": 70000}), 400, "videoConnections[0]: feeds[0].roverPort must be -1 to 65535"},
		{"video without feeds", "POST", "/Marti/api/video", map[string]any{"videoConnections": []any{map[string]any{"uuid": "c"}}}, 400, "videoConnections[0]: feeds must hold 1 to 16 feeds"},
		{"video alias with a control character", "POST", "/Marti/api/video", map[string]any{"videoConnections": []any{map[string]any{"alias": "a\x01", "feeds": []any{map[string]any{"url": "rtsp://h/x"}}}}}, 400, "videoConnections[0]: alias contains a control character"},
		{"video put without feeds", "PUT", "/Marti/api/video/x", map[string]any{"alias": "a"}, 400, "body: feeds must hold"},
		{"video of an unknown uid", "GET", "/Marti/api/video/nope", nil, 404, `uid: no video connection "nope"`},
	}
	for _, l := range both {
		for _, tc := range cases {
			resp := e.do(t, l, tc.method, tc.path, tc.body)
			if resp.Status != tc.status || !strings.Contains(resp.Message(), tc.msg) {
				t.Errorf("%s %s: %d %s, want %d with %q", l, tc.name, resp.Status, resp.Body, tc.status, tc.msg)
			}
		}
	}
	if list, _ := e.Store().Videos().VideoConnections(t.Context()); len(list) != 0 {
		t.Fatalf("refused requests stored %d connections", len(list))
	}
}
