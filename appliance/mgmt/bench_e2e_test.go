package mgmt_test

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"outpost/appliance/store"
)

// BenchmarkListDataPackages10k: GET /DataPackageTable over real HTTP on a
// running appliance holding 10,000 packages (the whole JSON list each time).
func BenchmarkListDataPackages10k(b *testing.B) {
	e := newEnv(b, nil)
	ctx := context.Background()
	start := time.Now()
	for i := range 10_000 {
		_, err := e.app.Store().PutDataPackage(ctx, store.DataPackageInput{
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
