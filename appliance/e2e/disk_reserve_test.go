package e2e

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"math/rand/v2"
	"mime/multipart"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"outpost/appliance/admin"
	"outpost/appliance/apptest"
	"outpost/appliance/config"
	"outpost/appliance/cot"
	"outpost/appliance/diskspace"
	"outpost/appliance/netx"
	"outpost/appliance/takclient"
	"outpost/internal/testkit"
)

// The disk reserve on a real (small) filesystem: issue 23's anonymous
// uploads fill a 48 MiB disk; with the reserve they stop at 507 before the
// database is full, the relay carries on, and uploads work again once space
// is freed, without a restart.
func TestDiskReserveOnASmallDisk(t *testing.T) {
	const mib = 1 << 20
	const reserve = 8 * mib
	dir := testkit.SmallFS(t, 48*mib)
	a := apptest.Start(t, func(c *config.Config) {
		c.DataDir = filepath.Join(dir, "data")
		c.DiskReserve = diskspace.Amount{Set: true, Bytes: reserve}
		c.DiskFloor = diskspace.Amount{Set: true, Bytes: 2 * mib}
	})
	ctx := context.Background()
	files := a.Store().Files()
	upload := func(body io.Reader, contentLength int64) testkit.Response {
		t.Helper()
		req, err := http.NewRequest("POST", a.URL(t, netx.ListenerHTTP, "/Marti/sync/upload?name=f.bin&creatorUid=ANDROID-1"), body)
		if err != nil {
			t.Fatal(err)
		}
		req.Header.Set("Content-Type", "application/octet-stream")
		req.ContentLength = contentLength
		resp, err := testkit.Client.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return testkit.Response{Status: resp.StatusCode, Header: resp.Header, Body: b}
	}
	seed := uint64(0)
	file := func(n int) *strings.Reader { // distinct content every time: the store keeps one package per hash
		seed++
		r := rand.New(rand.NewPCG(seed, 23))
		b := make([]byte, n)
		for i := range b {
			b[i] = byte(r.Uint32())
		}
		return strings.NewReader(string(b))
	}

	// Above the reserve: 3 MiB uploads succeed.
	for i := range 3 {
		if r := upload(file(3*mib), 3*mib); r.Status != 200 {
			t.Fatalf("upload %d above the reserve: %d %s", i, r.Status, r.Body)
		}
	}
	// A declared length that alone would cross the reserve: 413 before a
	// byte of the body is read (once the server's stat is as new as ours).
	waitDisk(t, a, func(d disk) bool { return d.FreeBytes <= testkit.FreeBytes(t, dir)+mib })
	if status, msg := declareOnly(t, a.Addr(t, netx.ListenerHTTP), testkit.FreeBytes(t, dir)); status != 413 || !strings.Contains(msg, "reserve") {
		t.Fatalf("declared length over the free space: %d %s", status, msg)
	}

	// A streamed upload (no length announced) that crosses the reserve
	// mid-stream is cut, and leaves no trace.
	before, err := files.CountBlobs(ctx)
	if err != nil {
		t.Fatal(err)
	}
	pkgs, _ := files.DataPackages(ctx)
	filler := testkit.Fill(t, dir, "filler", reserve+4*mib)
	waitDisk(t, a, func(d disk) bool { return d.FreeBytes <= reserve+4*mib && !d.BelowReserve })
	if r := testkit.PostStreaming(t, a.Addr(t, netx.ListenerHTTP), "/Marti/sync/upload?name=stream.bin&creatorUid=ANDROID-1", "application/octet-stream", file(16*mib)); r.Status != http.StatusInsufficientStorage ||
		!strings.Contains(r.Message(), "the upload was cut") {
		t.Fatalf("streamed upload crossing the reserve: %d %s", r.Status, r.Message())
	}
	after, err := files.CountBlobs(ctx)
	if err != nil || after != before {
		t.Fatalf("blobs before the cut upload %+v, after %+v (%v)", before, after, err)
	}
	if now, _ := files.DataPackages(ctx); len(now) != len(pkgs) {
		t.Fatalf("%d data packages before the cut upload, %d after", len(pkgs), len(now))
	}

	// Below the reserve: 507 for every upload, whatever its size.
	testkit.Fill(t, dir, "filler", reserve-2*mib)
	waitDisk(t, a, func(d disk) bool { return d.BelowReserve && !d.BelowFloor })
	if r := upload(file(1024), 1024); r.Status != http.StatusInsufficientStorage || !strings.Contains(r.Message(), "below the server's reserve") {
		t.Fatalf("upload below the reserve: %d %s", r.Status, r.Body)
	}
	// The management API's data packages share the upload edge.
	var mp strings.Builder
	mw := multipart.NewWriter(&mp)
	fw, _ := mw.CreateFormFile("assetfile", "p.zip")
	io.WriteString(fw, "PK small")
	mw.Close()
	if r := testkit.Do(t, nil, "POST", a.URL(t, netx.ListenerREST, "/DataPackageTable?filename=p.zip&creatorUid=ANDROID-1"), mp.String(),
		"Content-Type", mw.FormDataContentType(), "Authorization", "Bearer "+adminToken(t, a)); r.Status != http.StatusInsufficientStorage {
		t.Fatalf("data package below the reserve: %d %s", r.Status, r.Body)
	}
	// Small writes keep working above the floor.
	if r := testkit.Do(t, nil, "PUT", a.URL(t, netx.ListenerHTTP, "/Marti/api/missions/disk-ops?creatorUid=ANDROID-1"), nil); r.Status != 201 {
		t.Fatalf("mission below the reserve, above the floor: %d %s", r.Status, r.Body)
	}
	// The relay never stops: two clients exchange their positions, which the
	// history skips and counts.
	c1, c2 := a.DialTCP(t), a.DialTCP(t)
	c1.Send(takclient.SA("DISK-1", "One", 1, 1))
	if _, err := c2.WaitFor(func(e *cot.Event) bool { return e.UID == "DISK-1" }, 5*time.Second); err != nil {
		t.Fatal(err)
	}
	c2.Send(takclient.SA("DISK-2", "Two", 2, 2))
	if _, err := c1.WaitFor(func(e *cot.Event) bool { return e.UID == "DISK-2" }, 5*time.Second); err != nil {
		t.Fatal(err)
	}
	m := testkit.Do(t, nil, "GET", a.URL(t, netx.ListenerREST, "/metrics"), nil)
	if v, ok := metricValue(t, m.Body, "outpost_history_events_total", map[string]string{"outcome": "disk_reserve"}); !ok || v < 2 {
		t.Errorf("history skipped for the reserve: %v (present %v), want at least 2", v, ok)
	}
	if v, _ := metricValue(t, m.Body, "outpost_disk_reserve_bytes", nil); v != reserve {
		t.Errorf("outpost_disk_reserve_bytes %v, want %d", v, reserve)
	}
	if v, ok := metricValue(t, m.Body, "outpost_disk_free_bytes", nil); !ok || v <= 0 || v >= reserve {
		t.Errorf("outpost_disk_free_bytes %v (present %v), want between 0 and the reserve", v, ok)
	}

	// Space freed: uploads work again, without a restart.
	if err := os.Remove(filler); err != nil {
		t.Fatal(err)
	}
	waitDisk(t, a, func(d disk) bool { return !d.BelowReserve })
	if r := upload(file(3*mib), 3*mib); r.Status != 200 {
		t.Fatalf("upload after space was freed: %d %s", r.Status, r.Body)
	}
}

// disk is the "disk" field of GET /api/server.
type disk struct {
	FreeBytes, TotalBytes, ReserveBytes, FloorBytes int64
	BelowReserve, BelowFloor                        bool
}

// waitDisk polls GET /api/server until its disk field satisfies cond.
func waitDisk(t *testing.T, a *apptest.App, cond func(disk) bool) {
	t.Helper()
	tok := adminToken(t, a)
	var last disk
	testkit.WaitFor(t, "the server's disk field", func() bool {
		r := testkit.Do(t, nil, "GET", a.URL(t, netx.ListenerREST, "/api/server"), nil, "Authorization", "Bearer "+tok)
		var out struct{ Disk *disk }
		r.JSON(t, &out)
		if out.Disk == nil {
			t.Fatalf("GET /api/server has no disk field: %s", r.Body)
		}
		last = *out.Disk
		if last.TotalBytes <= 0 || last.ReserveBytes <= 0 || last.FloorBytes <= 0 {
			t.Fatalf("disk field %+v", last)
		}
		return cond(last)
	})
}

// adminToken is the first run's API token.
func adminToken(t *testing.T, a *apptest.App) string {
	t.Helper()
	tok, err := os.ReadFile(filepath.Join(a.Cfg.DataDir, admin.AdminTokenFile))
	if err != nil {
		t.Fatal(err)
	}
	return strings.TrimSpace(string(tok))
}

// declareOnly announces a body of free bytes (more than the reserve leaves)
// on the raw client API and sends only its first 64 KiB; it returns the
// status and message answered.
func declareOnly(t *testing.T, addr string, free int64) (int, string) {
	t.Helper()
	conn, err := net.DialTimeout("tcp", addr, 5*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	conn.SetDeadline(time.Now().Add(10 * time.Second))
	fmt.Fprintf(conn, "POST /Marti/sync/upload?name=big.bin&creatorUid=ANDROID-1 HTTP/1.1\r\nHost: outpost\r\n"+
		"Content-Type: application/octet-stream\r\nContent-Length: %d\r\n\r\n", free)
	conn.Write(make([]byte, 64<<10))
	resp, err := http.ReadResponse(bufio.NewReader(conn), nil)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, testkit.Response{Body: b}.Message()
}
