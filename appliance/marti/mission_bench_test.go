package marti_test

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"os"
	"runtime"
	"runtime/debug"
	"strings"
	"sync"
	"testing"
	"time"

	"outpost/appliance/apptest"
	"outpost/appliance/config"
	"outpost/appliance/netx"
	"outpost/appliance/store"
	"outpost/appliance/takclient"
	"outpost/internal/testkit"
)

// BenchmarkMission measures the heavy mission reads through the real
// appliance over HTTP: a mission holding 1,000 CoT uids (each with a
// stored event) and 200 files, read whole (get), as its <events> CoT list
// (cot) and as its change history of 1,201 records (changes).
func BenchmarkMission(b *testing.B) {
	a := apptest.Start(b, nil)
	st := a.Store()
	ctx := context.Background()
	h := st.StartHistory(store.HistoryOptions{}) // no budgets: all 1,000 are stored
	uids := make([]string, 1000)
	now := time.Now()
	for i := range uids {
		uids[i] = fmt.Sprintf("ANDROID-%04d", i)
		ev := takclient.SA(uids[i], fmt.Sprintf("UNIT-%d", i), 50+float64(i)/1000, 8)
		if !h.Add(ev, ev.AppendXML(nil), now, "bench", 0, store.AnonGroup) {
			b.Fatal("history refused an event")
		}
	}
	if err := h.Close(ctx); err != nil {
		b.Fatal(err)
	}
	hashes := make([]string, 200)
	for i := range hashes {
		p, err := st.Files().PutDataPackage(ctx, store.DataPackageInput{Name: fmt.Sprintf("file-%03d.txt", i), MIMEType: "text/plain",
			Groups: store.AnonGroup},
			strings.NewReader(fmt.Sprintf("content of file %d", i)))
		if err != nil {
			b.Fatal(err)
		}
		hashes[i] = p.Hash
	}
	base := a.URL(b, netx.ListenerHTTP, "/Marti/api/missions/big")
	do := func(method, url string, body any, want int) {
		resp := testkit.Do(b, nil, method, url, body)
		if resp.Status != want {
			b.Fatalf("%s %s: %d %s", method, url, resp.Status, resp.Body)
		}
	}
	do("PUT", base+"?creatorUid=bench", nil, 201)
	do("PUT", base+"/contents?creatorUid=bench", map[string]any{"hashes": hashes}, 200)
	do("PUT", base+"/contents?creatorUid=bench", map[string]any{"uids": uids[:500]}, 200)
	do("PUT", base+"/contents?creatorUid=bench", map[string]any{"uids": uids[500:]}, 200)

	for _, c := range []struct{ name, path, want string }{
		{"get", "", `"data":"ANDROID-0999"`},
		{"cot", "/cot", `uid="ANDROID-0999"`},
		{"changes", "/changes", `"contentUid":"ANDROID-0999"`},
	} {
		b.Run(c.name, func(b *testing.B) {
			body := fetch(b, base+c.path)
			if !strings.Contains(body, c.want) {
				b.Fatalf("%s: %q missing", c.name, c.want)
			}
			b.SetBytes(int64(len(body)))
			b.ReportAllocs()
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				fetch(b, base+c.path)
			}
		})
	}
}

func fetch(b *testing.B, url string) string {
	resp, err := http.Get(url)
	if err != nil {
		b.Fatal(err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil || resp.StatusCode != 200 {
		b.Fatalf("GET %s: %d %v", url, resp.StatusCode, err)
	}
	return string(body)
}

// seedChanges creates mission name holding n CoT uids, added a thousand at
// a time through the store: n+1 change records.
func seedChanges(tb testing.TB, a *apptest.App, name string, n int) {
	tb.Helper()
	ctx := context.Background()
	ms := a.Store().Missions()
	if _, _, _, err := ms.PutMission(ctx, name, store.MissionInput{CreatorUID: "bench"}); err != nil {
		tb.Fatal(err)
	}
	for i := 0; i < n; i += store.MaxMissionBatch {
		uids := make([]string, 0, store.MaxMissionBatch)
		for j := i; j < min(n, i+store.MaxMissionBatch); j++ {
			uids = append(uids, fmt.Sprintf("%s-uid-%06d", name, j))
		}
		if _, err := ms.AddMissionContents(ctx, name, nil, uids, "bench"); err != nil {
			tb.Fatal(err)
		}
	}
}

// readMemory has clients clients read url at once, rounds times each, and
// returns the bytes allocated per request (runtime.MemStats TotalAlloc of
// this process: server and clients, the bodies discarded as they arrive)
// and the largest answer.
func readMemory(tb testing.TB, url string, clients, rounds int) (perRequest uint64, largest int64) {
	tb.Helper()
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	var (
		wg   sync.WaitGroup
		mu   sync.Mutex
		errs []error
	)
	for range clients {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for range rounds {
				resp, err := http.Get(url)
				if err != nil {
					mu.Lock()
					errs = append(errs, err)
					mu.Unlock()
					return
				}
				n, err := io.Copy(io.Discard, resp.Body)
				resp.Body.Close()
				mu.Lock()
				if err != nil || resp.StatusCode != 200 {
					errs = append(errs, fmt.Errorf("GET %s: %d %v", url, resp.StatusCode, err))
				}
				largest = max(largest, n)
				mu.Unlock()
			}
		}()
	}
	wg.Wait()
	runtime.ReadMemStats(&after)
	if len(errs) > 0 {
		tb.Fatal(errs[0])
	}
	return (after.TotalAlloc - before.TotalAlloc) / uint64(clients*rounds), largest
}

// TestMissionReadMemoryFlat: what reading a mission's history costs does
// not grow with the history. Ten clients read the change history, and the
// mission with logs=true&changes=true, of a mission with 500 changes and
// of one with 10,000: the bytes allocated per request stay within half
// again (the history's part of the mission: the mission with and without
// them, since its uids grow with this seeding), and no answer passes the
// page's bound. BenchmarkMissionChanges is the large version.
func TestMissionReadMemoryFlat(t *testing.T) {
	a := apptest.Start(t, func(c *config.Config) { c.MissionMaxChanges, c.MissionMaxContents = 0, 0 })
	seedChanges(t, a, "small", 500)
	seedChanges(t, a, "large", 10000)
	base := a.URL(t, netx.ListenerHTTP, "/Marti/api/missions/")
	cost := func(name string) (changes, history uint64) {
		changes, largest := readMemory(t, base+name+"/changes", 10, 3)
		if largest > 3<<20 {
			t.Fatalf("%s: an answer of %d bytes", name, largest)
		}
		with, _ := readMemory(t, base+name+"?logs=true&changes=true", 10, 3)
		without, _ := readMemory(t, base+name, 10, 3)
		return changes, with - min(with, without)
	}
	sc, sh := cost("small")
	lc, lh := cost("large")
	t.Logf("bytes allocated per request, 500 → 10,000 changes: changes %d → %d, the mission's history %d → %d", sc, lc, sh, lh)
	if lc > sc*3/2+64<<10 || lh > sh*3/2+256<<10 {
		t.Fatalf("reading grows with the history: changes %d → %d, the mission's history %d → %d bytes per request", sc, lc, sh, lh)
	}
}

// BenchmarkMissionChanges: ten clients at once read the change history of
// a mission with 100,000 changes (GET .../changes, the newest page), with
// the bytes allocated per request and the growth of this process's
// resident memory (VmHWM, the peak) while they read.
func BenchmarkMissionChanges(b *testing.B) {
	a := apptest.Start(b, func(c *config.Config) { c.MissionMaxChanges, c.MissionMaxContents = 0, 0 })
	seedChanges(b, a, "huge", 100000)
	url := a.URL(b, netx.ListenerHTTP, "/Marti/api/missions/huge/changes")
	readMemory(b, url, 10, 1) // warm
	runtime.GC()
	debug.FreeOSMemory()
	pid := os.Getpid()
	rss0 := procKB(b, pid, "VmRSS")
	resetPeak(pid)
	b.ResetTimer()
	var perRequest uint64
	var largest int64
	for i := 0; i < b.N; i++ {
		perRequest, largest = readMemory(b, url, 10, 1)
	}
	b.StopTimer()
	b.ReportMetric(float64(perRequest), "alloc-B/req")
	b.ReportMetric(float64(largest), "answer-B")
	b.ReportMetric(float64(procKB(b, pid, "VmHWM")-rss0)/1024, "peak-RSS-growth-MiB")
}

// BenchmarkMissionLarge measures the reads of issue 24's large mission
// through the real appliance over HTTP: 2,000 CoT uids (five stored events
// each, 10,000 in the history) and a change history of 10,000 records
// (6,000 additions, 4,000 removals of uids that came and went). Read: the
// mission with its changes (get, the newest page of 500), its <events>
// (cot, 2,000 events), its KMZ (kml, 2,000 placemarks) and its changes of
// the last hour (changes, secago=3600, the newest page).
func BenchmarkMissionLarge(b *testing.B) {
	a := apptest.Start(b, func(c *config.Config) { c.MissionMaxChanges, c.MissionMaxChangeBytes = 0, 0 })
	st := a.Store()
	ctx := context.Background()
	ms := st.Missions()
	h := st.StartHistory(store.HistoryOptions{})
	const kept, transient = 2000, 4000
	uids := make([]string, kept)
	now := time.Now()
	for i := range uids {
		uids[i] = fmt.Sprintf("ANDROID-%04d", i)
		for j := range 5 {
			ev := takclient.SA(uids[i], fmt.Sprintf("UNIT-%d", i), 50+float64(i)/1000+float64(j)/1e5, 8)
			if !h.Add(ev, ev.AppendXML(nil), now.Add(time.Duration(j-5)*time.Minute), "bench", 0, store.AnonGroup) {
				b.Fatal("history refused an event")
			}
		}
	}
	if err := h.Close(ctx); err != nil {
		b.Fatal(err)
	}
	const name = "large"
	if _, _, _, err := ms.PutMission(ctx, name, store.MissionInput{CreatorUID: "bench"}); err != nil {
		b.Fatal(err)
	}
	gone := make([]string, transient)
	for i := range gone {
		gone[i] = fmt.Sprintf("GONE-%04d", i)
	}
	for _, list := range [][]string{uids, gone} {
		for i := 0; i < len(list); i += store.MaxMissionBatch {
			if _, err := ms.AddMissionContents(ctx, name, nil, list[i:min(len(list), i+store.MaxMissionBatch)], "bench"); err != nil {
				b.Fatal(err)
			}
		}
	}
	for _, u := range gone {
		if _, err := ms.RemoveMissionContent(ctx, name, "", u, "bench"); err != nil {
			b.Fatal(err)
		}
	}
	m, err := ms.MissionByName(ctx, name)
	if err != nil {
		b.Fatal(err)
	}
	if in, err := ms.MissionUIDs(ctx, m.ID); err != nil || len(in) != kept {
		b.Fatalf("mission uids: %d %v", len(in), err)
	}
	if all, _, err := ms.MissionChanges(ctx, name, time.Time{}, time.Time{}, store.Page{Limit: 5000}); err != nil || len(all) != 5000 {
		b.Fatalf("changes: %d %v", len(all), err)
	}

	base := a.URL(b, netx.ListenerHTTP, "/Marti/api/missions/"+name)
	if n := strings.Count(fetch(b, a.URL(b, netx.ListenerHTTP, "/Marti/ExportMissionKML?format=kml&missionName="+name)), "<Placemark"); n != kept {
		b.Fatalf("the KML holds %d placemarks, want %d", n, kept)
	}
	for _, c := range []struct{ name, url, want string }{
		{"get", base + "?changes=true", `"type":"REMOVE_CONTENT"`},
		{"cot", base + "/cot", `uid="ANDROID-1999"`},
		{"kml", a.URL(b, netx.ListenerHTTP, "/Marti/ExportMissionKML?missionName="+name), "doc.kml"},
		{"changes", base + "/changes?secago=3600", `"contentUid":"GONE-3999"`},
	} {
		b.Run(c.name, func(b *testing.B) {
			body := fetch(b, c.url)
			if !strings.Contains(body, c.want) {
				b.Fatalf("%s: %q missing", c.name, c.want)
			}
			b.SetBytes(int64(len(body)))
			b.ReportAllocs()
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				fetch(b, c.url)
			}
		})
	}
}
