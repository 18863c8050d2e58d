package marti

// Mission subscriptions, invitations and parent/child links (api.md §4.4,
// §3: subscribe answers 201; unsubscribe with disconnectOnly keeps the
// subscription's data).

import (
	"net/http"
	"strconv"
	"strings"

	"outpost/appliance/access"
	"outpost/appliance/httpapi"
	"outpost/appliance/logx"
	"outpost/appliance/store"
)

// subscribe answers PUT /Marti/api/missions/{id}/subscription?uid=: 201
// with the subscription and its token. A password-protected mission wants
// password=. Once committed, the client receives the latest event of each
// of the mission's uids (received within secago, or start..end, when
// given).
func (h *Handler) subscribe(w http.ResponseWriter, r *http.Request) error {
	m, uid, err := h.missionAndSubscriber(r)
	if err != nil {
		return err
	}
	name := m.Name
	q := r.URL.Query()
	if err := httpapi.CheckText("topic", q.Get("topic"), false, 255); err != nil {
		return err
	}
	from, to, err := timeRange(r, h.opts.Now())
	if err != nil {
		return err
	}
	user, _ := h.identity(r)
	sub, err := h.subscribeChecked(r, m, uid, user, q.Get("password"))
	if err != nil {
		return err
	}
	h.log.Info("mission subscribed", "mission", logx.Clip(name), "uid", logx.Clip(uid), "user", logx.Clip(user), "role", sub.Role)
	h.sendMissionCoT(r.Context(), name, uid, from, to)
	httpapi.WriteJSON(w, http.StatusCreated, h.envelope(typeSubscription, subscriptionView(sub, true)))
	return nil
}

// subscribeChecked subscribes uid to m. A password-protected mission's
// password is checked within the password guard's budgets (access.md
// "Password guesses cost the guesser"); its owner needs none when it is
// known by its certificate, but on 8080, where anyone may claim the
// owner's uid, it does.
func (h *Handler) subscribeChecked(r *http.Request, m store.Mission, uid, user, password string) (store.Subscription, error) {
	if !m.PasswordProtected {
		return h.opts.Missions.Subscribe(r.Context(), m.Name, uid, user, password)
	}
	owner := uid == m.CreatorUID
	if owner && access.From(r).Identity() != "" {
		return h.opts.Missions.Subscribe(r.Context(), m.Name, uid, user, password)
	}
	if owner {
		// The store would not check the owner's password: check it here.
		if err := h.checkMissionPassword(r, m.Name, password); err != nil {
			return store.Subscription{}, err
		}
		return h.opts.Missions.Subscribe(r.Context(), m.Name, uid, user, password)
	}
	var sub store.Subscription
	err := h.guardMission(r, m.Name, func() (err error) {
		sub, err = h.opts.Missions.Subscribe(r.Context(), m.Name, uid, user, password)
		return err
	})
	return sub, err
}

// unsubscribe answers DELETE /Marti/api/missions/{id}/subscription?uid=
// (disconnectOnly=true keeps the subscription's token and role).
func (h *Handler) unsubscribe(w http.ResponseWriter, r *http.Request) error {
	m, uid, err := h.missionAndSubscriber(r)
	if err != nil {
		return err
	}
	name := m.Name
	q := r.URL.Query()
	disconnectOnly := false
	if v := q.Get("disconnectOnly"); v != "" {
		if disconnectOnly, err = strconv.ParseBool(v); err != nil {
			return httpapi.BadRequest("disconnectOnly", "must be true or false, not %q", httpapi.ClipValue(v))
		}
	}
	if err := h.opts.Missions.Unsubscribe(r.Context(), name, uid, disconnectOnly); err != nil {
		return err
	}
	h.log.Info("mission unsubscribed", "mission", logx.Clip(name), "uid", logx.Clip(uid), "disconnect_only", disconnectOnly)
	msg := "unsubscribed"
	if disconnectOnly {
		msg = "disconnected; the subscription is kept"
	}
	httpapi.WriteMessage(w, http.StatusOK, msg)
	return nil
}

// subscriptions answers GET /Marti/api/missions/{id}/subscriptions: the
// client uids subscribed.
func (h *Handler) subscriptions(w http.ResponseWriter, r *http.Request) error {
	subs, err := h.missionSubs(r)
	if err != nil {
		return err
	}
	uids := make([]string, len(subs))
	for i, s := range subs {
		uids[i] = s.ClientUID
	}
	httpapi.WriteJSON(w, http.StatusOK, h.envelope(typeSubscription, uids))
	return nil
}

// subscriptionRoles answers GET .../subscriptions/roles: each subscriber
// with its role (no tokens).
func (h *Handler) subscriptionRoles(w http.ResponseWriter, r *http.Request) error {
	subs, err := h.missionSubs(r)
	if err != nil {
		return err
	}
	h.writeSubscriptions(w, subs, false)
	return nil
}

func (h *Handler) missionSubs(r *http.Request) ([]store.Subscription, error) {
	m, err := h.openMission(r, "mission_id", readMission)
	if err != nil {
		return nil, err
	}
	return h.opts.Missions.Subscriptions(r.Context(), m.Name)
}

// allSubscriptions answers GET /Marti/api/missions/all/subscriptions: those
// of the missions the caller may read (access.md "Missions").
func (h *Handler) allSubscriptions(w http.ResponseWriter, r *http.Request) error {
	subs, err := h.opts.Missions.Subscriptions(r.Context(), "")
	if err != nil {
		return err
	}
	readable := map[string]bool{}
	kept := subs[:0]
	for _, s := range subs {
		ok, err := h.readable(r, s.MissionName, readable)
		if err != nil {
			return err
		}
		if ok {
			kept = append(kept, s)
		}
	}
	h.writeSubscriptions(w, kept, true)
	return nil
}

// writeSubscriptions answers with each subscription and its role, never a
// token; withMission keeps each one's mission name (the all-missions list).
func (h *Handler) writeSubscriptions(w http.ResponseWriter, subs []store.Subscription, withMission bool) {
	out := make([]subscriptionJSON, len(subs))
	for i, s := range subs {
		if !withMission {
			s.MissionName = ""
		}
		out[i] = subscriptionView(s, false)
	}
	httpapi.WriteJSON(w, http.StatusOK, h.envelope(typeSubscription, out))
}

func (h *Handler) setParent(w http.ResponseWriter, r *http.Request) error {
	c, err := h.openMission(r, "child_mission_id", readMission)
	if err != nil {
		return err
	}
	p, err := h.openMission(r, "parent_mission_id", readMission)
	if err != nil {
		return err
	}
	child, parent := c.Name, p.Name
	who, err := h.actor(r)
	if err != nil {
		return err
	}
	if err := h.opts.Missions.SetMissionParent(r.Context(), child, parent, who); err != nil {
		return err
	}
	h.log.Info("mission parent set", "mission", logx.Clip(child), "parent", logx.Clip(parent))
	httpapi.WriteMessage(w, http.StatusOK, "parent set")
	return nil
}

func (h *Handler) clearParent(w http.ResponseWriter, r *http.Request) error {
	c, err := h.openMission(r, "child_mission_id", readMission)
	if err != nil {
		return err
	}
	child := c.Name
	who, err := h.actor(r)
	if err != nil {
		return err
	}
	if err := h.opts.Missions.ClearMissionParent(r.Context(), child, who); err != nil {
		return err
	}
	h.log.Info("mission parent removed", "mission", logx.Clip(child))
	httpapi.WriteMessage(w, http.StatusOK, "parent removed")
	return nil
}

func (h *Handler) getParent(w http.ResponseWriter, r *http.Request) error {
	c, err := h.openMission(r, "child_mission_id", readMission)
	if err != nil {
		return err
	}
	p, err := h.opts.Missions.MissionParent(r.Context(), c.Name)
	if err != nil {
		return err
	}
	if p, err = h.missionByName(r, p.Name, readMission); err != nil {
		return err
	}
	return h.writeMission(w, r, p, http.StatusOK, "", false)
}

func (h *Handler) getChildren(w http.ResponseWriter, r *http.Request) error {
	p, err := h.openMission(r, "parent_mission_id", readMission)
	if err != nil {
		return err
	}
	list, err := h.opts.Missions.MissionChildren(r.Context(), p.Name)
	if err != nil {
		return err
	}
	return h.writeMissions(w, r, list)
}

// invitePut answers PUT /Marti/api/missions/{id}/invite/{type}/{invitee}
// (creatorUid defaults to "unknown"; role= a role name).
func (h *Handler) invitePut(w http.ResponseWriter, r *http.Request) error {
	m, err := h.openMission(r, "mission_id", readMission)
	if err != nil {
		return err
	}
	name := m.Name
	q := r.URL.Query()
	if err := h.actFor(r, "creatorUid", q.Get("creatorUid")); err != nil {
		return err
	}
	inv := store.Invitation{Type: r.PathValue("type"), Invitee: r.PathValue("invitee"), CreatorUID: q.Get("creatorUid"), Role: q.Get("role")}
	if inv.CreatorUID == "" {
		inv.CreatorUID = "unknown"
	}
	return h.invite(w, r, name, []store.Invitation{inv})
}

// inviteBody is the body of POST /invite.
type inviteBody struct {
	Invitee string `json:"invitee"`
	Type    string `json:"type"`
	Role    *struct {
		Type string `json:"type"`
	} `json:"role"`
}

// invitePost answers POST /Marti/api/missions/{id}/invite: the body's
// invitee (a client uid unless type says otherwise) and every client uid
// of contacts= (comma-separated) are invited.
func (h *Handler) invitePost(w http.ResponseWriter, r *http.Request) error {
	m, err := h.openMission(r, "mission_id", readMission)
	if err != nil {
		return err
	}
	name := m.Name
	q := r.URL.Query()
	if err := h.actFor(r, "creatorUid", q.Get("creatorUid")); err != nil {
		return err
	}
	var b inviteBody
	if r.ContentLength != 0 {
		if err := httpapi.DecodeJSON(r, maxMissionJSON, &b); err != nil {
			return err
		}
	}
	roleName := ""
	if b.Role != nil {
		roleName = b.Role.Type
	}
	var invs []store.Invitation
	if b.Invitee != "" {
		typ := b.Type
		if typ == "" {
			typ = "clientUid"
		}
		invs = append(invs, store.Invitation{Type: typ, Invitee: b.Invitee, CreatorUID: q.Get("creatorUid"), Role: roleName})
	}
	for _, c := range splitList(q.Get("contacts")) {
		invs = append(invs, store.Invitation{Type: "clientUid", Invitee: c, CreatorUID: q.Get("creatorUid"), Role: roleName})
	}
	if len(invs) == 0 {
		return httpapi.BadRequest("invitee", "required (in the body, or contacts in the query)")
	}
	if len(invs) > 256 {
		return httpapi.BadRequest("contacts", "at most 256 invitees at once")
	}
	return h.invite(w, r, name, invs)
}

func (h *Handler) invite(w http.ResponseWriter, r *http.Request, name string, invs []store.Invitation) error {
	// Every invitation is checked before any is stored.
	for _, inv := range invs {
		for _, f := range []struct{ n, v string }{{"type", inv.Type}, {"invitee", inv.Invitee}} {
			if err := httpapi.CheckText(f.n, f.v, true, 255); err != nil {
				return err
			}
		}
		if err := httpapi.CheckText("creatorUid", inv.CreatorUID, false, 255); err != nil {
			return err
		}
		if inv.Role != "" && !store.ValidRole(inv.Role) {
			return httpapi.BadRequest("role", "must be %s, %s or %s, not %q", store.RoleOwner, store.RoleMember, store.RoleReadOnly, httpapi.ClipValue(inv.Role))
		}
	}
	if _, err := h.opts.Missions.MissionByName(r.Context(), name); err != nil {
		return err
	}
	out := make([]invitationJSON, 0, len(invs))
	for _, inv := range invs {
		saved, err := h.opts.Missions.Invite(r.Context(), name, inv)
		if err != nil {
			return err
		}
		h.log.Info("mission invitation sent", "mission", logx.Clip(name), "type", logx.Clip(saved.Type),
			"invitee", logx.Clip(saved.Invitee), "by", logx.Clip(saved.CreatorUID), "role", saved.Role)
		h.notifyInvitation(saved)
		out = append(out, invitationView(saved))
	}
	httpapi.WriteJSON(w, http.StatusOK, h.envelope(typeInvitation, out))
	return nil
}

// invitations answers GET /Marti/api/missions/invitations: on HTTP (no
// client identity) an empty list; on HTTPS the invitations to clientUid
// and to the client certificate's name.
func (h *Handler) invitations(w http.ResponseWriter, r *http.Request) error {
	if r.TLS == nil {
		httpapi.WriteJSON(w, http.StatusOK, h.envelope(typeInvitation, []invitationJSON{}))
		return nil
	}
	uid, user, list, err := h.clientInvitations(r)
	if err != nil {
		return err
	}
	out := make([]invitationJSON, 0, len(list))
	for _, inv := range list {
		if inv.Invitee == user && !strings.EqualFold(inv.Type, "userName") && inv.Invitee != uid {
			continue // a user name matches invitations by user name only
		}
		out = append(out, invitationView(inv))
	}
	httpapi.WriteJSON(w, http.StatusOK, h.envelope(typeInvitation, out))
	return nil
}

// clientInvitations reads clientUid (one of the caller's uids) and lists
// the invitations to it and to the caller's user name (on 8443 the
// certificate's); the caller filters the user name's ones by type.
func (h *Handler) clientInvitations(r *http.Request) (uid, user string, list []store.Invitation, err error) {
	uid = r.URL.Query().Get("clientUid")
	if err := httpapi.CheckText("clientUid", uid, true, 255); err != nil {
		return "", "", nil, err
	}
	if err := h.actFor(r, "clientUid", uid); err != nil {
		return "", "", nil, err
	}
	user, _ = h.identity(r)
	list, err = h.opts.Missions.Invitations(r.Context(), uid, user)
	return uid, user, list, err
}
