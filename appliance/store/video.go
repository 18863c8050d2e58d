package store

// Video connections that clients publish and list through the client API
// (/Marti/vcm in XML, /Marti/api/video in JSON). The table is small and
// bounded: at most Budgets.VideoConnections connections of at most
// MaxVideoFeeds feeds each, every text field bounded. A connection is
// replaced whole when its uid is published again.

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"time"
)

// Limits of the video connection table.
const (
	MaxVideoFeeds  = 16   // feeds of one connection
	MaxVideoBatch  = 64   // connections in one PutVideoConnections
	maxVideoText   = 255  // bytes of a uid, alias or address field
	maxVideoURL    = 2048 // bytes of a feed URL
	maxVideoMillis = 3_600_000
)

// VideoConnection is one published video source and its feeds.
type VideoConnection struct {
	UID            string      `json:"uid"`
	Alias          string      `json:"alias"`
	Active         bool        `json:"active"`
	Thumbnail      string      `json:"thumbnail,omitempty"`
	Classification string      `json:"classification,omitempty"`
	Feeds          []VideoFeed `json:"feeds"`

	Created time.Time `json:"-"` // set by the store
	Updated time.Time `json:"-"` // set by the store
}

// VideoFeed is one stream of a connection.
type VideoFeed struct {
	UID               string `json:"uid"`
	Alias             string `json:"alias"`
	URL               string `json:"url"` // protocol://address[:port][/path]
	Active            bool   `json:"active"`
	MacAddress        string `json:"macAddress,omitempty"`       // preferred network interface (MAC)
	InterfaceAddress  string `json:"interfaceAddress,omitempty"` // preferred network interface (address)
	RoverPort         int    `json:"roverPort"`                  // -1: none
	IgnoreEmbeddedKLV bool   `json:"ignoreEmbeddedKLV"`
	NetworkTimeout    int    `json:"networkTimeout"` // ms; 0: the client's default
	BufferTime        int    `json:"bufferTime"`     // ms; -1 or 0: the client's default
	RTSPReliable      bool   `json:"rtspReliable"`   // RTSP over TCP
}

// Validate checks c against the table's limits (ErrInvalid naming the field).
func (c *VideoConnection) Validate() error {
	if err := checkText("uid", c.UID, 1, maxVideoText); err != nil {
		return err
	}
	for _, f := range []struct{ name, v string }{{"alias", c.Alias}, {"thumbnail", c.Thumbnail}, {"classification", c.Classification}} {
		limit := maxVideoText
		if f.name == "thumbnail" {
			limit = maxVideoURL
		}
		if err := checkText(f.name, f.v, 0, limit); err != nil {
			return err
		}
	}
	if len(c.Feeds) == 0 || len(c.Feeds) > MaxVideoFeeds {
		return fmt.Errorf("%w: feeds must hold 1 to %d feeds, not %d", ErrInvalid, MaxVideoFeeds, len(c.Feeds))
	}
	for i, f := range c.Feeds {
		if err := f.validate(fmt.Sprintf("feeds[%d].", i)); err != nil {
			return err
		}
	}
	return nil
}

func (f *VideoFeed) validate(at string) error {
	for _, t := range []struct {
		name     string
		v        string
		min, max int
	}{
		{"uid", f.UID, 1, maxVideoText}, {"alias", f.Alias, 0, maxVideoText}, {"url", f.URL, 1, maxVideoURL},
		{"macAddress", f.MacAddress, 0, maxVideoText}, {"interfaceAddress", f.InterfaceAddress, 0, maxVideoText},
	} {
		if err := checkText(at+t.name, t.v, t.min, t.max); err != nil {
			return err
		}
	}
	switch {
	case f.RoverPort < -1 || f.RoverPort > 65535:
		return fmt.Errorf("%w: %sroverPort must be -1 to 65535, not %d", ErrInvalid, at, f.RoverPort)
	case f.NetworkTimeout < 0 || f.NetworkTimeout > maxVideoMillis:
		return fmt.Errorf("%w: %snetworkTimeout must be 0 to %d ms, not %d", ErrInvalid, at, maxVideoMillis, f.NetworkTimeout)
	case f.BufferTime < -1 || f.BufferTime > maxVideoMillis:
		return fmt.Errorf("%w: %sbufferTime must be -1 to %d ms, not %d", ErrInvalid, at, maxVideoMillis, f.BufferTime)
	}
	return nil
}

// PutVideoConnections stores the connections (1 to MaxVideoBatch) in one
// transaction, replacing those whose uid exists. Errors: ErrInvalid (a
// limit; the message names the connection), ErrConflict (the table would
// hold more than Budgets.VideoConnections); nothing is stored then.
func (s *Videos) PutVideoConnections(ctx context.Context, conns []VideoConnection) error {
	if err := s.check(ctx); err != nil {
		return fmt.Errorf("store: put video connections: %w", err)
	}
	if len(conns) == 0 || len(conns) > MaxVideoBatch {
		return fmt.Errorf("store: put video connections: %w: 1 to %d connections at once, not %d", ErrInvalid, MaxVideoBatch, len(conns))
	}
	bodies := make([]string, len(conns))
	for i := range conns {
		if err := conns[i].Validate(); err != nil {
			return fmt.Errorf("store: put video connections: connection %d: %w", i, err)
		}
		b, err := json.Marshal(conns[i])
		if err != nil {
			return fmt.Errorf("store: put video connections: %w", err)
		}
		bodies[i] = string(b)
	}
	now := unixMilli(time.Now())
	return s.inTx(ctx, "put video connections", func(tx *sql.Tx) error {
		for i, c := range conns {
			if _, err := tx.ExecContext(ctx, `INSERT INTO video_connections(uid, body, created_at, updated_at) VALUES (?, ?, ?, ?)
				ON CONFLICT(uid) DO UPDATE SET body = excluded.body, updated_at = excluded.updated_at`, c.UID, bodies[i], now, now); err != nil {
				return err
			}
		}
		n, err := countWhere(ctx, tx, "video_connections", "")
		if err != nil {
			return err
		}
		if limit := s.budgets.VideoConnections; n > int64(limit) {
			return overBudget("video connections", int64(limit), "maxVideoConnections", "delete one first")
		}
		return nil
	})
}

const videoColumns = `body, created_at, updated_at`

func scanVideo(sc interface{ Scan(...any) error }) (VideoConnection, error) {
	var (
		body             string
		created, updated int64
		c                VideoConnection
	)
	if err := sc.Scan(&body, &created, &updated); err != nil {
		return c, err
	}
	if err := json.Unmarshal([]byte(body), &c); err != nil {
		return c, fmt.Errorf("video connection: %w", err)
	}
	c.Created, c.Updated = fromMilli(created), fromMilli(updated)
	return c, nil
}

// EachVideoConnection calls fn with every stored connection, oldest
// first, as they are read.
func (s *Videos) EachVideoConnection(ctx context.Context, fn func(VideoConnection) error) error {
	const op = "list video connections"
	return eachRow(s.db, ctx, op, `SELECT `+videoColumns+` FROM video_connections ORDER BY created_at, rowid`, nil, listChunk, scanVideo, fn)
}

// VideoConnections lists the stored connections, oldest first (for tests
// and short lists; listings use EachVideoConnection).
func (s *Videos) VideoConnections(ctx context.Context) ([]VideoConnection, error) {
	return collect(func(fn func(VideoConnection) error) error { return s.EachVideoConnection(ctx, fn) })
}

// VideoConnectionByUID returns one connection (ErrNotFound when unknown).
func (s *Videos) VideoConnectionByUID(ctx context.Context, uid string) (VideoConnection, error) {
	if err := s.check(ctx); err != nil {
		return VideoConnection{}, fmt.Errorf("store: video connection: %w", err)
	}
	c, err := scanVideo(s.r.QueryRowContext(ctx, `SELECT `+videoColumns+` FROM video_connections WHERE uid = ?`, uid))
	if errors.Is(err, sql.ErrNoRows) {
		return VideoConnection{}, fmt.Errorf("store: video connection: %w: uid %q", ErrNotFound, uid)
	}
	if err != nil {
		return VideoConnection{}, s.wrapErr("video connection", err)
	}
	return c, nil
}

// DeleteVideoConnection removes one connection (ErrNotFound when unknown).
func (s *Videos) DeleteVideoConnection(ctx context.Context, uid string) error {
	if err := s.check(ctx); err != nil {
		return fmt.Errorf("store: delete video connection: %w", err)
	}
	return s.inTxAnySpace(ctx, "delete video connection", func(tx *sql.Tx) error {
		res, err := tx.ExecContext(ctx, `DELETE FROM video_connections WHERE uid = ?`, uid)
		if err != nil {
			return err
		}
		if n, err := res.RowsAffected(); err != nil || n == 0 {
			return fmt.Errorf("%w: no video connection with uid %q", ErrNotFound, uid)
		}
		return nil
	})
}
