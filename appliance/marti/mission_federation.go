package marti

import "outpost/appliance/store"

// Kinds of MissionChange.
const (
	MissionCreated = "created"
	MissionDeleted = "deleted"
	ContentAdded   = "added"
	ContentRemoved = "removed"
)

// MissionChange is a change of a mission a client made here, told to
// Options.MissionChanged once committed (federation sends it on:
// docs/federation.md "Missions over ROL").
type MissionChange struct {
	Kind    string
	Mission store.Mission
	Hashes  []string // files added or removed
	UIDs    []string // uids added or removed
	By      string   // the uid of who made it
}

// missionChanged tells Options.MissionChanged of a change, when set.
func (h *Handler) missionChanged(kind string, m store.Mission, hashes, uids []string, by string) {
	if h.opts.MissionChanged == nil || (kind == ContentAdded && len(hashes)+len(uids) == 0) {
		return
	}
	h.opts.MissionChanged(MissionChange{Kind: kind, Mission: m, Hashes: hashes, UIDs: uids, By: by})
}

// addedOf splits what AddMissionContents added into hashes and uids.
func addedOf(added []store.ContentChange) (hashes, uids []string) {
	for _, c := range added {
		if c.Content != nil {
			hashes = append(hashes, c.Content.Hash)
		} else if c.UID != "" {
			uids = append(uids, c.UID)
		}
	}
	return hashes, uids
}

// NotifyFederated sends the CoT notifications of a federate's change of a
// mission (api.md §6.2) as for a client's: a new mission (MissionCreated)
// and a deleted one (MissionDeleted) to every client whose groups see it,
// added contents (ContentAdded) to the mission's subscribers.
func (h *Handler) NotifyFederated(kind string, m store.Mission, by string, added []store.ContentChange) {
	switch kind {
	case MissionCreated:
		h.notifyCreated(m, by)
	case MissionDeleted:
		h.notifyDeleted(m, by)
	case ContentAdded:
		h.notifyContents(m, by, added)
	}
}
