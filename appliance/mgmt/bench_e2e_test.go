package mgmt_test

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"math/rand/v2"
	"net/http"
	"strings"
	"testing"
	"time"

	"outpost/appliance/geo"
	"outpost/appliance/store"
	"outpost/appliance/takclient"
)

// BenchmarkListDataPackages10k: GET /DataPackageTable over real HTTP on a
// running appliance holding 10,000 packages (the whole JSON list each time).
func BenchmarkListDataPackages10k(b *testing.B) {
	e := newEnv(b, nil)
	ctx := context.Background()
	start := time.Now()
	for i := range 10_000 {
		_, err := e.app.Store().Files().PutDataPackage(ctx, store.DataPackageInput{
			Name: fmt.Sprintf("package-%05d.zip", i), SubmissionUser: "ANDROID-0123456789", CreatorUID: "ANDROID-0123456789",
			Keywords: store.UploadKeywords(), MIMEType: "application/zip",
		}, strings.NewReader(fmt.Sprint("content ", i)))
		if err != nil {
			b.Fatal(err)
		}
	}
	b.Logf("stored 10,000 packages in %v", time.Since(start).Round(time.Millisecond))
	req, _ := http.NewRequest("GET", e.base+"/DataPackageTable", nil)
	req.Header.Set("Authorization", "Bearer "+e.admin)
	var size int64
	for b.Loop() {
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			b.Fatal(err)
		}
		size, _ = io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		if resp.StatusCode != 200 {
			b.Fatalf("status %d", resp.StatusCode)
		}
	}
	b.ReportMetric(float64(size), "bytes/response")
}

// BenchmarkGetGeoObject100k: GET /ManageGeoObject/getGeoObject over real
// HTTP on a running appliance whose history holds 100,000 objects from
// clients (markers of several types and attitudes, and one in ten a
// client's own position, which the query leaves out) spread evenly over
// 100 km × 100 km, for the default radius and two larger ones, and the
// store's query of the largest on its own.
func BenchmarkGetGeoObject100k(b *testing.B) {
	e := newEnv(b, nil)
	ctx := context.Background()
	h := e.app.Store().StartHistory(store.HistoryOptions{})
	defer h.Close(ctx)
	center := geo.Point{Lat: 59.3, Lon: 18.0}
	rng := rand.New(rand.NewPCG(1, 2))
	types := []string{"a-h-G-U-C-I-d", "a-f-G", "a-n-G-E-V-C", "a-u-G", "a-h-G-E-W-O"}
	start := time.Now()
	now := time.Now().UTC()
	for i := range 100_000 {
		p := geo.Point{Lat: center.Lat + (rng.Float64()-0.5)*0.9, Lon: center.Lon + (rng.Float64()-0.5)*1.76}
		ev := marker(fmt.Sprintf("obj-%06d", i), types[i%len(types)], fmt.Sprint("M.", i), p.Lat, p.Lon, time.Hour)
		if i%10 == 0 {
			ev = takclient.SA(fmt.Sprintf("ANDROID-%06d", i), fmt.Sprint("C", i), p.Lat, p.Lon)
		}
		for !h.Add(ev, nil, now, "cot-tcp", 0, store.AnonGroup) {
			if err := h.Flush(ctx); err != nil {
				b.Fatal(err)
			}
		}
	}
	if err := h.Flush(ctx); err != nil {
		b.Fatal(err)
	}
	b.Logf("stored 100,000 objects in %v", time.Since(start).Round(time.Millisecond))
	for _, radius := range []int{100, 1000, 10000} {
		b.Run(fmt.Sprintf("radius=%dm", radius), func(b *testing.B) {
			req, _ := http.NewRequest("GET", fmt.Sprintf("%s/ManageGeoObject/getGeoObject?latitude=%v&longitude=%v&radius=%d",
				e.base, center.Lat, center.Lon, radius), nil)
			req.Header.Set("Authorization", "Bearer "+e.admin)
			var body []byte
			for b.Loop() {
				resp, err := http.DefaultClient.Do(req)
				if err != nil {
					b.Fatal(err)
				}
				body, _ = io.ReadAll(resp.Body)
				resp.Body.Close()
				if resp.StatusCode != 200 {
					b.Fatalf("status %d: %s", resp.StatusCode, body)
				}
			}
			var items []json.RawMessage
			json.Unmarshal(body, &items)
			b.ReportMetric(float64(len(items)), "objects/response")
		})
	}
	// The store's part of the largest query alone.
	b.Run("store-query/radius=10000m", func(b *testing.B) {
		box := geo.BoundingBox(center, 10000)
		for b.Loop() {
			if _, err := e.app.Store().Objects().GeoObjectsInBox(ctx, box.MinLat, box.MinLon, box.MaxLat, box.MaxLon, time.Now(), store.AllGroups); err != nil {
				b.Fatal(err)
			}
		}
	})
}
