package marti

// Mission log entries (api.md §4.4): created (201), updated, deleted, and
// listed by mission (secago, start, end; paged: mission_page.go) or all
// together. What one address may write is budgeted (logRate). Each change is
// recorded in the history of its missions and announced to their
// subscribers (t-x-m-c-l).

import (
	"bytes"
	"encoding/json"
	"net/http"

	"outpost/appliance/httpapi"
	"outpost/appliance/logx"
	"outpost/appliance/store"
)

// logBody is mission_log_data: the entry itself (what ATAK and node-tak
// send) or wrapped under that name.
type logBody struct {
	ID            string          `json:"id"`
	EntryUID      string          `json:"entryUid"`
	Content       *string         `json:"content"`
	CreatorUID    string          `json:"creatorUid"`
	MissionNames  []string        `json:"missionNames"`
	DTG           string          `json:"dtg"`
	ContentHashes []string        `json:"contentHashes"`
	Keywords      []string        `json:"keywords"`
	Wrapped       json.RawMessage `json:"mission_log_data"`
}

// readLog reads and checks a log entry body.
func readLog(r *http.Request, update bool) (store.LogEntry, error) {
	var b logBody
	if err := httpapi.DecodeJSON(r, maxMissionJSON, &b); err != nil {
		return store.LogEntry{}, err
	}
	if len(b.Wrapped) > 0 && !bytes.Equal(b.Wrapped, []byte("null")) {
		var inner logBody
		if err := httpapi.DecodeValue(b.Wrapped, &inner, "mission_log_data"); err != nil {
			return store.LogEntry{}, err
		}
		b = inner
	}
	if b.Content == nil {
		return store.LogEntry{}, httpapi.BadRequest("content", "required (the text of the entry)")
	}
	if len(b.MissionNames) == 0 {
		return store.LogEntry{}, httpapi.BadRequest("missionNames", "required (the missions of the entry)")
	}
	if update && b.ID == "" {
		return store.LogEntry{}, httpapi.BadRequest("id", "required (the entry to update)")
	}
	if err := httpapi.CheckText("id", b.ID, false, 64); err != nil {
		return store.LogEntry{}, err
	}
	e := store.LogEntry{ID: b.ID, EntryUID: b.EntryUID, Content: *b.Content, CreatorUID: b.CreatorUID, Missions: b.MissionNames,
		ContentHashes: b.ContentHashes, Keywords: b.Keywords}
	if b.DTG != "" {
		t, err := parseTime(b.DTG)
		if err != nil {
			return store.LogEntry{}, httpapi.BadRequest("dtg", "must be an ISO-8601 time, not %q", httpapi.ClipValue(b.DTG))
		}
		e.DTG = t
	}
	return e, nil
}

// logCreate answers POST /Marti/api/missions/logs/entries: 201 with the
// entry and its generated id.
func (h *Handler) logCreate(w http.ResponseWriter, r *http.Request) error {
	e, err := readLog(r, false)
	if err != nil {
		return err
	}
	e.ID = "" // the server names new entries
	return h.putLog(w, r, e, http.StatusCreated)
}

// logUpdate answers PUT /Marti/api/missions/logs/entries.
func (h *Handler) logUpdate(w http.ResponseWriter, r *http.Request) error {
	e, err := readLog(r, true)
	if err != nil {
		return err
	}
	return h.putLog(w, r, e, http.StatusOK)
}

func (h *Handler) putLog(w http.ResponseWriter, r *http.Request, e store.LogEntry, status int) error {
	// access.md "Missions": the entry's author is one of the caller's uids,
	// and every mission it goes to is one the caller may read; an update
	// changes an entry of such missions only.
	if err := h.actFor(r, "creatorUid", e.CreatorUID); err != nil {
		return err
	}
	for _, name := range e.Missions {
		if _, err := h.missionByName(r, name, readMission); err != nil {
			return err
		}
	}
	if e.ID != "" {
		if err := h.mayChangeLog(r, e.ID); err != nil {
			return err
		}
	}
	// RELIABILITY.md "Budgets": what one address may write.
	if ok, wait := h.logRate.Take(httpapi.ClientAddr(r), h.opts.Now(), len(e.Content)); !ok {
		return httpapi.TooManyRequests(wait, "too many mission log entries from this address; try again in %d s",
			httpapi.RetryAfter(wait))
	}
	saved, created, err := h.opts.Missions.PutLogEntry(r.Context(), e)
	if err != nil {
		return err
	}
	verb := "updated"
	if created {
		verb = "created"
	}
	h.log.Info("mission log entry "+verb, "id", logx.Clip(saved.ID), "creator_uid", logx.Clip(saved.CreatorUID), "missions", len(saved.Missions))
	h.notifyLog(saved, store.ChangeAddContent)
	httpapi.WriteJSON(w, status, h.envelope(typeLogEntry, logView(saved)))
	return nil
}

// logDelete answers DELETE /Marti/api/missions/logs/entries/{id}.
func (h *Handler) logDelete(w http.ResponseWriter, r *http.Request) error {
	id := r.PathValue("id")
	if err := httpapi.CheckText("id", id, true, 64); err != nil {
		return err
	}
	if err := h.mayChangeLog(r, id); err != nil {
		return err
	}
	e, err := h.opts.Missions.DeleteLogEntry(r.Context(), id)
	if err != nil {
		return err
	}
	h.log.Info("mission log entry deleted", "id", logx.Clip(id))
	h.notifyLog(e, store.ChangeRemoveContent)
	httpapi.WriteJSON(w, http.StatusOK, h.envelope(typeLogEntry, logView(e)))
	return nil
}

// logGet answers GET /Marti/api/missions/logs/entries/{id} (the official
// server's getOneLogEntry, node-tak's MissionLog.get): the entry, when the
// caller may read every mission it belongs to (404 otherwise, as for an
// unknown id).
func (h *Handler) logGet(w http.ResponseWriter, r *http.Request) error {
	id := r.PathValue("id")
	if err := httpapi.CheckText("id", id, true, 64); err != nil {
		return err
	}
	e, err := h.opts.Missions.LogEntry(r.Context(), id)
	if err != nil {
		return err
	}
	for _, name := range e.Missions {
		if _, err := h.missionByName(r, name, readMission); err != nil {
			return err
		}
	}
	httpapi.WriteJSON(w, http.StatusOK, h.envelope(typeLogEntry, logView(e)))
	return nil
}

// mayChangeLog checks that the caller may change or remove the entry id:
// it may read every mission of it, and its author is one of the caller's
// uids (or bound to no certificate, on 8080).
func (h *Handler) mayChangeLog(r *http.Request, id string) error {
	old, err := h.opts.Missions.LogEntry(r.Context(), id)
	if err != nil {
		return err
	}
	for _, name := range old.Missions {
		if _, err := h.missionByName(r, name, readMission); err != nil {
			return err
		}
	}
	return h.actFor(r, "creatorUid", old.CreatorUID)
}

// missionLogs answers GET /Marti/api/missions/{id}/log.
func (h *Handler) missionLogs(w http.ResponseWriter, r *http.Request) error {
	m, err := h.openMission(r, "mission_id", readMission)
	if err != nil {
		return err
	}
	return h.writeLogs(w, r, m.Name)
}

// allLogs answers GET /Marti/api/missions/all/logs.
func (h *Handler) allLogs(w http.ResponseWriter, r *http.Request) error { return h.writeLogs(w, r, "") }

func (h *Handler) writeLogs(w http.ResponseWriter, r *http.Request, name string) error {
	from, to, err := timeRange(r, h.opts.Now())
	if err != nil {
		return err
	}
	p, err := readPage(r, true)
	if err != nil {
		return err
	}
	list, next, err := h.opts.Missions.MissionLogs(r.Context(), name, from, to, p)
	if err != nil {
		return err
	}
	// Every mission's log, or one: an entry is shown when one of its
	// missions is readable (access.md "Missions").
	readable := map[string]bool{}
	shown := make([]bool, len(list))
	for i, e := range list {
		for _, mn := range e.Missions {
			if shown[i], err = h.readable(r, mn, readable); err != nil {
				return err
			}
			if shown[i] {
				break
			}
		}
	}
	setNext(w, headerNextLogs, next.String())
	l := h.startList(w, typeLogEntry)
	for i, e := range list {
		if shown[i] {
			l.add(logView(e))
		}
	}
	l.end()
	return nil
}
