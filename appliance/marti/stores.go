package marti

// What the client API and the enrollment handler use of the store, area by
// area: each interface lists exactly the methods marti calls, so the
// compiler checks that marti touches only these. The store's areas
// (store.Missions, store.Files, …) satisfy them; the composition root
// passes those.

import (
	"context"
	"io"
	"time"

	"outpost/appliance/store"
)

// MissionStore is what the mission routes, the ExCheck routes, the COP
// hierarchy, the notifications and the mission recorder use of the
// missions (store.Missions).
type MissionStore interface {
	// Missions themselves: list, read, create or update, delete.
	Missions(ctx context.Context, tool, after string, limit int) (list []store.Mission, more bool, err error)
	MissionByName(ctx context.Context, name string) (store.Mission, error)
	MissionByGUID(ctx context.Context, guid string) (store.Mission, error)
	MissionPaths(ctx context.Context, tool string, limit int) (list []store.MissionPath, more bool, err error)
	PutMission(ctx context.Context, name string, in store.MissionInput) (store.Mission, bool, store.Subscription, error)
	DeleteMission(ctx context.Context, name, by string) (store.Mission, error)
	CheckPassword(ctx context.Context, name, password string) error
	SetMissionPassword(ctx context.Context, name, by, password string) (store.Mission, error)
	SetMissionKeywords(ctx context.Context, name, by string, keywords []string) (store.Mission, error)
	RemoveMissionKeyword(ctx context.Context, name, by, keyword string) (store.Mission, error)
	SetMissionExpiration(ctx context.Context, name, by string, expiration int64) (store.Mission, error)
	MissionChanges(ctx context.Context, name string, from, to time.Time, p store.Page) ([]store.MissionChange, store.Cursor, error)

	// Contents, uids, external data and the mission's CoT.
	MissionContents(ctx context.Context, missionID int64) ([]store.MissionContent, error)
	MissionUIDs(ctx context.Context, missionID int64) ([]store.MissionUID, error)
	MissionCoT(ctx context.Context, name string) ([]store.StoredEvent, error)
	AddMissionContents(ctx context.Context, name string, hashes, uids []string, creator string) ([]store.ContentChange, error)
	RemoveMissionContent(ctx context.Context, name, hash, uid, creator string) (store.ContentChange, error)
	MissionExternalData(ctx context.Context, missionID int64) ([]store.ExternalData, error)
	PutExternalData(ctx context.Context, name string, x store.ExternalData, creator string) (store.Mission, error)

	// Subscriptions and roles.
	Subscribe(ctx context.Context, name, uid, username, password string) (store.Subscription, error)
	Unsubscribe(ctx context.Context, name, uid string, disconnectOnly bool) error
	Subscription(ctx context.Context, name, uid string) (store.Subscription, error)
	Subscriptions(ctx context.Context, name string) ([]store.Subscription, error)
	MissionSubscribers(name string) []string
	SetSubscriptionRole(ctx context.Context, name, by, uid, role string) (store.Subscription, error)
	MissionRole(ctx context.Context, name, uid string) (string, error)

	// Invitations.
	Invite(ctx context.Context, name string, inv store.Invitation) (store.Invitation, error)
	Invitations(ctx context.Context, invitees ...string) ([]store.Invitation, error)
	MissionInvitations(ctx context.Context, name string) ([]store.Invitation, error)

	// Log entries.
	LogEntry(ctx context.Context, id string) (store.LogEntry, error)
	PutLogEntry(ctx context.Context, e store.LogEntry) (store.LogEntry, bool, error)
	DeleteLogEntry(ctx context.Context, id string) (store.LogEntry, error)
	MissionLogs(ctx context.Context, name string, from, to time.Time, p store.Page) ([]store.LogEntry, store.Cursor, error)

	// Layers.
	MissionLayers(ctx context.Context, m store.Mission) ([]store.MissionLayer, error)
	PutMissionLayer(ctx context.Context, name string, in store.LayerInput, creator string) (l store.MissionLayer, created bool, err error)
	DeleteMissionLayers(ctx context.Context, name string, uids []string, creator string) ([]store.MissionLayer, []store.ContentChange, error)
	MoveMissionLayers(ctx context.Context, name string, uids []string, parentUID, afterUID, creator string) ([]store.MissionLayer, error)
	RenameMissionLayer(ctx context.Context, name, uid, newName, creator string) (store.MissionLayer, error)

	// Parents and children.
	SetMissionParent(ctx context.Context, child, parent, creator string) error
	ClearMissionParent(ctx context.Context, child, creator string) error
	MissionParent(ctx context.Context, name string) (store.Mission, error)
	MissionChildren(ctx context.Context, name string) ([]store.Mission, error)

	uidRecords
}

// uidRecords is what the mission recorder writes: the uids of
// mission-addressed CoT (mission_record.go).
type uidRecords interface {
	RecordMissionUIDs(ctx context.Context, recs []store.UIDRecord) (int, error)
}

// FileStore is what enterprise sync, the file manager, mission packages
// and CI-TRAP use of the files (store.Files): data packages, their blobs,
// and the CI-TRAP reports kept with them.
type FileStore interface {
	DataPackageByHash(ctx context.Context, hash string) (store.DataPackage, error)
	DataPackageByUID(ctx context.Context, uid string) (store.DataPackage, error)
	PutDataPackage(ctx context.Context, in store.DataPackageInput, r io.Reader) (store.DataPackage, error)
	UpdateDataPackages(ctx context.Context, ups []store.DataPackageUpdate) error
	DeleteDataPackageByHash(ctx context.Context, hash string) error
	EachSearchDataPackage(ctx context.Context, keyword string, fn func(store.DataPackage) error) error
	EachFile(ctx context.Context, q store.FileQuery, fn func(store.DataPackage) error) error
	CountFiles(ctx context.Context, q store.FileQuery) (int64, error)
	OpenBlob(ctx context.Context, id int64) (*store.BlobReader, error)

	CitrapReport(ctx context.Context, id string) (store.CitrapReport, error)
	PutCitrapReport(ctx context.Context, in store.DataPackageInput, r io.Reader, rep store.CitrapReport) (store.CitrapReport, error)
	EachCitrapReport(ctx context.Context, q store.CitrapQuery, fn func(store.CitrapReport) error) error
}

// ChecklistStore is what the ExCheck routes use of the ExCheck documents
// (store.Checklists).
type ChecklistStore interface {
	Template(ctx context.Context, uid string) (store.ExCheckDoc, error)
	TemplateByHash(ctx context.Context, hash string) (store.ExCheckDoc, error)
	EachTemplate(ctx context.Context, fn func(store.ExCheckDoc) error) error
	PutTemplate(ctx context.Context, d store.ExCheckDoc) (store.Mission, store.ContentResource, error)
	UpdateTemplate(ctx context.Context, uid string, edit func([]byte) ([]byte, error)) error
	Checklist(ctx context.Context, uid string) (store.ExCheckDoc, error)
	EachChecklist(ctx context.Context, fn func(store.ExCheckDoc) error) error
	CreateChecklist(ctx context.Context, d store.ExCheckDoc, description string, groups []string) (store.Mission, error)
	UpdateChecklist(ctx context.Context, uid, actor string, edit func([]byte) ([]byte, error)) error
}

// EventStore is what the CoT history routes and the KML export read of
// the CoT history (store.Events).
type EventStore interface {
	EventsOfUID(ctx context.Context, uid string, from, to time.Time, groups uint64, p store.Page) ([]store.StoredEvent, store.Cursor, error)
	LatestInWindow(ctx context.Context, from, to time.Time, box *store.Box, groups uint64, limit, maxBytes int) (_ []store.StoredEvent, more bool, _ error)
	LatestReceived(ctx context.Context, uid string) (time.Time, []byte, error)
}

// VideoStore is what the video routes use of the video connections
// (store.Videos).
type VideoStore interface {
	EachVideoConnection(ctx context.Context, fn func(store.VideoConnection) error) error
	VideoConnectionByUID(ctx context.Context, uid string) (store.VideoConnection, error)
	PutVideoConnections(ctx context.Context, conns []store.VideoConnection) error
	DeleteVideoConnection(ctx context.Context, uid string) error
}

// EnrollAccountStore is what the enrollment handler uses of the accounts
// (store.Accounts): password checks, and the enrollment invitations whose
// tokens stand in for a password.
type EnrollAccountStore interface {
	VerifyPassword(ctx context.Context, name, password string) (store.User, error)
	UserByUID(ctx context.Context, uid string) (store.User, error)
	CheckEnrollInvitation(ctx context.Context, name, token string, now time.Time) (store.EnrollInvitation, error)
	EnrollInvitation(ctx context.Context, id string) (store.EnrollInvitation, error)
	SpendEnrollInvitation(ctx context.Context, id string, now time.Time) error
}

// EmergencyStore is what the repeater routes read of the server's own
// objects (store.Objects): the active emergencies.
type EmergencyStore interface {
	EachServerObject(ctx context.Context, kind string, replayed bool, fn func(store.ServerObject) error) error
}
