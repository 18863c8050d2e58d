package marti

// Missions (api.md §4.4): the routes, and the mission itself (list, get,
// create or update, its CoT and its change history). Contents, logs,
// subscriptions and notifications have files of their own.

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"time"

	"outpost/appliance/access"
	"outpost/appliance/httpapi"
	"outpost/appliance/logx"
	"outpost/appliance/store"
)

// maxMissionJSON bounds the JSON body of a mission request.
const maxMissionJSON = 256 << 10

func parseInt64(v string) (int64, error) { return strconv.ParseInt(v, 10, 64) }

func (h *Handler) missionRoutes(rt *access.Routes) {
	m := clientRoutes{rt}
	const p = "/Marti/api/missions"
	m.Handle("GET "+p, h.mission(h.missionList))
	m.Handle("GET "+p+"/{mission_id}", h.mission(h.missionGet))
	m.Handle("PUT "+p+"/{mission_id}", h.mission(h.missionPut))
	m.Handle("POST "+p+"/{mission_id}", h.mission(h.missionPut)) // node-tak creates with POST
	m.Handle("GET "+p+"/{mission_id}/cot", h.mission(h.missionCoT))
	m.Handle("GET "+p+"/{mission_id}/changes", h.mission(h.missionChanges))

	m.Handle("PUT "+p+"/{mission_id}/contents", h.mission(h.missionAddContents))
	m.Handle("DELETE "+p+"/{mission_id}/contents", h.mission(h.missionRemoveContent))
	m.Handle("PUT "+p+"/{mission_id}/contents/missionpackage", h.mission(h.missionPackage))
	m.Handle("POST "+p+"/{mission_id}/externaldata", h.mission(h.missionExternalData))

	m.Handle("POST "+p+"/logs/entries", h.mission(h.logCreate))
	m.Handle("PUT "+p+"/logs/entries", h.mission(h.logUpdate))
	m.Handle("DELETE "+p+"/logs/entries/{id}", h.mission(h.logDelete))
	m.Handle("GET "+p+"/logs/entries/{id}", h.mission(h.logGet))
	m.Handle("GET "+p+"/{mission_id}/log", h.mission(h.missionLogs))
	m.Handle("GET "+p+"/all/logs", h.mission(h.allLogs))

	m.Handle("PUT "+p+"/{mission_id}/subscription", h.mission(h.subscribe))
	m.Handle("DELETE "+p+"/{mission_id}/subscription", h.mission(h.unsubscribe))
	m.Handle("GET "+p+"/{mission_id}/subscriptions", h.mission(h.subscriptions))
	m.Handle("GET "+p+"/{mission_id}/subscriptions/roles", h.mission(h.subscriptionRoles))
	m.Handle("GET "+p+"/all/subscriptions", h.mission(h.allSubscriptions))

	m.Handle("PUT "+p+"/{child_mission_id}/parent/{parent_mission_id}", h.mission(h.setParent))
	m.Handle("DELETE "+p+"/{child_mission_id}/parent", h.mission(h.clearParent))
	m.Handle("GET "+p+"/{child_mission_id}/parent", h.mission(h.getParent))
	m.Handle("GET "+p+"/{parent_mission_id}/children", h.mission(h.getChildren))

	m.Handle("PUT "+p+"/{mission_id}/invite/{type}/{invitee}", h.mission(h.invitePut))
	m.Handle("POST "+p+"/{mission_id}/invite", h.mission(h.invitePost))
	m.Handle("GET "+p+"/invitations", h.mission(h.invitations))
	h.layerRoutes(m)
	m.Handle("GET "+p+"/{mission_id}/kml", h.mission(h.missionKMLRoute))
	m.Handle("GET "+p+"/{mission_id}/archive", h.mission(h.missionArchive))
	m.Handle("GET /Marti/ExportMissionKML", h.mission(h.exportKML))
	m.Handle("POST /Marti/ExportMissionKML", h.mission(h.exportKML))
}

// missionList answers GET /Marti/api/missions: envelope 2.13 of the
// missions by name (tool=... lists one tool's), a page of limit= of them
// (after= the last of the page before).
func (h *Handler) missionList(w http.ResponseWriter, r *http.Request) error {
	q := r.URL.Query()
	tool, after := q.Get("tool"), q.Get("after")
	if err := httpapi.CheckText("tool", tool, false, 255); err != nil {
		return err
	}
	if err := httpapi.CheckText("after", after, false, store.MaxMissionName); err != nil {
		return err
	}
	limit, err := pageLimit(r)
	if err != nil {
		return err
	}
	list, more, err := h.opts.Missions.Missions(r.Context(), tool, after, limit)
	if err != nil {
		return err
	}
	if more {
		setNext(w, headerNextMissions, list[len(list)-1].Name)
	}
	return h.writeMissions(w, r, list)
}

// writeMissions answers with envelope 2.13 of the missions in list the
// caller's groups see, but the ExCheck templates, which are not a team's
// mission (as on the official server), reading and writing one mission at
// a time. A password-protected mission the caller has not subscribed to
// shows that it exists and is protected, nothing more (access.md
// "Missions").
func (h *Handler) writeMissions(w http.ResponseWriter, r *http.Request, list []store.Mission) error {
	list, err := h.visibleMissions(r, list)
	if err != nil {
		return err
	}
	view := func(m store.Mission) (missionJSON, error) {
		if m.PasswordProtected {
			ok, err := h.subscribed(r, m)
			if err != nil || !ok {
				return protectedView(m), err
			}
		}
		return h.missionView(r, m)
	}
	var l *listWriter
	for _, m := range list {
		if m.Name == store.TemplatesMission && m.Tool == store.ToolExCheck {
			continue
		}
		v, err := view(m)
		switch {
		case err != nil && l == nil:
			return err
		case err != nil:
			h.abortList(r, err)
		case l == nil:
			l = h.startList(w, typeMission)
		}
		l.add(v)
	}
	if l == nil {
		l = h.startList(w, typeMission)
	}
	l.end()
	return nil
}

// missionGet answers GET /Marti/api/missions/{mission_id}: the mission
// with its contents, uids and subscriptions; logs=true and changes=true
// add its log entries and change history.
//
// A password-protected mission is shown to its subscribers, or with
// password= right (the answer then carries a token for the requests that
// follow, as the official server's does: the mission's owner's subscription
// token is not given away, a new subscription is not made either).
func (h *Handler) missionGet(w http.ResponseWriter, r *http.Request) error {
	if pw := r.URL.Query().Get("password"); pw != "" {
		m, err := h.openMission(r, "mission_id", seeMission)
		if err != nil {
			return err
		}
		if m.PasswordProtected {
			if err := h.checkMissionPassword(r, m.Name, pw); err != nil {
				return err
			}
			return h.writeMission(w, r, m, http.StatusOK, "", true)
		}
	}
	m, err := h.openMission(r, "mission_id", readMission)
	if err != nil {
		return err
	}
	return h.writeMission(w, r, m, http.StatusOK, "", true)
}

// checkMissionPassword checks a mission's password within the password
// guard's budgets (access.md "Password guesses cost the guesser").
func (h *Handler) checkMissionPassword(r *http.Request, name, password string) error {
	return h.guardMission(r, name, func() error { return h.opts.Missions.CheckPassword(r.Context(), name, password) })
}

// guardMission runs check, a check of mission name's password, within the
// password guard's budgets.
func (h *Handler) guardMission(r *http.Request, name string, check func() error) error {
	addr := httpapi.ClientAddr(r)
	blocked, err := h.opts.Guard.Check(addr, "mission:"+name, check)
	if blocked {
		h.log.Warn("mission password: address refused after repeated failed passwords", "remote", addr.String(), "mission", logx.Clip(name))
	}
	return err
}

// writeMission answers with envelope 2.13 holding the one mission.
func (h *Handler) writeMission(w http.ResponseWriter, r *http.Request, m store.Mission, status int, token string, detail bool) error {
	ctx := r.Context()
	v, err := h.missionView(r, m)
	if err != nil {
		return err
	}
	v.Token = token
	if detail {
		subs, err := h.opts.Missions.Subscriptions(ctx, m.Name)
		if err != nil {
			return err
		}
		for _, s := range subs {
			s.MissionName = ""
			v.Subscriptions = append(v.Subscriptions, subscriptionView(s, false))
		}
		// The newest page of each (limit= sets its size); the headers name
		// the next page of .../log and .../changes.
		q := r.URL.Query()
		var p store.Page
		if q.Get("logs") == "true" || q.Get("changes") == "true" {
			if p, err = readPage(r, false); err != nil {
				return err
			}
		}
		if q.Get("logs") == "true" {
			logs, next, err := h.opts.Missions.MissionLogs(ctx, m.Name, zeroTime, zeroTime, p)
			if err != nil {
				return err
			}
			setNext(w, headerNextLogs, next.String())
			v.Logs = make([]logJSON, 0, len(logs))
			for _, e := range logs {
				v.Logs = append(v.Logs, logView(e))
			}
		}
		if q.Get("changes") == "true" {
			changes, next, err := h.opts.Missions.MissionChanges(ctx, m.Name, zeroTime, zeroTime, p)
			if err != nil {
				return err
			}
			setNext(w, headerNextChanges, next.String())
			v.MissionChanges = make([]changeJSON, 0, len(changes))
			for _, c := range changes {
				v.MissionChanges = append(v.MissionChanges, changeView(c))
			}
		}
	}
	httpapi.WriteJSON(w, status, h.envelope(typeMission, []missionJSON{v}))
	return nil
}

// missionBody is WinTAK's JSON body of a mission create (shapes: accept
// both the query and the body). defaultRole may be a role name or a role
// object; groups a list or one comma-separated string.
type missionBody struct {
	Description    *string         `json:"description"`
	ChatRoom       *string         `json:"chatRoom"`
	BaseLayer      *string         `json:"baseLayer"`
	BBox           *string         `json:"bbox"`
	Path           *string         `json:"path"`
	Classification *string         `json:"classification"`
	Tool           *string         `json:"tool"`
	Password       *string         `json:"password"`
	CreatorUID     *string         `json:"creatorUid"`
	InviteOnly     *bool           `json:"inviteOnly"`
	Expiration     *int64          `json:"expiration"`
	Keywords       *[]string       `json:"keywords"`
	DefaultRole    json.RawMessage `json:"defaultRole"`
	Groups         json.RawMessage `json:"groups"`
	Group          json.RawMessage `json:"group"`
}

// missionInput reads a create or update from the query and, when there is
// one, the JSON body (query values win).
func missionInput(r *http.Request) (store.MissionInput, error) {
	var in store.MissionInput
	var b missionBody
	if r.ContentLength != 0 && strings.Contains(r.Header.Get("Content-Type"), "json") {
		if err := httpapi.DecodeJSON(r, maxMissionJSON, &b); err != nil {
			return in, err
		}
	}
	q := r.URL.Query()
	text := func(field string, body *string) *string {
		if q.Has(field) {
			v := q.Get(field)
			return &v
		}
		return body
	}
	in.Description, in.ChatRoom, in.BaseLayer = text("description", b.Description), text("chatRoom", b.ChatRoom), text("baseLayer", b.BaseLayer)
	in.BBox, in.Path, in.Classification = text("bbox", b.BBox), text("path", b.Path), text("classification", b.Classification)
	in.Tool, in.Password = text("tool", b.Tool), text("password", b.Password)
	if c := text("creatorUid", b.CreatorUID); c != nil {
		in.CreatorUID = *c
	}
	in.InviteOnly, in.Expiration, in.Keywords = b.InviteOnly, b.Expiration, b.Keywords
	if v := q.Get("inviteOnly"); v != "" {
		bv, err := strconv.ParseBool(v)
		if err != nil {
			return in, httpapi.BadRequest("inviteOnly", "must be true or false")
		}
		in.InviteOnly = &bv
	}
	if v := q.Get("expiration"); v != "" {
		n, err := parseInt64(v)
		if err != nil {
			return in, httpapi.BadRequest("expiration", "must be a whole number")
		}
		in.Expiration = &n
	}
	if q.Has("keywords") {
		kw := splitList(q.Get("keywords"))
		in.Keywords = &kw
	}
	var err error
	if in.DefaultRole, err = defaultRole(q.Get("defaultRole"), b.DefaultRole); err != nil {
		return in, err
	}
	if in.Groups, err = groups(q, b); err != nil {
		return in, err
	}
	return in, nil
}

func splitList(v string) []string {
	out := []string{}
	for _, s := range strings.Split(v, ",") {
		if s = strings.TrimSpace(s); s != "" {
			out = append(out, s)
		}
	}
	return out
}

func defaultRole(query string, body json.RawMessage) (*string, error) {
	v := query
	if v == "" && len(body) > 0 && !bytes.Equal(body, []byte("null")) {
		var obj struct {
			Type string `json:"type"`
		}
		if json.Unmarshal(body, &v) != nil {
			if err := json.Unmarshal(body, &obj); err != nil {
				return nil, httpapi.BadRequest("defaultRole", "must be a role name or an object with a type")
			}
			v = obj.Type
		}
	}
	if v == "" {
		return nil, nil
	}
	if !store.ValidRole(v) {
		return nil, httpapi.BadRequest("defaultRole", "must be %s, %s or %s, not %q", store.RoleOwner, store.RoleMember, store.RoleReadOnly, httpapi.ClipValue(v))
	}
	return &v, nil
}

func groups(q map[string][]string, b missionBody) (*[]string, error) {
	if v, ok := q["group"]; ok {
		l := splitList(strings.Join(v, ","))
		return &l, nil
	}
	for _, raw := range []json.RawMessage{b.Groups, b.Group} {
		if len(raw) == 0 || bytes.Equal(raw, []byte("null")) {
			continue
		}
		var l []string
		if json.Unmarshal(raw, &l) == nil {
			return &l, nil
		}
		var s string
		if json.Unmarshal(raw, &s) == nil {
			l = splitList(s)
			return &l, nil
		}
		return nil, httpapi.BadRequest("groups", "must be a list of group names or one comma-separated string")
	}
	return nil, nil
}

// missionPut answers PUT (and node-tak's POST) /Marti/api/missions/{id}:
// creates the mission (201) or updates it (200, its owner only); either
// way MissionCreatedNotification goes to every client once committed.
func (h *Handler) missionPut(w http.ResponseWriter, r *http.Request) error {
	name, err := missionName(r, "mission_id")
	if err != nil {
		return err
	}
	in, err := missionInput(r)
	if err != nil {
		return err
	}
	if err := h.actFor(r, "creatorUid", in.CreatorUID); err != nil {
		return err
	}
	// access.md "Missions": an existing mission changes only when the
	// caller may read it (and, the store checks, owns it); a new one is in
	// the caller's groups, or in those it names that it sends to.
	switch _, err := h.missionByName(r, name, readMission); {
	case err == nil:
	case errors.Is(err, store.ErrNotFound):
		if _, gone := h.opts.Missions.MissionByName(r.Context(), name); gone == nil {
			return fmt.Errorf("%w: the mission name %q is taken", store.ErrConflict, name)
		}
		if in.Groups == nil {
			names, err := h.creatorGroups(r)
			if err != nil {
				return err
			}
			in.Groups = &names
		}
	default:
		return err
	}
	if in.Groups != nil && len(*in.Groups) > 0 {
		groups, err := h.groupList(r.Context())
		if err != nil {
			return err
		}
		if _, err := access.Restrict(access.From(r), groups, *in.Groups); err != nil {
			return httpapi.InField("groups", err)
		}
	}
	m, created, sub, err := h.opts.Missions.PutMission(r.Context(), name, in)
	if err != nil {
		return err
	}
	status := http.StatusOK
	if created {
		status = http.StatusCreated
		h.log.Info("mission created", "mission", logx.Clip(name), "creator_uid", logx.Clip(in.CreatorUID), "tool", logx.Clip(m.Tool),
			"password_protected", m.PasswordProtected)
	} else {
		h.log.Info("mission updated", "mission", logx.Clip(name), "by", logx.Clip(in.CreatorUID))
	}
	// api.md §6.2: on creation and on update, so every client's mission
	// list shows the current metadata.
	h.notifyCreated(m, in.CreatorUID)
	if created {
		h.missionChanged(MissionCreated, m, nil, nil, in.CreatorUID)
	}
	return h.writeMission(w, r, m, status, sub.Token, false)
}

// missionCoT answers GET /Marti/api/missions/{id}/cot: <events> holding
// the latest event of every uid of the mission, ordered by uid: the stored
// one or, when newer, the broker's live state's that the caller's groups
// see (a uid relayed a moment ago is there before the history has it, as
// for cot/xml).
func (h *Handler) missionCoT(w http.ResponseWriter, r *http.Request) error {
	m, err := h.openMission(r, "mission_id", readMission)
	if err != nil {
		return err
	}
	events, err := h.opts.Missions.MissionCoT(r.Context(), m.Name)
	if err != nil {
		return err
	}
	uids, err := h.opts.Missions.MissionUIDs(r.Context(), m.ID)
	if err != nil {
		return err
	}
	type latest struct {
		xml []byte
		at  time.Time
	}
	byUID := make(map[string]latest, len(uids))
	for _, e := range events {
		byUID[e.UID] = latest{e.XML, e.ReceivedAt}
	}
	live := h.newestLive("", access.From(r).Reads())
	for _, u := range uids {
		l, ok := live[u.UID]
		if st, stored := byUID[u.UID]; ok && (!stored || newer(l.At, st.at)) {
			byUID[u.UID] = latest{l.XML, l.At}
		}
	}
	order := slices.Sorted(maps.Keys(byUID))
	xmls := make([][]byte, len(order))
	for i, uid := range order {
		xmls[i] = byUID[uid].xml
	}
	httpapi.WriteBody(w, http.StatusOK, "application/xml", eventsDocument(xmls))
	return nil
}

// missionChanges answers GET /Marti/api/missions/{id}/changes: a page of
// the change history (secago, start, end narrow it; limit, before page
// it), oldest first.
func (h *Handler) missionChanges(w http.ResponseWriter, r *http.Request) error {
	m, err := h.openMission(r, "mission_id", readMission)
	if err != nil {
		return err
	}
	from, to, err := timeRange(r, h.opts.Now())
	if err != nil {
		return err
	}
	p, err := readPage(r, true)
	if err != nil {
		return err
	}
	changes, next, err := h.opts.Missions.MissionChanges(r.Context(), m.Name, from, to, p)
	if err != nil {
		return err
	}
	setNext(w, headerNextChanges, next.String())
	l := h.startList(w, typeChange)
	for _, c := range changes {
		l.add(changeView(c))
	}
	l.end()
	return nil
}
