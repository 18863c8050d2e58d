package store

import (
	"context"
	"fmt"
	"testing"
	"time"
)

// TestListingReleasesReadConnection: a listing hands its rows on only once
// their chunk is read and the connection is back in the pool, so a caller
// that is slow to take them (a client reading its answer slowly) never
// holds a read connection. With one read connection, a read made while the
// listing is under way would wait for ever if the listing kept it.
func TestListingReleasesReadConnection(t *testing.T) {
	s := openTest(t, Options{ReadConns: 1, Budgets: Budgets{VideoConnections: 2000}})
	ctx := context.Background()
	const n = 2*listChunk + 10 // three chunks, the last one short
	for i := 0; i < n; i += MaxVideoBatch {
		var batch []VideoConnection
		for j := i; j < min(i+MaxVideoBatch, n); j++ {
			batch = append(batch, videoConn(fmt.Sprintf("v%04d", j), 1))
		}
		if err := s.Videos().PutVideoConnections(ctx, batch); err != nil {
			t.Fatal(err)
		}
	}
	seen := map[string]bool{}
	reads := 0
	err := s.Videos().EachVideoConnection(ctx, func(c VideoConnection) error {
		if seen[c.UID] {
			t.Errorf("%s listed twice", c.UID)
		}
		seen[c.UID] = true
		if len(seen)%listChunk == 1 { // the first row of each chunk
			rctx, cancel := context.WithTimeout(ctx, 5*time.Second)
			defer cancel()
			if _, err := s.Videos().VideoConnectionByUID(rctx, "v0000"); err != nil {
				return fmt.Errorf("a read during the listing: %w", err)
			}
			reads++
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(seen) != n || reads != 3 {
		t.Fatalf("listed %d of %d connections, %d reads between chunks (want 3)", len(seen), n, reads)
	}
}

// TestListingStopsAtCallerError: an error of the caller ends the listing
// and comes back as it is.
func TestListingStopsAtCallerError(t *testing.T) {
	s := openTest(t, Options{})
	ctx := context.Background()
	if err := s.Videos().PutVideoConnections(ctx, []VideoConnection{videoConn("a", 1), videoConn("b", 1)}); err != nil {
		t.Fatal(err)
	}
	stop := fmt.Errorf("client went away")
	calls := 0
	err := s.Videos().EachVideoConnection(ctx, func(VideoConnection) error { calls++; return stop })
	if err != stop || calls != 1 {
		t.Fatalf("err %v after %d calls, want the caller's error after 1", err, calls)
	}
}
