package federation

import (
	"context"
	"errors"
	"time"
)

// MissionStore is what federation needs of the missions and files kept
// here (docs/federation.md "Missions over ROL"). The appliance sets it
// (Config.Missions): federation does not import the store.
type MissionStore interface {
	// File returns the metadata and bytes of the file stored under hash
	// (ErrFileTooLarge when it holds more than max bytes).
	File(ctx context.Context, hash string, max int64) (FileMeta, []byte, error)
	// HasFile reports whether a file with hash is stored.
	HasFile(ctx context.Context, hash string) (bool, error)
	// PutFile stores a federated file once (by its hash), recorded as
	// received from federate.
	PutFile(ctx context.Context, meta FileMeta, data []byte, federate string) error
	// CreateMission creates m, recorded as coming from federate; nothing
	// when a mission of that name exists.
	CreateMission(ctx context.Context, m MissionMeta, federate string) error
	// DeleteMission deletes the mission name (nothing when there is none).
	// A mission none of whose groups is among groups (the local groups the
	// federate's ROL maps to) is not the federate's to change: ErrGroups.
	DeleteMission(ctx context.Context, name string, groups uint64, by, federate string) error
	// AddContent adds files (by hash, those stored) and uids to the mission
	// m.Name, creating it from m when it does not exist (ErrGroups as
	// DeleteMission, with m.Groups).
	AddContent(ctx context.Context, m MissionMeta, hashes, uids []string, by, federate string) error
	// RemoveContent removes a file (hash) or a uid from the mission name
	// (ErrGroups as DeleteMission).
	RemoveContent(ctx context.Context, name string, groups uint64, hash, uid, by, federate string) error
	// LocalChanges calls fn with the changes clients of this server made
	// to public missions since since (creation and contents; each
	// mission's oldest first), at most max in all.
	LocalChanges(ctx context.Context, since time.Time, max int, fn func(ch MissionChange, at time.Time) error) error
}

// ErrFileTooLarge: a file is larger than a ROL may carry.
var ErrFileTooLarge = errors.New("file too large for federation")

// ErrGroups: a federate's change of a mission it may not change here (its
// ROL's groups map to none of the mission's groups); counted as dropped by
// group (docs/federation.md "Groups").
var ErrGroups = errors.New("the mission is not in the federate's groups here")

// MissionMeta is what crosses of a mission's metadata.
type MissionMeta struct {
	Name, GUID, CreatorUID, Description, ChatRoom, Tool string
	BaseLayer, BBox, Path, Classification               string
	Expiration                                          int64
	InviteOnly                                          bool
	// Groups is the mask of the mission's local groups (0 counts as
	// __ANON__): outbound, which federates it goes to (groups.go rolGroups);
	// inbound, the groups a federate's mission is created in.
	Groups uint64
}

// FileMeta is what crosses of a file's metadata.
type FileMeta struct {
	Hash, UID, Name, MIMEType, Submitter, CreatorUID string
	Keywords                                         []string
	Size                                             int64
	SubmittedAt                                      time.Time
	Groups                                           uint64 // inbound: the local groups it is shared with (0: __ANON__)
}

// MissionChangeKind says what a local mission change was.
type MissionChangeKind int

// The mission changes that cross.
const (
	MissionCreated MissionChangeKind = iota + 1
	MissionDeleted
	ContentAdded
	ContentRemoved
)

// MissionChange is a change of a mission made by a client of this server
// (the appliance reports it: MissionChanged).
type MissionChange struct {
	Kind    MissionChangeKind
	Mission MissionMeta
	Hashes  []string // ContentAdded: files added; ContentRemoved: at most one
	UIDs    []string // ContentAdded: uids added; ContentRemoved: at most one
	By      string   // the uid of who made the change
}

// federatedTool reports whether a mission of tool crosses: public missions
// only (as the official server with federateOnlyPublicMissions, and an
// absent tool is public there too).
func federatedTool(tool string) bool { return tool == "" || tool == "public" }
