package fedhost

// The store's side of missions over ROL (docs/federation.md "Missions over
// ROL"): federation reads files and applies a federate's mission changes
// through fedMissions (federation.MissionStore); a client's mission change
// reaches federation through marti's MissionChanged.

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"strings"
	"time"

	"outpost/appliance/access"
	"outpost/appliance/federation"
	"outpost/appliance/logx"
	"outpost/appliance/marti"
	"outpost/appliance/store"
)

// fedMissions is federation.MissionStore over the store.
type fedMissions struct {
	missions *store.Missions
	files    *store.Files
	accounts *store.Accounts // the groups: a mission's group names as a mask and back
	// notify sends the CoT notifications of an applied change, as for a
	// client's (marti.Handler.NotifyFederated).
	notify func(kind string, m store.Mission, by string, added []store.ContentChange)
}

func (s fedMissions) File(ctx context.Context, hash string, max int64) (federation.FileMeta, []byte, error) {
	p, err := s.files.DataPackageByHash(ctx, hash)
	if err != nil {
		return federation.FileMeta{}, nil, err
	}
	if p.Size > max {
		return federation.FileMeta{}, nil, fmt.Errorf("%w: %d bytes, at most %d", federation.ErrFileTooLarge, p.Size, max)
	}
	r, err := s.files.OpenBlob(ctx, p.BlobID)
	if err != nil {
		return federation.FileMeta{}, nil, err
	}
	defer r.Close()
	data, err := io.ReadAll(io.LimitReader(r, max+1))
	if err != nil {
		return federation.FileMeta{}, nil, err
	}
	if int64(len(data)) > max {
		return federation.FileMeta{}, nil, federation.ErrFileTooLarge
	}
	return federation.FileMeta{Hash: p.Hash, UID: p.UID, Name: p.Name, MIMEType: p.MIMEType, Submitter: p.SubmissionUser,
		CreatorUID: p.CreatorUID, Keywords: p.Keywords, Size: p.Size, SubmittedAt: p.SubmittedAt}, data, nil
}

func (s fedMissions) HasFile(ctx context.Context, hash string) (bool, error) {
	_, err := s.files.DataPackageByHash(ctx, hash)
	if errors.Is(err, store.ErrNotFound) {
		return false, nil
	}
	return err == nil, err
}

// PutFile stores a federate's file as a data package shared with the local
// groups its federate groups map to (docs/federation.md "Groups"),
// checked against its hash.
func (s fedMissions) PutFile(ctx context.Context, m federation.FileMeta, data []byte, federate string) error {
	name := logx.FileName(m.Name, m.Hash) // as an upload's name is made safe
	in := store.DataPackageInput{UID: m.UID, Name: name, SubmissionUser: m.Submitter, CreatorUID: m.CreatorUID,
		Keywords: m.Keywords, MIMEType: m.MIMEType, ExpectedHash: m.Hash, SubmittedAt: m.SubmittedAt, Groups: anonIfNone(m.Groups)}
	_, err := s.files.PutDataPackage(ctx, in, bytes.NewReader(data))
	if errors.Is(err, store.ErrConflict) || errors.Is(err, store.ErrInvalid) {
		// Its uid is taken here, or a field is not acceptable here: the
		// file is kept under a new uid with its name and bytes only.
		in = store.DataPackageInput{Name: name, ExpectedHash: m.Hash, SubmittedAt: m.SubmittedAt, Groups: anonIfNone(m.Groups)}
		_, err = s.files.PutDataPackage(ctx, in, bytes.NewReader(data))
	}
	return err
}

func (s fedMissions) CreateMission(ctx context.Context, m federation.MissionMeta, federate string) error {
	if _, err := s.missions.MissionByName(ctx, m.Name); err == nil {
		return nil
	} else if !errors.Is(err, store.ErrNotFound) {
		return err
	}
	groups, err := s.groupNames(ctx, m.Groups)
	if err != nil {
		return err
	}
	in := store.MissionInput{CreatorUID: m.CreatorUID, Description: &m.Description, ChatRoom: &m.ChatRoom, BaseLayer: &m.BaseLayer,
		BBox: &m.BBox, Path: &m.Path, Classification: &m.Classification, Tool: &m.Tool, InviteOnly: &m.InviteOnly, Groups: &groups}
	if m.Expiration > 0 {
		in.Expiration = &m.Expiration
	}
	sm, created, _, err := s.missions.PutMission(store.FederatedChange(ctx, federate), m.Name, in)
	if err == nil && created {
		s.notify(marti.MissionCreated, sm, m.CreatorUID, nil)
	}
	return err
}

// mayChange is nil when the mission name is not here, or one of its groups
// is among groups (those the federate's ROL maps to); ErrGroups otherwise:
// a federate changes only the missions its groups reach here.
func (s fedMissions) mayChange(ctx context.Context, name string, groups uint64) error {
	m, err := s.missions.MissionByName(ctx, name)
	if errors.Is(err, store.ErrNotFound) {
		return nil
	} else if err != nil {
		return err
	}
	mask, err := s.groupMask(ctx, m.Groups)
	if err != nil {
		return err
	}
	if mask&anonIfNone(groups) == 0 {
		return federation.ErrGroups
	}
	return nil
}

func (s fedMissions) DeleteMission(ctx context.Context, name string, groups uint64, by, federate string) error {
	if err := s.mayChange(ctx, name, groups); err != nil {
		return err
	}
	m, err := s.missions.DeleteMission(store.FederatedChange(ctx, federate), name, by)
	if errors.Is(err, store.ErrNotFound) {
		return nil
	}
	if err == nil {
		s.notify(marti.MissionDeleted, m, by, nil)
	}
	return err
}

// AddContent adds what is stored of hashes (a file that did not cross is
// left out) and uids, creating the mission first when it is not here.
func (s fedMissions) AddContent(ctx context.Context, m federation.MissionMeta, hashes, uids []string, by, federate string) error {
	if err := s.mayChange(ctx, m.Name, m.Groups); err != nil {
		return err
	}
	if err := s.CreateMission(ctx, m, federate); err != nil {
		return err
	}
	var known []string
	var missing error
	for _, h := range hashes {
		h = strings.ToLower(h)
		if ok, err := s.HasFile(ctx, h); err != nil {
			return err
		} else if ok {
			known = append(known, h)
		} else {
			missing = fmt.Errorf("no file with hash %s here", h)
		}
	}
	if len(known)+len(uids) > 0 {
		added, err := s.missions.AddMissionContents(store.FederatedChange(ctx, federate), m.Name, known, uids, by)
		if err != nil {
			return err
		}
		if sm, err := s.missions.MissionByName(ctx, m.Name); err == nil && len(added) > 0 {
			s.notify(marti.ContentAdded, sm, by, added)
		}
	}
	return missing
}

func (s fedMissions) RemoveContent(ctx context.Context, name string, groups uint64, hash, uid, by, federate string) error {
	if err := s.mayChange(ctx, name, groups); err != nil {
		return err
	}
	_, err := s.missions.RemoveMissionContent(store.FederatedChange(ctx, federate), name, strings.ToLower(hash), uid, by)
	if errors.Is(err, store.ErrNotFound) {
		return nil // not here (any more)
	}
	return err
}

// fedMissionChange is a client's mission change as federation takes it,
// the mission's groups as the mask groups.
func fedMissionChange(ch marti.MissionChange, groups uint64) federation.MissionChange {
	m := ch.Mission
	out := federation.MissionChange{Mission: federation.MissionMeta{Name: m.Name, GUID: m.GUID, CreatorUID: m.CreatorUID,
		Description: m.Description, ChatRoom: m.ChatRoom, Tool: m.Tool, BaseLayer: m.BaseLayer, BBox: m.BBox, Path: m.Path,
		Classification: m.Classification, Expiration: m.Expiration, InviteOnly: m.InviteOnly, Groups: groups},
		Hashes: ch.Hashes, UIDs: ch.UIDs, By: ch.By}
	switch ch.Kind {
	case marti.MissionCreated:
		out.Kind = federation.MissionCreated
	case marti.MissionDeleted:
		out.Kind = federation.MissionDeleted
	case marti.ContentAdded:
		out.Kind = federation.ContentAdded
	case marti.ContentRemoved:
		out.Kind = federation.ContentRemoved
	}
	return out
}

// notify sends the notifications of a federate's mission change through
// the client API (Notify, set once the client API is built).
func (h *Host) notify(kind string, m store.Mission, by string, added []store.ContentChange) {
	if f := h.notifier.Load(); f != nil {
		(*f)(kind, m, by, added)
	}
}

// SetNotify gives the host the client API's notifications of a federate's
// mission change (marti.Handler.NotifyFederated).
func (h *Host) SetNotify(f func(kind string, m store.Mission, by string, added []store.ContentChange)) {
	if h != nil {
		h.notifier.Store(&f)
	}
}

// MissionChanged sends a client's mission change to the federates (marti's
// MissionChanged; nothing when federation is off).
func (h *Host) MissionChanged(ch marti.MissionChange) {
	if h == nil {
		return
	}
	mask, err := fedMissions{accounts: h.st.Accounts()}.groupMask(context.Background(), ch.Mission.Groups)
	if err != nil {
		h.log.Warn("mission change not federated: reading the groups", "mission", logx.Clip(ch.Mission.Name), "err", err)
		return
	}
	h.fed.MissionChanged(fedMissionChange(ch, mask))
}

// groupMask is the mask of the group names (none: __ANON__; a group that
// no longer exists counts for none).
func (s fedMissions) groupMask(ctx context.Context, names []string) (uint64, error) {
	if len(names) == 0 {
		return store.AnonGroup, nil
	}
	groups, err := s.accounts.Groups(ctx)
	if err != nil {
		return 0, err
	}
	return access.MaskOf(groups, names), nil
}

// groupNames is the names of the groups of mask (none for __ANON__ alone
// or no group: a mission of no group is __ANON__'s).
func (s fedMissions) groupNames(ctx context.Context, mask uint64) ([]string, error) {
	if mask == 0 || mask == store.AnonGroup {
		return []string{}, nil
	}
	groups, err := s.accounts.Groups(ctx)
	if err != nil {
		return nil, err
	}
	return access.NamesOf(groups, mask), nil
}

// anonIfNone is mask, or __ANON__ for none.
func anonIfNone(mask uint64) uint64 {
	if mask == 0 {
		return store.AnonGroup
	}
	return mask
}

// LocalChanges walks the public missions by name and, for each, its change
// history since since (what clients here made: a federate's changes are
// left out), oldest first, up to max changes in all.
func (s fedMissions) LocalChanges(ctx context.Context, since time.Time, max int, fn func(federation.MissionChange, time.Time) error) error {
	groups, err := s.accounts.Groups(ctx) // once: every mission's mask is read from it
	if err != nil {
		return err
	}
	after, n := "", 0
	for {
		list, more, err := s.missions.Missions(ctx, store.ToolPublic, after, 100)
		if err != nil {
			return err
		}
		for _, m := range list {
			mask := access.MaskOf(groups, m.Groups)
			changes, _, err := s.missions.MissionChanges(ctx, m.Name, since, time.Time{}, store.Page{Limit: max - n})
			if err != nil {
				return err
			}
			for _, c := range changes {
				ch := fedMissionChange(marti.MissionChange{Mission: m, By: c.CreatorUID}, mask)
				switch {
				case c.Federate != "":
					continue
				case c.Type == store.ChangeCreateMission:
					ch.Kind = federation.MissionCreated
				case c.Type != store.ChangeAddContent && c.Type != store.ChangeRemoveContent:
					continue
				case c.ContentResource != nil:
					ch.Hashes = []string{c.ContentResource.Hash}
				case c.ContentUID != "":
					ch.UIDs = []string{c.ContentUID}
				default:
					continue
				}
				if ch.Kind == 0 {
					ch.Kind = federation.ContentAdded
					if c.Type == store.ChangeRemoveContent {
						ch.Kind = federation.ContentRemoved
					}
				}
				if err := fn(ch, c.At); err != nil {
					return err
				}
				if n++; n >= max {
					return nil
				}
			}
		}
		if !more || len(list) == 0 {
			return nil
		}
		after = list[len(list)-1].Name
	}
}
