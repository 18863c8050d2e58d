package marti

// Mission layers (api-marti.md "Mission layers"): the official server's
// MissionApi layer routes. A layer is answered as the official server's
// MissionLayer: its children under mission_layers, and the contents its
// ITEM layers stand for as uids (a UID layer) or contents (a CONTENTS
// layer), in the mission's own shapes; an ITEM whose content the mission
// no longer holds is left out, as there.

import (
	"fmt"
	"net/http"
	"strings"

	"outpost/appliance/httpapi"
	"outpost/appliance/logx"
	"outpost/appliance/store"
)

const (
	typeLayer          = "MissionLayer"
	typeMissionLayerCh = "t-x-m-c-h" // a layer changed (the official server's type)
)

type layerJSON struct {
	Name          string        `json:"name"`
	Type          string        `json:"type"`
	ParentUID     string        `json:"parentUid,omitempty"`
	UID           string        `json:"uid"`
	MissionLayers []layerJSON   `json:"mission_layers,omitempty"`
	UIDs          []uidJSON     `json:"uids,omitempty"`
	Contents      []contentJSON `json:"contents,omitempty"`
}

func (h *Handler) layerRoutes(m clientRoutes) {
	const p = "/Marti/api/missions/{mission_id}/layers"
	m.Handle("GET "+p, h.mission(h.layerList))
	m.Handle("PUT "+p, h.mission(h.layerCreate))
	m.Handle("DELETE "+p, h.mission(h.layerDelete))
	m.Handle("PUT "+p+"/parent", h.mission(h.layerMove))
	m.Handle("GET "+p+"/{layer_uid}", h.mission(h.layerGet))
	m.Handle("PUT "+p+"/{layer_uid}/name", h.mission(h.layerRename))
	m.Handle("PUT "+p+"/{layer_uid}/position", h.mission(h.layerPosition))
}

// layerForest is a mission's layers ready to answer.
type layerForest struct {
	children map[string][]store.MissionLayer // by parent uid ("" top level)
	byUID    map[string]store.MissionLayer
	uids     map[string]uidJSON
	contents map[string]contentJSON // by hash
}

// forest reads mission m's layers and the contents they may stand for.
func (h *Handler) forest(r *http.Request, m store.Mission) (*layerForest, error) {
	ctx := r.Context()
	layers, err := h.opts.Missions.MissionLayers(ctx, m)
	if err != nil {
		return nil, err
	}
	f := &layerForest{children: map[string][]store.MissionLayer{}, byUID: map[string]store.MissionLayer{},
		uids: map[string]uidJSON{}, contents: map[string]contentJSON{}}
	for _, l := range layers {
		f.children[l.ParentUID] = append(f.children[l.ParentUID], l)
		f.byUID[l.UID] = l
	}
	for _, c := range f.children {
		sortByPosition(c)
	}
	if len(layers) == 0 {
		return f, nil
	}
	uids, err := h.opts.Missions.MissionUIDs(ctx, m.ID)
	if err != nil {
		return nil, err
	}
	for _, u := range uids {
		f.uids[u.UID] = uidJSON{Data: u.UID, Timestamp: httpapi.FormatTime(u.Added), CreatorUID: u.CreatorUID, Details: u.Details}
	}
	contents, err := h.opts.Missions.MissionContents(ctx, m.ID)
	if err != nil {
		return nil, err
	}
	for _, c := range contents {
		f.contents[c.Data.Hash] = contentJSON{Data: c.Data, Timestamp: httpapi.FormatTime(c.Added), CreatorUID: c.CreatorUID}
	}
	return f, nil
}

func sortByPosition(l []store.MissionLayer) {
	for i := 1; i < len(l); i++ {
		for j := i; j > 0 && l[j].Position < l[j-1].Position; j-- {
			l[j], l[j-1] = l[j-1], l[j]
		}
	}
}

// view is layer l with everything under it.
func (f *layerForest) view(l store.MissionLayer) layerJSON {
	v := layerJSON{Name: l.Name, Type: l.Type, ParentUID: l.ParentUID, UID: l.UID}
	for _, c := range f.children[l.UID] {
		if c.Type != store.LayerItem {
			v.MissionLayers = append(v.MissionLayers, f.view(c))
			continue
		}
		switch l.Type {
		case store.LayerUID:
			if u, ok := f.uids[c.UID]; ok {
				v.UIDs = append(v.UIDs, u)
			}
		case store.LayerContents:
			if x, ok := f.contents[strings.ToLower(c.UID)]; ok {
				v.Contents = append(v.Contents, x)
			}
		}
	}
	return v
}

// layerList answers GET .../layers: the top-level layers, each with its
// tree.
func (h *Handler) layerList(w http.ResponseWriter, r *http.Request) error {
	m, err := h.openMission(r, "mission_id", readMission)
	if err != nil {
		return err
	}
	f, err := h.forest(r, m)
	if err != nil {
		return err
	}
	out := []layerJSON{}
	for _, l := range f.children[""] {
		out = append(out, f.view(l))
	}
	httpapi.WriteJSON(w, http.StatusOK, h.envelope(typeLayer, out))
	return nil
}

// layerGet answers GET .../layers/{layer_uid}: one layer with its tree.
func (h *Handler) layerGet(w http.ResponseWriter, r *http.Request) error {
	m, err := h.openMission(r, "mission_id", readMission)
	if err != nil {
		return err
	}
	uid, err := layerUID(r)
	if err != nil {
		return err
	}
	f, err := h.forest(r, m)
	if err != nil {
		return err
	}
	l, ok := f.byUID[uid]
	if !ok {
		return fmt.Errorf("%w: layer_uid: mission %q has no layer %q", store.ErrNotFound, httpapi.ClipValue(m.Name), httpapi.ClipValue(uid))
	}
	httpapi.WriteJSON(w, http.StatusOK, h.envelope(typeLayer, f.view(l)))
	return nil
}

func layerUID(r *http.Request) (string, error) {
	uid := r.PathValue("layer_uid")
	return uid, httpapi.CheckText("layer_uid", uid, true, 255)
}

// layerWriter opens the {mission_id} mission for a layer change and reads
// the acting creatorUid, which the official server requires.
func (h *Handler) layerWriter(r *http.Request) (store.Mission, string, error) {
	m, who, err := h.missionAndActor(r, readMission)
	if err == nil && who == "" {
		err = httpapi.BadRequest("creatorUid", "required")
	}
	return m, who, err
}

// layerChange is layerWriter for a route on one layer: also its
// {layer_uid} and the query values fields.
func (h *Handler) layerChange(r *http.Request, fields ...string) (m store.Mission, who, uid string, v []string, err error) {
	if m, who, err = h.layerWriter(r); err != nil {
		return
	}
	if uid, err = layerUID(r); err != nil {
		return
	}
	v, err = texts(r, fields...)
	return
}

// texts reads optional query values, each at most 255 bytes of text.
func texts(r *http.Request, fields ...string) ([]string, error) {
	q := r.URL.Query()
	out := make([]string, len(fields))
	for i, f := range fields {
		out[i] = q.Get(f)
		if err := httpapi.CheckText(f, out[i], false, 255); err != nil {
			return nil, err
		}
	}
	return out, nil
}

// uidList reads a list parameter: repeated, or comma-separated (what
// node-tak sends for an array), at most store.MaxMissionBatch.
func uidList(r *http.Request, field string) ([]string, error) {
	l := splitList(strings.Join(r.URL.Query()[field], ","))
	if len(l) == 0 {
		return nil, httpapi.BadRequest(field, "required")
	}
	if len(l) > store.MaxMissionBatch {
		return nil, httpapi.BadRequest(field, "at most %d layers at once", store.MaxMissionBatch)
	}
	for _, v := range l {
		if err := httpapi.CheckText(field, v, true, 255); err != nil {
			return nil, err
		}
	}
	return l, nil
}

// layerCreate answers PUT .../layers?name=&type=&creatorUid= (uid,
// parentUid, afterUid optional): the new layer; a uid the mission has
// already is moved instead, as on the official server.
func (h *Handler) layerCreate(w http.ResponseWriter, r *http.Request) error {
	m, who, err := h.layerWriter(r)
	if err != nil {
		return err
	}
	v, err := texts(r, "name", "type", "uid", "parentUid", "afterUid")
	if err != nil {
		return err
	}
	in := store.LayerInput{Name: v[0], Type: v[1], UID: v[2], ParentUID: v[3], AfterUID: v[4]}
	if in.Name == "" {
		return httpapi.BadRequest("name", "required")
	}
	if !store.ValidLayerType(in.Type) {
		return httpapi.BadRequest("type", "must be GROUP, UID, CONTENTS, MAPLAYER or ITEM, not %q", httpapi.ClipValue(in.Type))
	}
	l, created, err := h.opts.Missions.PutMissionLayer(r.Context(), m.Name, in, who)
	if err != nil {
		return err
	}
	h.log.Info("mission layer put", "mission", logx.Clip(m.Name), "layer", logx.Clip(l.UID), "type", l.Type, "created", created, "by", logx.Clip(who))
	h.notifyLayer(m, who)
	return h.answerLayer(w, r, m, l.UID)
}

// answerLayer answers with layer uid of m as it is now.
func (h *Handler) answerLayer(w http.ResponseWriter, r *http.Request, m store.Mission, uid string) error {
	f, err := h.forest(r, m)
	if err != nil {
		return err
	}
	httpapi.WriteJSON(w, http.StatusOK, h.envelope(typeLayer, f.view(f.byUID[uid])))
	return nil
}

// layerRename answers PUT .../layers/{layer_uid}/name?name=&creatorUid=.
func (h *Handler) layerRename(w http.ResponseWriter, r *http.Request) error {
	m, who, uid, v, err := h.layerChange(r, "name")
	if err != nil {
		return err
	}
	if v[0] == "" {
		return httpapi.BadRequest("name", "required")
	}
	if _, err := h.opts.Missions.RenameMissionLayer(r.Context(), m.Name, uid, v[0], who); err != nil {
		return err
	}
	h.log.Info("mission layer renamed", "mission", logx.Clip(m.Name), "layer", logx.Clip(uid), "by", logx.Clip(who))
	h.notifyLayer(m, who)
	return h.answerLayer(w, r, m, uid)
}

// layerPosition answers PUT .../layers/{layer_uid}/position?afterUid=
// (none: first)&creatorUid=: the layer moves among its siblings.
func (h *Handler) layerPosition(w http.ResponseWriter, r *http.Request) error {
	m, who, uid, v, err := h.layerChange(r, "afterUid")
	if err != nil {
		return err
	}
	f, err := h.forest(r, m)
	if err != nil {
		return err
	}
	parent := f.byUID[uid].ParentUID // a missing layer is the store's 404
	return h.moveLayers(w, r, m, who, []string{uid}, parent, v[0])
}

// layerMove answers PUT .../layers/parent?layerUid=&parentUid=&afterUid=
// &creatorUid=: the layers (repeated or comma-separated) move under
// parentUid (none: the top level), in their order after afterUid. Moving
// an ITEM layer moves its uid or file to another layer.
func (h *Handler) layerMove(w http.ResponseWriter, r *http.Request) error {
	m, who, err := h.layerWriter(r)
	if err != nil {
		return err
	}
	uids, err := uidList(r, "layerUid")
	if err != nil {
		return err
	}
	v, err := texts(r, "parentUid", "afterUid")
	if err != nil {
		return err
	}
	return h.moveLayers(w, r, m, who, uids, v[0], v[1])
}

func (h *Handler) moveLayers(w http.ResponseWriter, r *http.Request, m store.Mission, who string, uids []string, parent, after string) error {
	moved, err := h.opts.Missions.MoveMissionLayers(r.Context(), m.Name, uids, parent, after, who)
	if err != nil {
		return err
	}
	h.log.Info("mission layers moved", "mission", logx.Clip(m.Name), "layers", len(moved), "parent", logx.Clip(parent), "by", logx.Clip(who))
	h.notifyLayer(m, who)
	f, err := h.forest(r, m)
	if err != nil {
		return err
	}
	out := make([]layerJSON, 0, len(moved))
	for _, l := range moved {
		out = append(out, f.view(f.byUID[l.UID]))
	}
	httpapi.WriteJSON(w, http.StatusOK, h.envelope(typeLayer, out))
	return nil
}

// layerDelete answers DELETE .../layers?uid=&creatorUid=: the layers
// (repeated or comma-separated) and all under them go, and the uids and
// files their ITEM layers hold leave the mission.
func (h *Handler) layerDelete(w http.ResponseWriter, r *http.Request) error {
	m, who, err := h.layerWriter(r)
	if err != nil {
		return err
	}
	uids, err := uidList(r, "uid")
	if err != nil {
		return err
	}
	named, removed, err := h.opts.Missions.DeleteMissionLayers(r.Context(), m.Name, uids, who)
	if err != nil {
		return err
	}
	h.log.Info("mission layers deleted", "mission", logx.Clip(m.Name), "layers", len(named), "contents_removed", len(removed), "by", logx.Clip(who))
	h.notifyLayer(m, who)
	out := make([]layerJSON, 0, len(named))
	for _, l := range named {
		out = append(out, layerJSON{Name: l.Name, Type: l.Type, ParentUID: l.ParentUID, UID: l.UID})
	}
	httpapi.WriteJSON(w, http.StatusOK, h.envelope(typeLayer, out))
	return nil
}

// notifyLayer tells the mission's subscribers that its layers changed
// (the official server's t-x-m-c-h: the mission element, nothing more; a
// client reads the layers again).
func (h *Handler) notifyLayer(m store.Mission, author string) {
	subs := h.subscribers(m.Name)
	if len(subs) == 0 {
		return
	}
	var b xb
	b.missionOpen("CHANGE", m, author)
	b.WriteString("</mission>")
	h.send(notification(typeMissionLayerCh, b.Bytes(), h.opts.Now()), subs, store.AllGroups)
}
