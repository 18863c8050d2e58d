package store

import (
	"context"
	"errors"
	"testing"
)

func TestPing(t *testing.T) {
	s := openTest(t, Options{})
	if err := s.Ping(context.Background()); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if err := s.Ping(ctx); !errors.Is(err, context.Canceled) {
		t.Fatalf("ping with a cancelled context: %v", err)
	}
	s.Close()
	if err := s.Ping(context.Background()); !errors.Is(err, ErrClosed) {
		t.Fatalf("ping after close: %v", err)
	}
}
