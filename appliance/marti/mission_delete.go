package marti

// Deleting a mission (api-marti.md "Missions"): by name or, as the official
// server and node-tak do, DELETE /Marti/api/missions?guid=.

import (
	"net/http"
	"strconv"

	"outpost/appliance/httpapi"
	"outpost/appliance/logx"
)

// missionDelete answers DELETE .../{name}: its owner deletes the mission
// (the official server's missionDeleteRequiresOwner); the answer is the
// mission as it was, and every client that saw it hears of its deletion.
// deepDelete=true (also remove its files from enterprise sync) is refused:
// Outpost keeps the files.
func (h *Handler) missionDelete(w http.ResponseWriter, r *http.Request) error {
	if v := r.URL.Query().Get("deepDelete"); v != "" {
		deep, err := strconv.ParseBool(v)
		if err != nil {
			return httpapi.BadRequest("deepDelete", "must be true or false, not %q", httpapi.ClipValue(v))
		}
		if deep {
			return httpapi.BadRequest("deepDelete", "not supported: a mission's files stay in enterprise sync (DELETE /Marti/sync/delete removes a file)")
		}
	}
	m, by, err := h.missionAndCaller(r)
	if err != nil {
		return err
	}
	m, err = h.opts.Missions.DeleteMission(r.Context(), m.Name, by)
	if err != nil {
		return err
	}
	h.log.Info("mission deleted", "mission", logx.Clip(m.Name), "by", logx.Clip(by))
	h.notifyDeleted(m, by)
	h.missionChanged(MissionDeleted, m, nil, nil, by)
	v, err := h.missionView(r, m)
	if err != nil {
		return err
	}
	httpapi.WriteJSON(w, http.StatusOK, h.envelope(typeMission, []missionJSON{v}))
	return nil
}

// missionDeleteByGUID answers DELETE /Marti/api/missions?guid=: missionDelete
// for the mission guid names.
func (h *Handler) missionDeleteByGUID(w http.ResponseWriter, r *http.Request) error {
	name, err := h.missionNameOfGUID(r, r.URL.Query().Get("guid"))
	if err != nil {
		return err
	}
	r.SetPathValue("mission_id", name)
	return h.missionDelete(w, r)
}
