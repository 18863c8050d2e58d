package marti_test

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"outpost/appliance"
	"outpost/appliance/apptest"
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
		p, err := st.Files().PutDataPackage(ctx, store.DataPackageInput{Name: fmt.Sprintf("file-%03d.txt", i), MIMEType: "text/plain"},
			strings.NewReader(fmt.Sprintf("content of file %d", i)))
		if err != nil {
			b.Fatal(err)
		}
		hashes[i] = p.Hash
	}
	base := a.URL(b, appliance.ListenerHTTP, "/Marti/api/missions/big")
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
