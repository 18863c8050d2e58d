package marti

// Mission contents (api.md §4.4): enterprise sync files by hash and CoT
// uids added and removed, a file uploaded straight into a mission, and
// external data.

import (
	"net/http"
	"time"

	"outpost/appliance/httpapi"
	"outpost/appliance/logx"
	"outpost/appliance/store"
)

var zeroTime time.Time

// contentsBody is the body of PUT /contents.
type contentsBody struct {
	Hashes []string `json:"hashes"`
	UIDs   []string `json:"uids"`
}

// missionAddContents answers PUT /Marti/api/missions/{id}/contents: the
// files (hashes) and CoT uids join the mission in one transaction (an
// unknown hash: 404 and nothing added); envelope 2.13 with the mission;
// a MissionContentCreatedNotification per new hash and uid to the
// mission's subscribers once committed.
func (h *Handler) missionAddContents(w http.ResponseWriter, r *http.Request) error {
	m, who, err := h.missionAndActor(r, readMission)
	if err != nil {
		return err
	}
	name := m.Name
	var body contentsBody
	if err := httpapi.DecodeJSON(r, maxMissionJSON, &body); err != nil {
		return err
	}
	if len(body.Hashes)+len(body.UIDs) == 0 {
		return httpapi.BadRequest("hashes", "give hashes or uids to add")
	}
	if len(body.Hashes)+len(body.UIDs) > store.MaxMissionBatch {
		return httpapi.BadRequest("hashes", "at most %d hashes and uids at once", store.MaxMissionBatch)
	}
	for i, hs := range body.Hashes {
		if body.Hashes[i], err = httpapi.CheckHash("hashes", hs); err != nil {
			return err
		}
	}
	// A file joins the mission only when the caller may read it.
	for _, hs := range body.Hashes {
		if _, err := h.readablePackage(r, hs); err != nil {
			return err
		}
	}
	added, err := h.opts.Missions.AddMissionContents(r.Context(), name, body.Hashes, body.UIDs, who)
	if err != nil {
		return err
	}
	if m, err = h.opts.Missions.MissionByName(r.Context(), name); err != nil {
		return err
	}
	h.log.Info("mission contents added", "mission", logx.Clip(name), "by", logx.Clip(who), "added", len(added))
	h.notifyContents(m, who, added)
	hs, us := addedOf(added)
	h.missionChanged(ContentAdded, m, hs, us, who)
	return h.writeMission(w, r, m, http.StatusOK, "", false)
}

// missionRemoveContent answers DELETE /Marti/api/missions/{id}/contents
// with hash= or uid=: envelope 2.13 with the mission.
func (h *Handler) missionRemoveContent(w http.ResponseWriter, r *http.Request) error {
	m, who, err := h.missionAndActor(r, readMission)
	if err != nil {
		return err
	}
	name := m.Name
	q := r.URL.Query()
	hash, uid := q.Get("hash"), q.Get("uid")
	switch {
	case hash != "":
		if hash, err = httpapi.CheckHash("hash", hash); err != nil {
			return err
		}
	case uid != "":
		if err := httpapi.CheckText("uid", uid, true, 255); err != nil {
			return err
		}
	default:
		return httpapi.BadRequest("hash", "required (or uid)")
	}
	if _, err := h.opts.Missions.RemoveMissionContent(r.Context(), name, hash, uid, who); err != nil {
		return err
	}
	if m, err = h.opts.Missions.MissionByName(r.Context(), name); err != nil {
		return err
	}
	h.log.Info("mission content removed", "mission", logx.Clip(name), "by", logx.Clip(who), "hash", hash, "uid", logx.Clip(uid))
	if hash != "" {
		h.missionChanged(ContentRemoved, m, []string{hash}, nil, who)
	} else {
		h.missionChanged(ContentRemoved, m, nil, []string{uid}, who)
	}
	return h.writeMission(w, r, m, http.StatusOK, "", false)
}

// missionPackage answers PUT /Marti/api/missions/{id}/contents/missionpackage:
// the body is stored as an enterprise sync file (as /Marti/sync/upload
// does) and added to the mission; envelope 2.13 with the mission.
func (h *Handler) missionPackage(w http.ResponseWriter, r *http.Request) error {
	m, who, err := h.missionAndActor(r, readMission)
	if err != nil {
		return err
	}
	name := m.Name
	// The mission and the caller's right to change it are checked first
	// (an empty change), so nothing is stored for a request that cannot
	// complete.
	if _, err := h.opts.Missions.AddMissionContents(r.Context(), name, nil, nil, who); err != nil {
		return err
	}
	// node-tak sends no file name: the mission's is one the client can
	// recognise.
	u, err := uploadQuery(r, false, name+".zip")
	if err != nil {
		return err
	}
	if r.Header.Get("Content-Type") == "" {
		r.Header.Set("Content-Type", "application/octet-stream")
	}
	p, ok, err := h.receive(w, r, u)
	if !ok {
		return err // nil: the upload answered its failure
	}
	added, err := h.opts.Missions.AddMissionContents(r.Context(), name, []string{p.Hash}, nil, u.creator)
	if err != nil {
		return err
	}
	if m, err = h.opts.Missions.MissionByName(r.Context(), name); err != nil {
		return err
	}
	h.notifyContents(m, u.creator, added)
	hs, us := addedOf(added)
	h.missionChanged(ContentAdded, m, hs, us, u.creator)
	return h.writeMission(w, r, m, http.StatusOK, "", false)
}

// externalDataBody is mission_external_data: the object itself, or
// wrapped under that name.
type externalDataBody struct {
	store.ExternalData
	Wrapped *store.ExternalData `json:"mission_external_data"`
}

// missionExternalData answers POST /Marti/api/missions/{id}/externaldata:
// adds (or replaces, by uid) the external data, records the change and
// sends MissionExternalDataCreatedNotification to the subscribers.
func (h *Handler) missionExternalData(w http.ResponseWriter, r *http.Request) error {
	m, who, err := h.missionAndActor(r, readMission)
	if err != nil {
		return err
	}
	name := m.Name
	var body externalDataBody
	if err := httpapi.DecodeJSON(r, maxMissionJSON, &body); err != nil {
		return err
	}
	x := body.ExternalData
	if body.Wrapped != nil {
		x = *body.Wrapped
	}
	if x.UID == "" {
		return httpapi.BadRequest("uid", "required (the external data's uid)")
	}
	if m, err = h.opts.Missions.PutExternalData(r.Context(), name, x, who); err != nil {
		return err
	}
	h.log.Info("mission external data added", "mission", logx.Clip(name), "uid", logx.Clip(x.UID), "by", logx.Clip(who))
	h.notifyExternalData(m, who, x)
	httpapi.WriteJSON(w, http.StatusOK, h.envelope(typeExternalData, x))
	return nil
}
