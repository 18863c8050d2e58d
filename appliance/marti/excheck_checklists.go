package marti

// ExCheck checklists (api.md §4.3): started from a template, listed,
// read, their tasks updated (ChecklistUpdateNotification to the
// subscribers of the checklist's mission once committed), and linked into
// a mission as external data.

import (
	"net/http"

	"github.com/google/uuid"

	"outpost/appliance/access"
	"outpost/appliance/excheck"
	"outpost/appliance/httpapi"
	"outpost/appliance/logx"
	"outpost/appliance/store"
)

// checklistStart answers POST /Marti/api/excheck/{templateUid}/start with
// the new checklist: name= required, description=; it also creates the
// checklist's mission (MissionCreatedNotification to every client).
func (h *Handler) checklistStart(w http.ResponseWriter, r *http.Request) error {
	tplUID, err := pathUID(r, "subscription")
	if err != nil {
		return err
	}
	q := r.URL.Query()
	name, desc := q.Get("name"), q.Get("description")
	if err := httpapi.CheckText("name", name, true, 255); err != nil {
		return err
	}
	if err := httpapi.CheckText("description", desc, false, 4096); err != nil {
		return err
	}
	who, err := h.actor(r)
	if err != nil {
		return err
	}
	callsign := q.Get("callsign")
	if err := httpapi.CheckText("callsign", callsign, false, 255); err != nil {
		return err
	}
	tpl, err := h.getDoc(r, store.TemplateDoc, tplUID)
	if err != nil {
		return err
	}
	// The checklist and its mission are the starter's, in its IN groups.
	groups, err := h.creatorGroups(r)
	if err != nil {
		return err
	}
	td, err := excheck.ParseTemplate(tpl.XML)
	if err != nil {
		return err
	}
	d := excheck.Start(td, excheck.StartParams{UID: uuid.NewString(), Name: name, Description: desc, StartTime: h.opts.Now(),
		CreatorUID: who, Callsign: callsign})
	m, err := h.opts.Checklists.CreateChecklist(r.Context(), store.ExCheckDoc{UID: d.UID(), Name: name, TemplateUID: tplUID,
		CreatorUID: who, XML: d.Bytes(), Groups: access.From(r).In}, desc, groups)
	if err != nil {
		return err
	}
	h.log.Info("checklist started", "checklist_uid", d.UID(), "template_uid", tplUID, "name", logx.Clip(name), "creator_uid", logx.Clip(who))
	h.notifyCreated(m, who)
	httpapi.WriteBody(w, http.StatusOK, xmlType, d.Bytes())
	return nil
}

// checklistsActive answers GET /Marti/api/excheck/checklist/active:
// <checklists> holding every checklist the caller sees, written as the
// checklists are read (one held at a time).
func (h *Handler) checklistsActive(w http.ResponseWriter, r *http.Request) error {
	sees := access.From(r).Reads()
	l := httpapi.NewListing(w, r, xmlType, `<?xml version="1.0" encoding="UTF-8"?>`+"\n<checklists>", "</checklists>")
	err := h.opts.Checklists.EachChecklist(r.Context(), func(c store.ExCheckDoc) error {
		if !store.Seen(c.Groups, sees) {
			return nil
		}
		return l.Raw(stripDeclaration(c.XML))
	})
	l.Finish(err, missionError)
	return nil
}

func (h *Handler) checklistGet(w http.ResponseWriter, r *http.Request) error {
	return h.docGet(w, r, store.ChecklistDoc, "checklistid")
}

// checklistTaskPut answers PUT /Marti/api/excheck/checklist/{id}/task/{taskid}:
// the task is replaced by the body (a complete task gets its completion
// time when it has none) and the task as stored is returned; the
// checklist mission's subscribers receive ChecklistUpdateNotification.
func (h *Handler) checklistTaskPut(w http.ResponseWriter, r *http.Request) error {
	uid, taskUID, err := pathUIDs(r, "checklistid", "taskid")
	if err != nil {
		return err
	}
	who, err := h.actor(r)
	if err != nil {
		return err
	}
	if who == "" {
		who, _ = h.identity(r)
	}
	t, err := readTask(r, "checklisttaskdata", taskUID)
	if err != nil {
		return xmlError("checklisttaskdata", err)
	}
	if _, err := h.getDoc(r, store.ChecklistDoc, uid); err != nil {
		return err
	}
	complete := excheck.Completed(t, h.opts.Now())
	err = h.opts.Checklists.UpdateChecklist(r.Context(), uid, who, func(raw []byte) ([]byte, error) {
		d, _, err := docTask(raw, store.ChecklistDoc, uid, taskUID)
		if err != nil {
			return nil, err
		}
		fitTask(d, t, taskUID)
		d.PutTask(t)
		return d.Bytes(), nil
	})
	if err != nil {
		return err
	}
	task := excheck.Document(t)
	h.log.Info("checklist task updated", "checklist_uid", uid, "task_uid", taskUID, "by", logx.Clip(who),
		"status", logx.Clip(excheck.TaskStatus(t)), "complete", complete)
	h.notifyChecklist(uid, who, taskUID, task)
	httpapi.WriteBody(w, http.StatusOK, xmlType, task)
	return nil
}

// checklistToMission answers PUT /Marti/api/excheck/checklist/{id}/mission/{mission_id}:
// the checklist becomes external data of the mission
// (MissionExternalDataCreatedNotification to its subscribers).
func (h *Handler) checklistToMission(w http.ResponseWriter, r *http.Request) error {
	uid, err := pathUID(r, "checklistid")
	if err != nil {
		return err
	}
	c, err := h.getDoc(r, store.ChecklistDoc, uid)
	if err != nil {
		return err
	}
	m, who, err := h.missionAndActor(r, readMission)
	if err != nil {
		return err
	}
	name := m.Name
	link := h.linkBase(r) + "/Marti/api/excheck/checklist/" + uid
	x := store.ExternalData{UID: uid, Name: c.Name, Tool: store.ToolExCheck, URLData: link, URLView: link,
		Notes: "ExCheck checklist " + c.Name}
	if m, err = h.opts.Missions.PutExternalData(r.Context(), name, x, who); err != nil {
		return err
	}
	h.log.Info("checklist added to a mission", "checklist_uid", uid, "mission", logx.Clip(name), "by", logx.Clip(who))
	h.notifyExternalData(m, who, x)
	httpapi.WriteJSON(w, http.StatusOK, h.envelope(typeExternalData, x))
	return nil
}
