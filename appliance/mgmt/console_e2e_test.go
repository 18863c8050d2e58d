package mgmt_test

import (
	"io"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"outpost/appliance/cot"
	"outpost/appliance/netx"
	"outpost/appliance/takclient"
	"outpost/internal/testkit"
)

type mapAnswer struct {
	Clients []struct {
		UID, Callsign, Type, Listener, Stale string
		Lat, Lon, Course                     *float64
	}
	Items []struct {
		UID, Type, Callsign, Source, Stale string
		Lat, Lon                           float64
		Deleted                            bool
	}
	Truncated bool
}

func (e *env) mapView(query string) mapAnswer {
	e.t.Helper()
	r := e.do("GET", "/api/map"+query, e.admin, nil)
	want(e.t, "GET /api/map"+query, r, 200)
	var m mapAnswer
	r.JSON(e.t, &m)
	return m
}

func (m mapAnswer) item(uid string) (int, bool) {
	for i, it := range m.Items {
		if it.UID == uid {
			return i, true
		}
	}
	return -1, false
}

// mapMarker is an event like a marker an ATAK user drops.
func mapMarker(uid, typ, callsign string, lat, lon float64, stale time.Duration, detail string) *cot.Event {
	now := time.Now().UTC()
	ev := &cot.Event{
		Version: "2.0", UID: uid, Type: typ, How: "h-g-i-g-o", Time: now, Start: now, Stale: now.Add(stale),
		Point:  cot.Point{Lat: lat, Lon: lon, Hae: cot.Unknown, Ce: cot.Unknown, Le: cot.Unknown},
		Detail: cot.Detail{XML: []byte(detail)},
	}
	if callsign != "" {
		ev.Detail.XML = []byte(`<contact callsign="` + callsign + `"/>` + detail)
		ev.Detail.Contact = &cot.Contact{Callsign: callsign}
	}
	return ev
}

// mapDeletion is ATAK's t-x-d-d for uid (protocol.md §1), forced or not.
func mapDeletion(uid string, force bool) *cot.Event {
	d := `<link uid="` + uid + `" relation="p-p" type="a-h-G"/>`
	if force {
		d += `<__forcedelete/>`
	}
	ev := mapMarker("del-"+uid, "t-x-d-d", "", 0, 0, 20*time.Second, d)
	ev.How = "m-g"
	return ev
}

// TestMapLivePicture: a TCP client's position and the markers it sends
// reach GET /api/map; deletions fade or remove them; the box, the limit and
// the stale window filter; the full event is one call away.
func TestMapLivePicture(t *testing.T) {
	e := newEnv(t, nil)
	c, err := takclient.Dial(e.app.Addr(t, netx.ListenerCoTTCP), nil)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	if err := c.Send(takclient.SA("ANDROID-map-1", "VIPER-1", 48.8566, 2.3522)); err != nil {
		t.Fatal(err)
	}
	var m mapAnswer
	testkit.WaitFor(t, "the client on the map", func() bool {
		m = e.mapView("")
		return len(m.Clients) == 1 && m.Clients[0].Lat != nil
	})
	cl := m.Clients[0]
	if cl.UID != "ANDROID-map-1" || cl.Callsign != "VIPER-1" || *cl.Lat != 48.8566 || *cl.Lon != 2.3522 ||
		cl.Type != "a-f-G-U-C" || cl.Listener != netx.ListenerCoTTCP || cl.Course == nil || *cl.Course != 12.5 || cl.Stale == "" {
		t.Fatalf("client = %+v", cl)
	}

	// A marker the client drops (without a <contact>: the relay takes an
	// a-* event with a callsign for the client's own position report), and
	// objects the server publishes, as it does geo objects.
	if err := c.Send(mapMarker("M-hostile", "a-h-G-U-C-I", "", 48.86, 2.36, time.Hour,
		`<link uid="ANDROID-map-1" relation="p-p" type="a-f-G-U-C"/><remarks>seen at dawn, two vehicles</remarks>`)); err != nil {
		t.Fatal(err)
	}
	testkit.WaitFor(t, "the client's marker", func() bool {
		_, ok := e.mapView("").item("M-hostile")
		return ok
	})
	for _, ev := range []*cot.Event{
		mapMarker("M-soft", "a-u-G", "Unknown", 48.85, 2.34, time.Hour, ""),
		mapMarker("M-gone", "a-n-G", "Neutral", 48.84, 2.33, time.Hour, ""),
		mapMarker("M-old", "a-h-G", "Old post", 48.83, 2.32, -2*time.Hour, ""),
		mapMarker("M-far", "a-f-G", "Far away", -33.9, 151.2, time.Hour, ""),
		mapMarker("chat-1", "b-t-f", "", 48.8566, 2.3522, time.Hour, `<remarks>a chat line</remarks>`),
	} {
		if err := e.app.Broker().Publish(ev, nil); err != nil {
			t.Fatal(err)
		}
	}
	testkit.WaitFor(t, "the markers in the history", func() bool {
		_, ok := e.mapView("").item("M-far")
		return ok
	})
	m = e.mapView("")
	for _, uid := range []string{"M-hostile", "M-soft", "M-gone", "M-old", "M-far"} {
		if _, ok := m.item(uid); !ok {
			t.Errorf("%s missing from %+v", uid, m.Items)
		}
	}
	for _, uid := range []string{"ANDROID-map-1", "chat-1"} {
		if _, ok := m.item(uid); ok {
			t.Errorf("%s listed as an item (a connected client, or not a map type)", uid)
		}
	}
	i, _ := m.item("M-hostile")
	if it := m.Items[i]; it.Type != "a-h-G-U-C-I" || it.Lat != 48.86 || it.Source != netx.ListenerCoTTCP {
		t.Fatalf("M-hostile = %+v", it)
	}
	i, _ = m.item("M-soft")
	if it := m.Items[i]; it.Callsign != "Unknown" || it.Source != "server" {
		t.Fatalf("M-soft = %+v", it)
	}

	// The box around Paris leaves Sydney out; clients are listed wherever they are.
	m = e.mapView("?bbox=2,48,3,49.5")
	if _, ok := m.item("M-far"); ok || len(m.Clients) != 1 {
		t.Fatalf("bbox: %+v", m)
	}
	// A box across the antimeridian, given with longitudes beyond 180.
	m = e.mapView("?bbox=150,-40,190,-30")
	if _, ok := m.item("M-far"); !ok || len(m.Items) != 1 {
		t.Fatalf("antimeridian box: %+v", m.Items)
	}
	if m = e.mapView("?maxStale=1h"); func() bool { _, ok := m.item("M-old"); return ok }() {
		t.Fatal("an item stale for 2 h is listed with maxStale=1h")
	}
	if m = e.mapView("?limit=2"); len(m.Items) > 2 || !m.Truncated {
		t.Fatalf("limit=2: %d items, truncated %v", len(m.Items), m.Truncated)
	}

	// Deletions: marked stale, or removed when forced.
	e.app.Broker().Publish(mapDeletion("M-soft", false), nil)
	e.app.Broker().Publish(mapDeletion("M-gone", true), nil)
	testkit.WaitFor(t, "the deletions applied", func() bool {
		m = e.mapView("")
		i, ok := m.item("M-soft")
		_, gone := m.item("M-gone")
		return ok && m.Items[i].Deleted && !gone
	})
	if _, ok := m.item("del-M-soft"); ok {
		t.Fatal("a t-x-d-d listed as an item")
	}

	// The full event.
	r := e.do("GET", "/api/map/event?uid=M-hostile", e.admin, nil)
	want(t, "event", r, 200)
	var ev struct {
		UID, Type, Remarks, XML string
		Ce                      *float64
	}
	r.JSON(t, &ev)
	if ev.UID != "M-hostile" || ev.Remarks != "seen at dawn, two vehicles" || !strings.Contains(ev.XML, `uid="M-hostile"`) || ev.Ce != nil {
		t.Fatalf("event = %+v", ev)
	}
	want(t, "unknown uid", e.do("GET", "/api/map/event?uid=nobody", e.admin, nil), 404)
	want(t, "no uid", e.do("GET", "/api/map/event", e.admin, nil), 400)
	want(t, "long uid", e.do("GET", "/api/map/event?uid="+strings.Repeat("u", 1025), e.admin, nil), 400)

	// When the client leaves, its last position stays as an item (the
	// server's departure notice marks it stale, it does not remove it).
	c.Close()
	testkit.WaitFor(t, "the departed client as a stale item", func() bool {
		m = e.mapView("")
		i, ok := m.item("ANDROID-map-1")
		return len(m.Clients) == 0 && ok && m.Items[i].Deleted
	})
}

func TestMapBadInput(t *testing.T) {
	e := newEnv(t, nil)
	before := e.snapshot()
	for q, msg := range map[string]string{
		"?bbox=1,2,3":            "bbox: must be west,south,east,north",
		"?bbox=a,b,c,d":          "bbox: must be",
		"?bbox=0,-91,1,0":        "bbox: south and north must be within ±90",
		"?bbox=0,10,1,5":         "bbox: south and north",
		"?bbox=10,0,5,1":         "bbox: east must not be less than west",
		"?bbox=NaN,0,1,1":        "bbox: must be",
		"?bbox=1e300,0,1e301,1":  "bbox: must be",
		"?limit=0":               "limit: must be a whole number from 1 to 10000",
		"?limit=10001":           "limit: must be",
		"?limit=x":               "limit: must be",
		"?maxStale=soon":         "maxStale: must be a duration",
		"?maxStale=-1h":          "maxStale: must be",
		"?maxStale=721h":         "maxStale: must be",
		"?bbox=0,0,1,1&limit=-5": "limit: must be",
	} {
		r := e.do("GET", "/api/map"+q, e.admin, nil)
		want(t, q, r, 400)
		if !strings.Contains(r.Message(), msg) {
			t.Errorf("%s: %q, want it to contain %q", q, r.Message(), msg)
		}
	}
	want(t, "no token", e.do("GET", "/api/map", "", nil), 401)
	// Whole-world and wide boxes are fine.
	for _, q := range []string{"?bbox=-540,-90,540,90", "?bbox=-180,-90,180,90", "?bbox=170,-10,200,10"} {
		want(t, q, e.do("GET", "/api/map"+q, e.admin, nil), 200)
	}
	if after := e.snapshot(); !equalSnapshots(before, after) {
		t.Fatal("a map query changed the database")
	}
}

func equalSnapshots(a, b map[string]string) bool {
	for k, v := range a {
		if k != "audit_log" && b[k] != v {
			return false
		}
	}
	return true
}

func TestServerInfoAndLogs(t *testing.T) {
	e := newEnv(t, nil)
	r := e.do("GET", "/api/server", e.admin, nil)
	want(t, "server", r, 200)
	var s struct {
		Version, Started, PublicHost string
		Uptime                       *int64 `json:"uptimeSeconds"`
		Clients                      int
		Services                     []struct {
			Name, Status string
			Port         int
			Enabled      bool
		}
		Health map[string]*int
	}
	r.JSON(t, &s)
	if s.Version == "" || s.Started == "" || s.PublicHost != "127.0.0.1" || s.Uptime == nil || len(s.Services) != 6 {
		t.Fatalf("server = %+v", s)
	}
	for _, svc := range s.Services {
		if !svc.Enabled || svc.Status != "on" || svc.Port == 0 {
			t.Errorf("service %+v: every listener is on in this appliance", svc)
		}
	}
	if _, ok := s.Health["CPU"]; !ok {
		t.Fatalf("health = %v", s.Health)
	}

	r = e.do("GET", "/api/logs", e.admin, nil)
	want(t, "logs", r, 200)
	var l struct {
		LogData []struct{ Time, Type, File, Message string } `json:"log_data"`
	}
	r.JSON(t, &l)
	found := false
	for _, x := range l.LogData {
		found = found || x.Message != "" && strings.HasPrefix(x.Message, "Outpost is ready")
	}
	if !found {
		t.Fatalf("no 'Outpost is ready' among %d records", len(l.LogData))
	}
	r = e.do("GET", "/api/logs?since="+time.Now().Add(time.Hour).UTC().Format(time.RFC3339), e.admin, nil)
	want(t, "logs since", r, 200)
	r.JSON(t, &l)
	if len(l.LogData) != 0 {
		t.Fatalf("records from the future: %+v", l.LogData)
	}
	r = e.do("GET", "/api/logs?since=yesterday", e.admin, nil)
	want(t, "bad since", r, 400)
	if !strings.HasPrefix(r.Message(), "since: must be an ISO 8601 time") {
		t.Fatalf("message %q", r.Message())
	}
}

// TestConsoleServedByAppliance: the real appliance serves the embedded
// console build: index.html without a token, and every asset it names.
func TestConsoleServedByAppliance(t *testing.T) {
	e := newEnv(t, nil)
	r := e.do("GET", "/", "", nil)
	if r.Status != 200 || !strings.HasPrefix(r.Header.Get("Content-Type"), "text/html") ||
		!strings.Contains(r.Header.Get("Content-Security-Policy"), "script-src 'self'") {
		t.Fatalf("GET / = %d %v", r.Status, r.Header)
	}
	refs := regexp.MustCompile(`(?:src|href)="(assets/[^"]+)"`).FindAllStringSubmatch(string(r.Body), -1)
	if len(refs) < 3 {
		t.Fatalf("index.html names %d assets: %s", len(refs), r.Body)
	}
	for _, ref := range refs {
		a := e.do("GET", "/"+ref[1], "", nil)
		if a.Status != 200 || a.Header.Get("Cache-Control") != "public, max-age=31536000, immutable" || len(a.Body) == 0 {
			t.Errorf("%s = %d %v", ref[1], a.Status, a.Header)
		}
	}
	if strings.Contains(string(r.Body), "<script>") || strings.Contains(string(r.Body), " style=") {
		t.Fatal("index.html has inline script or style")
	}
}

// TestBasemapFromDataPackage: an MBTiles file uploaded as a data package
// becomes the basemap once it carries the keyword basemap; it is copied
// into the data directory (0600), served, and dropped with the package.
func TestBasemapFromDataPackage(t *testing.T) {
	e := newEnv(t, nil)
	p := filepath.Join(t.TempDir(), "area.mbtiles")
	testkit.WriteMBTiles(t, p, testkit.MBTilesMeta("Uploaded area", 0, 1), testkit.PyramidTiles(t, 1))
	content, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	r := e.upload(e.admin, "?filename=area.mbtiles&creatorUid=console-test", "assetfile", content)
	want(t, "upload", r, 200)
	var up struct{ ID string }
	r.JSON(t, &up)
	metadata := func() (m struct {
		Basemap      bool
		Name, Source string
	}) {
		resp, err := http.Get(e.base + "/tiles/metadata.json")
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		testkit.Response{Status: resp.StatusCode, Body: b}.JSON(t, &m)
		return m
	}
	time.Sleep(2500 * time.Millisecond) // past one recheck: still no basemap without the keyword
	if metadata().Basemap {
		t.Fatal("a package without the keyword became the basemap")
	}
	want(t, "keyword", e.do("PUT", "/DataPackageTable", e.admin,
		map[string]any{"DataPackages": []map[string]any{{"PrimaryKey": up.ID, "Keywords": "missionpackage,basemap"}}}), 200)
	testkit.WaitFor(t, "the uploaded basemap served", func() bool { return metadata().Basemap })
	if m := metadata(); m.Name != "Uploaded area" || m.Source != "data package area.mbtiles" {
		t.Fatalf("metadata = %+v", m)
	}
	tile := testkit.Do(t, nil, "GET", e.base+"/tiles/1/1/0", nil)
	if tile.Status != 200 || tile.Header.Get("Content-Type") != "image/png" || string(tile.Body) != string(testkit.PNGTile(t, 1, 1, 0)) {
		t.Fatalf("tile = %d %v", tile.Status, tile.Header)
	}
	copyPath := filepath.Join(e.app.Cfg.DataDir, "basemaps", sha(content)+".mbtiles")
	st, err := os.Stat(copyPath)
	if err != nil || st.Mode().Perm() != 0o600 {
		t.Fatalf("copy %s: %v %v", copyPath, st, err)
	}
	want(t, "delete", e.do("DELETE", "/DataPackageTable", e.admin,
		map[string]any{"DataPackages": []map[string]any{{"hash": sha(content)}}}), 200)
	testkit.WaitFor(t, "the basemap gone with its package", func() bool { return !metadata().Basemap })
	if _, err := os.Stat(copyPath); !os.IsNotExist(err) {
		t.Fatalf("the copy is still there: %v", err)
	}
	if r := testkit.Do(t, nil, "GET", e.base+"/tiles/1/1/0", nil); r.Status != 404 {
		t.Fatalf("tile after delete: %d", r.Status)
	}

	// A package that is not an MBTiles file never becomes the basemap; the
	// failure is logged once.
	junk := []byte("this is a zip of photos, not a tile set; someone tagged it by mistake")
	r = e.upload(e.admin, "?filename=photos.zip&creatorUid=console-test", "assetfile", junk)
	want(t, "upload junk", r, 200)
	r.JSON(t, &up)
	want(t, "keyword", e.do("PUT", "/DataPackageTable", e.admin,
		map[string]any{"DataPackages": []map[string]any{{"PrimaryKey": up.ID, "Keywords": "basemap"}}}), 200)
	testkit.WaitFor(t, "the failure logged", func() bool {
		metadata()
		return strings.Contains(e.logs.String(), "the basemap could not be opened")
	})
	if metadata().Basemap {
		t.Fatal("a file that is not MBTiles is served as the basemap")
	}
	if n := strings.Count(e.logs.String(), "the basemap could not be opened"); n != 1 {
		t.Fatalf("logged %d times", n)
	}
}

// TestConsolePollingNotAudited: the live views the console reads every few
// seconds are not audited for system users; everything else still is.
func TestConsolePollingNotAudited(t *testing.T) {
	e := newEnv(t, nil)
	const tok = "a-system-user-token-for-polling"
	want(t, "create", e.do("POST", "/ManageSystemUser/postSystemUser", e.admin,
		map[string]string{"username": "watcher", "password": "watcher password", "token": tok, "role": "admin"}), 201)
	for _, p := range []string{"/api/map", "/api/map?bbox=0,0,1,1", "/api/server", "/api/logs"} {
		want(t, p, e.do("GET", p, tok, nil), 200)
	}
	if n := e.count("audit_log", "endpoint LIKE '/api/%'"); n != 0 {
		t.Fatalf("%d polling reads audited", n)
	}
	want(t, "event", e.do("GET", "/api/map/event?uid=x", tok, nil), 404)
	want(t, "users", e.do("GET", "/api/users", tok, nil), 200)
	if n := e.count("audit_log", "endpoint IN ('/api/map/event?uid=x', '/api/users')"); n != 2 {
		t.Fatalf("%d other reads audited, want 2", n)
	}
}
