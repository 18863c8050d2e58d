package store

import (
	"context"
	"errors"
	"sync"
	"testing"
)

// TestPasswordGate: password checks, right or wrong, are limited per second
// for the whole process; over the limit they fail fast with ErrBusy and do
// no hashing.
func TestPasswordGate(t *testing.T) {
	s := openTest(t, Options{PasswordChecksPerSecond: 2, PasswordCheckConcurrency: 1})
	ctx := context.Background()
	if _, err := s.Accounts().CreateUser(ctx, UserInput{Name: "alice", Password: "correct horse"}); err != nil {
		t.Fatal(err)
	}
	results := map[string]int{}
	for i := range 10 {
		pw := "wrong"
		if i%2 == 0 {
			pw = "correct horse"
		}
		_, err := s.Accounts().VerifyPassword(ctx, "alice", pw)
		switch {
		case err == nil:
			results["ok"]++
		case errors.Is(err, ErrBadCredentials):
			results["bad"]++
		case errors.Is(err, ErrBusy):
			results["busy"]++
		default:
			t.Fatal(err)
		}
	}
	// A burst of two seconds' worth (4) runs; the rest is refused.
	if results["ok"]+results["bad"] != 4 || results["busy"] != 6 {
		t.Fatalf("results %v", results)
	}
}

func TestPasswordGateConcurrency(t *testing.T) {
	g := newPasswordGate(-1, 2)
	var wg sync.WaitGroup
	var mu sync.Mutex
	in, peak := 0, 0
	for range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			release, err := g.enter(context.Background())
			if err != nil {
				t.Error(err)
				return
			}
			mu.Lock()
			in++
			peak = max(peak, in)
			mu.Unlock()
			for range 1000 {
				_ = make([]byte, 64)
			}
			mu.Lock()
			in--
			mu.Unlock()
			release()
		}()
	}
	wg.Wait()
	if peak > 2 {
		t.Fatalf("%d checks ran at once, limit 2", peak)
	}
}
