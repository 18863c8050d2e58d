package httpapi

import (
	"net/http/httptest"
	"testing"
	"time"
)

func TestWriteTooManyRequests(t *testing.T) {
	rec := httptest.NewRecorder()
	WriteTooManyRequests(rec, 1500*time.Millisecond, "slow down")
	if rec.Code != 429 || rec.Header().Get("Retry-After") != "2" || rec.Body.String() != `{"message":"slow down"}`+"\n" {
		t.Fatalf("%d %q %q", rec.Code, rec.Header().Get("Retry-After"), rec.Body)
	}
	if RetryAfter(0) != 1 || RetryAfter(time.Minute) != 60 {
		t.Fatal("RetryAfter")
	}
}
