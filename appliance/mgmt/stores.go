package mgmt

// What the management API uses of the store, area by area: each interface
// lists exactly the methods this package calls, so what it touches is
// checked by the compiler. The appliance passes the store's areas
// (store.Accounts, store.Files, …), which satisfy them.

import (
	"context"
	"io"
	"time"

	"outpost/appliance/store"
)

// AccountStore is what the API reads and writes of the accounts: the
// logins of POST /api/login, the audit of system users' calls (and its
// retention), and the system users looked up by uid or name.
type AccountStore interface {
	// VerifyPassword checks a system user's name and password
	// (store.ErrBadCredentials, store.ErrBusy).
	VerifyPassword(ctx context.Context, name, password string) (store.User, error)
	// CreateLoginToken issues a login token for the user uid.
	CreateLoginToken(ctx context.Context, uid string, expires time.Time) (string, error)
	// PruneLoginTokens removes the login tokens expired at now.
	PruneLoginTokens(ctx context.Context, now time.Time) (int64, error)
	// AddAudit records one call made as a system user (api.md §5.5).
	AddAudit(ctx context.Context, e store.AuditEntry) error
	// PruneAudit removes the audit records older than before.
	PruneAudit(ctx context.Context, before time.Time) (int64, error)
	// UserByUID and UserByName find a system user (store.ErrNotFound).
	UserByUID(ctx context.Context, uid string) (store.User, error)
	UserByName(ctx context.Context, name string) (store.User, error)
}

// PackageStore is what the API does with data packages: /DataPackageTable,
// the download of certificate packages, and the basemap uploaded as a
// package (tiles.go).
type PackageStore interface {
	// EachDataPackage calls fn with every data package, newest first.
	EachDataPackage(ctx context.Context, fn func(store.DataPackage) error) error
	// DataPackageByID and DataPackageByHash find one (store.ErrNotFound).
	DataPackageByID(ctx context.Context, id int64) (store.DataPackage, error)
	DataPackageByHash(ctx context.Context, hash string) (store.DataPackage, error)
	// PutDataPackage stores an upload read from r.
	PutDataPackage(ctx context.Context, in store.DataPackageInput, r io.Reader) (store.DataPackage, error)
	// UpdateDataPackages and DeleteDataPackagesByHash change or delete a
	// batch, all or nothing.
	UpdateDataPackages(ctx context.Context, ups []store.DataPackageUpdate) error
	DeleteDataPackagesByHash(ctx context.Context, hashes []string) error
	// NewestPackageWithKeyword is the newest package carrying keyword
	// (store.ErrNotFound).
	NewestPackageWithKeyword(ctx context.Context, keyword string) (store.DataPackage, error)
	// OpenBlob reads a package's content.
	OpenBlob(ctx context.Context, id int64) (*store.BlobReader, error)
}

// MissionReader is what the console's Missions page reads of the missions
// (missions.go); the API changes none.
type MissionReader interface {
	MissionSummaries(ctx context.Context, limit int) (list []store.MissionSummary, truncated bool, err error)
	MissionSummaryByName(ctx context.Context, name string) (store.MissionSummary, error)
	MissionContents(ctx context.Context, missionID int64) ([]store.MissionContent, error)
	MissionUIDs(ctx context.Context, missionID int64) ([]store.MissionUID, error)
	Subscriptions(ctx context.Context, name string) ([]store.Subscription, error)
	MissionExternalData(ctx context.Context, missionID int64) ([]store.ExternalData, error)
	RecentMissionChanges(ctx context.Context, m store.Mission, limit int) (list []store.MissionChange, truncated bool, err error)
	RecentMissionLogs(ctx context.Context, m store.Mission, limit int) (list []store.LogEntry, truncated bool, err error)
}

// History is what the console's map reads of the CoT history
// (mapview.go): the latest event of each uid in a box, one uid's latest
// event, and the recent deletions.
type History interface {
	LatestInBox(ctx context.Context, minLat, minLon, maxLat, maxLon float64, limit int, groups uint64) ([]store.StoredEvent, error)
	LatestEvent(ctx context.Context, uid string, groups uint64) (store.StoredEvent, error)
	RecentOfType(ctx context.Context, typ string, since time.Time, limit int, groups uint64) ([]store.StoredEvent, error)
}

// FederateStore is the federates managed at run time and their group
// mappings, as administrators change them (federation*.go).
type FederateStore interface {
	List(ctx context.Context) ([]store.Federate, error)
	Add(ctx context.Context, f store.Federate) error
	Trust(ctx context.Context, name, caPEM string) error
	Update(ctx context.Context, name string, p store.FederatePatch) (store.Federate, error)
	Delete(ctx context.Context, name string) error
	Groups(ctx context.Context, name string) (store.GroupMapping, error)
	SetGroups(ctx context.Context, name string, m store.GroupMapping) error
}

// The store's areas are what the appliance passes.
var (
	_ AccountStore  = (*store.Accounts)(nil)
	_ PackageStore  = (*store.Files)(nil)
	_ MissionReader = (*store.Missions)(nil)
	_ History       = (*store.Events)(nil)
	_ FederateStore = (*store.Federates)(nil)
)
