package objects

// What the service uses of the store: each interface lists exactly the
// methods this package calls, so what it touches is checked by the
// compiler. The appliance passes the store's areas (store.Objects,
// store.Events), which satisfy them.

import (
	"context"
	"time"

	"outpost/appliance/store"
)

// ObjectStore is where the server's own objects are kept (server_objects):
// each object's row, read, written, listed, expired and removed.
type ObjectStore interface {
	// ServerObject is the object uid (store.ErrNotFound).
	ServerObject(ctx context.Context, uid string) (store.ServerObject, error)
	// PutServerObject writes o, replacing the object of its uid.
	PutServerObject(ctx context.Context, o store.ServerObject) error
	// DeleteServerObjects removes the objects uids (unknown ones are
	// skipped) and returns how many it removed.
	DeleteServerObjects(ctx context.Context, uids []string, now time.Time) (int, error)
	// EachServerObject calls fn with each object of kind ("": every
	// kind), oldest first; replayed: only those replayed to clients.
	EachServerObject(ctx context.Context, kind string, replayed bool, fn func(store.ServerObject) error) error
	// ExpireServerObjects removes the objects stale at now and returns them.
	ExpireServerObjects(ctx context.Context, now time.Time) ([]store.ServerObject, error)
	// CountServerObjects counts the objects of kind and origin.
	CountServerObjects(ctx context.Context, kind, origin string) (int, error)
	// GeoObjectsInBox lists what lies in a box, not stale at now and sent
	// to one of groups (a mask): the server's geo objects and the markers
	// clients sent (the radius query).
	GeoObjectsInBox(ctx context.Context, minLat, minLon, maxLat, maxLon float64, now time.Time, groups uint64) ([]store.MapObject, error)
}

// History is what the service reads of the CoT history: the latest event
// of a uid (the type of what a geo object links to).
type History interface {
	LatestEvent(ctx context.Context, uid string, groups uint64) (store.StoredEvent, error)
}

// The store's areas are what the appliance passes.
var (
	_ ObjectStore = (*store.Objects)(nil)
	_ History     = (*store.Events)(nil)
)
