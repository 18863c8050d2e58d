package store

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
)

func videoConn(uid string, feeds int) VideoConnection {
	c := VideoConnection{UID: uid, Alias: "cam " + uid, Active: true}
	for i := range feeds {
		c.Feeds = append(c.Feeds, VideoFeed{UID: fmt.Sprintf("%s-f%d", uid, i), Alias: "feed", URL: "rtsp://10.0.0.5:8554/live", Active: true, RoverPort: -1})
	}
	return c
}

func TestVideoConnections(t *testing.T) {
	s := openTest(t, Options{})
	ctx := context.Background()
	if list, err := s.Videos().VideoConnections(ctx); err != nil || len(list) != 0 {
		t.Fatalf("empty table: %v %v", list, err)
	}
	if err := s.Videos().PutVideoConnections(ctx, []VideoConnection{videoConn("a", 1), videoConn("b", 2)}); err != nil {
		t.Fatal(err)
	}
	// Publishing a uid again replaces the connection whole.
	a2 := videoConn("a", 3)
	a2.Alias = "renamed"
	if err := s.Videos().PutVideoConnections(ctx, []VideoConnection{a2}); err != nil {
		t.Fatal(err)
	}
	list, err := s.Videos().VideoConnections(ctx)
	if err != nil || len(list) != 2 {
		t.Fatalf("list: %v %v", list, err)
	}
	got, err := s.Videos().VideoConnectionByUID(ctx, "a")
	if err != nil || got.Alias != "renamed" || len(got.Feeds) != 3 || got.Feeds[2].URL != "rtsp://10.0.0.5:8554/live" || got.Created.IsZero() {
		t.Fatalf("a: %+v %v", got, err)
	}
	if err := s.Videos().DeleteVideoConnection(ctx, "b"); err != nil {
		t.Fatal(err)
	}
	if err := s.Videos().DeleteVideoConnection(ctx, "b"); !errors.Is(err, ErrNotFound) {
		t.Fatalf("second delete: %v", err)
	}
	if _, err := s.Videos().VideoConnectionByUID(ctx, "b"); !errors.Is(err, ErrNotFound) {
		t.Fatalf("deleted: %v", err)
	}
}

func TestVideoConnectionLimits(t *testing.T) {
	const budget = 2 * MaxVideoBatch
	s := openTest(t, Options{Budgets: Budgets{VideoConnections: budget}})
	ctx := context.Background()
	bad := func(mut func(*VideoConnection)) VideoConnection { c := videoConn("x", 1); mut(&c); return c }
	for _, tc := range []struct {
		c    VideoConnection
		want string
	}{
		{bad(func(c *VideoConnection) { c.UID = "" }), "uid is required"},
		{bad(func(c *VideoConnection) { c.Feeds = nil }), "feeds must hold 1 to 16"},
		{videoConn("x", MaxVideoFeeds+1), "feeds must hold 1 to 16"},
		{bad(func(c *VideoConnection) { c.Feeds[0].URL = "" }), "feeds[0].url is required"},
		{bad(func(c *VideoConnection) { c.Feeds[0].URL = strings.Repeat("u", 3000) }), "feeds[0].url must be"},
		{bad(func(c *VideoConnection) { c.Feeds[0].Alias = "a\x00b" }), "feeds[0].alias contains a control character"},
		{bad(func(c *VideoConnection) { c.Feeds[0].RoverPort = 70000 }), "feeds[0].roverPort must be -1 to 65535"},
		{bad(func(c *VideoConnection) { c.Feeds[0].NetworkTimeout = -5 }), "feeds[0].networkTimeout"},
	} {
		err := s.Videos().PutVideoConnections(ctx, []VideoConnection{videoConn("ok", 1), tc.c})
		if !errors.Is(err, ErrInvalid) || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("want %q, got %v", tc.want, err)
		}
	}
	if list, _ := s.Videos().VideoConnections(ctx); len(list) != 0 {
		t.Fatalf("a refused batch stored %d connections", len(list))
	}
	if err := s.Videos().PutVideoConnections(ctx, nil); !errors.Is(err, ErrInvalid) {
		t.Fatalf("empty batch: %v", err)
	}
	// The table is bounded: the connection over the cap is refused and
	// nothing of its batch is kept.
	for i := 0; i < budget; i += MaxVideoBatch {
		batch := make([]VideoConnection, 0, MaxVideoBatch)
		for j := i; j < i+MaxVideoBatch; j++ {
			batch = append(batch, videoConn(fmt.Sprint("c", j), 1))
		}
		if err := s.Videos().PutVideoConnections(ctx, batch); err != nil {
			t.Fatal(err)
		}
	}
	err := s.Videos().PutVideoConnections(ctx, []VideoConnection{videoConn("c0", 2), videoConn("one-too-many", 1)})
	if !errors.Is(err, ErrConflict) || !strings.Contains(err.Error(), fmt.Sprintf("at most %d video connections are kept (maxVideoConnections)", budget)) {
		t.Fatalf("over the cap: %v", err)
	}
	if c, _ := s.Videos().VideoConnectionByUID(ctx, "c0"); len(c.Feeds) != 1 {
		t.Fatal("a refused batch changed a connection")
	}
	// Replacing an existing one is still allowed at the cap.
	if err := s.Videos().PutVideoConnections(ctx, []VideoConnection{videoConn("c0", 2)}); err != nil {
		t.Fatalf("replace at the cap: %v", err)
	}
}
