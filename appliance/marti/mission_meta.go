package marti

// A mission's settings after creation (api-marti.md "Missions"): the
// caller's role and subscription, subscribers' roles, keywords, password
// and expiration. Who acts is resolved once per request (caller); the store
// checks that uid's role in the transaction that makes the change.

import (
	"crypto/subtle"
	"fmt"
	"net/http"

	"outpost/appliance/access"
	"outpost/appliance/httpapi"
	"outpost/appliance/logx"
	"outpost/appliance/store"
)

// typeRole is the envelope type of a role answer (the official server's
// class name).
const typeRole = "com.bbn.marti.sync.model.MissionRole"

// maxKeywordBytes bounds one keyword in a path.
const maxKeywordBytes = 256

func (h *Handler) missionMetaRoutes(rt *access.Routes) {
	m := clientRoutes{rt}
	const p = "/Marti/api/missions"
	m.Handle("GET "+p+"/{mission_id}/role", h.mission(h.missionRoleGet))
	m.Handle("PUT "+p+"/{mission_id}/role", h.mission(h.missionRolePut))
	m.Handle("GET "+p+"/{mission_id}/subscription", h.mission(h.ownSubscription))
	m.Handle("PUT "+p+"/{mission_id}/keywords", h.mission(h.keywordsPut))
	m.Handle("DELETE "+p+"/{mission_id}/keywords", h.mission(h.keywordsClear))
	m.Handle("DELETE "+p+"/{mission_id}/keywords/{keyword}", h.mission(h.keywordDelete))
	m.Handle("PUT "+p+"/{mission_id}/password", h.mission(h.passwordPut))
	m.Handle("DELETE "+p+"/{mission_id}/password", h.mission(h.passwordDelete))
	m.Handle("PUT "+p+"/{mission_id}/expiration", h.mission(h.expirationPut))
	m.Handle("GET "+p+"/{mission_id}/contacts", h.mission(h.missionContacts))
	m.Handle("GET "+p+"/{mission_id}/invitations", h.mission(h.missionInvitations))
	m.Handle("GET "+p+"/all/invitations", h.mission(h.allInvitations))
	m.Handle("DELETE "+p+"/{mission_id}", h.mission(h.missionDelete))
	m.Handle("DELETE "+p, h.mission(h.missionDeleteByGUID))
}

// roleRank orders the roles, the owner's first.
func roleRank(role string) int {
	switch role {
	case store.RoleOwner:
		return 3
	case store.RoleMember:
		return 2
	case store.RoleReadOnly:
		return 1
	}
	return 0
}

// caller is the uid that acts in mission m for the request (access.md
// "Missions"): the first of fields the request gives (one of the caller's
// own uids), else the subscriber whose token it carries, else on 8443 the
// subscriber among the certificate identity's uids with the highest role,
// else nobody ("": the mission's default role).
func (h *Handler) caller(r *http.Request, m store.Mission, fields ...string) (string, error) {
	q := r.URL.Query()
	for _, f := range fields {
		if v := q.Get(f); v != "" {
			if err := httpapi.CheckText(f, v, false, 255); err != nil {
				return "", err
			}
			return v, h.actFor(r, f, v)
		}
	}
	subs, err := h.opts.Missions.Subscriptions(r.Context(), m.Name)
	if err != nil {
		return "", err
	}
	if token := bearer(r); token != "" {
		for _, s := range subs {
			if s.Token != "" && subtle.ConstantTimeCompare([]byte(token), []byte(s.Token)) == 1 {
				return s.ClientUID, nil
			}
		}
	}
	identity := access.From(r).Identity()
	if identity == "" || h.opts.Broker == nil {
		return "", nil
	}
	best, rank := "", 0
	for _, s := range subs {
		if who, ok := h.opts.Broker.UIDOwner(s.ClientUID); ok && who == identity && roleRank(s.Role) > rank {
			best, rank = s.ClientUID, roleRank(s.Role)
		}
	}
	if who, ok := h.opts.Broker.UIDOwner(m.CreatorUID); ok && who == identity && m.CreatorUID != "" && rank < roleRank(store.RoleOwner) {
		if _, err := h.opts.Missions.Subscription(r.Context(), m.Name, m.CreatorUID); err != nil {
			best = m.CreatorUID // not subscribed: the creator owns it
		}
	}
	return best, nil
}

// missionAndCaller opens the {mission_id} mission to read and change it
// and resolves who acts in it (creatorUid, clientUid, token, certificate).
func (h *Handler) missionAndCaller(r *http.Request) (store.Mission, string, error) {
	m, err := h.openMission(r, "mission_id", readMission)
	if err != nil {
		return m, "", err
	}
	by, err := h.caller(r, m, "creatorUid", "clientUid")
	return m, by, err
}

// missionRoleGet answers GET .../{name}/role: the caller's role in the
// mission (the official server's MissionRole: type and permissions).
func (h *Handler) missionRoleGet(w http.ResponseWriter, r *http.Request) error {
	m, err := h.openMission(r, "mission_id", readMission)
	if err != nil {
		return err
	}
	who, err := h.caller(r, m, "creatorUid", "clientUid", "uid")
	if err != nil {
		return err
	}
	name, err := h.opts.Missions.MissionRole(r.Context(), m.Name, who)
	if err != nil {
		return err
	}
	httpapi.WriteJSON(w, http.StatusOK, h.envelope(typeRole, role(name)))
	return nil
}

// missionRolePut answers PUT .../{name}/role?clientUid=&role=: the mission's
// owner gives a subscriber another role (clientUid names the subscriber,
// so the caller is the token's subscriber, creatorUid, or the certificate
// identity's own subscription).
func (h *Handler) missionRolePut(w http.ResponseWriter, r *http.Request) error {
	m, err := h.openMission(r, "mission_id", readMission)
	if err != nil {
		return err
	}
	q := r.URL.Query()
	target, newRole := q.Get("clientUid"), q.Get("role")
	if err := httpapi.CheckText("clientUid", target, true, 255); err != nil {
		return err
	}
	if err := httpapi.CheckText("username", q.Get("username"), false, 255); err != nil {
		return err
	}
	if !store.ValidRole(newRole) {
		return httpapi.BadRequest("role", "must be %s, %s or %s, not %q", store.RoleOwner, store.RoleMember, store.RoleReadOnly, httpapi.ClipValue(newRole))
	}
	by, err := h.caller(r, m, "creatorUid")
	if err != nil {
		return err
	}
	sub, err := h.opts.Missions.SetSubscriptionRole(r.Context(), m.Name, by, target, newRole)
	if err != nil {
		return err
	}
	h.log.Info("mission role set", "mission", logx.Clip(m.Name), "uid", logx.Clip(target), "role", sub.Role, "by", logx.Clip(by))
	h.notifyRoleChange(m, sub.ClientUID, sub.Role)
	httpapi.WriteMessage(w, http.StatusOK, "role set")
	return nil
}

// ownSubscription answers GET .../{name}/subscription?uid=: the caller's
// own subscription (uid one of its own), with its token and role; 404 when
// uid is not subscribed.
func (h *Handler) ownSubscription(w http.ResponseWriter, r *http.Request) error {
	m, uid, err := h.missionAndSubscriber(r)
	if err != nil {
		return err
	}
	sub, err := h.opts.Missions.Subscription(r.Context(), m.Name, uid)
	if err != nil {
		return err
	}
	if user, _ := h.identity(r); user != "" && sub.Username != "" && sub.Username != user {
		return fmt.Errorf("%w: %q is not subscribed to mission %q", store.ErrNotFound, logx.Cut(uid, 64), logx.Cut(m.Name, 64))
	}
	sub.MissionName = ""
	httpapi.WriteJSON(w, http.StatusOK, h.envelope(typeSubscription, subscriptionView(sub, true)))
	return nil
}

// changed answers a change of mission m's settings with the mission, and
// tells every client that sees it (as an update through PUT does).
func (h *Handler) changed(w http.ResponseWriter, r *http.Request, m store.Mission, by, what string) error {
	h.log.Info("mission changed", "mission", logx.Clip(m.Name), "change", what, "by", logx.Clip(by))
	h.notifyCreated(m, by)
	return h.writeMission(w, r, m, http.StatusOK, "", false)
}

// keywordsPut answers PUT .../{name}/keywords: the JSON list of the body
// replaces the mission's keywords.
func (h *Handler) keywordsPut(w http.ResponseWriter, r *http.Request) error {
	m, err := h.openMission(r, "mission_id", readMission)
	if err != nil {
		return err
	}
	var kw []string
	if err := httpapi.DecodeJSON(r, maxMissionJSON, &kw); err != nil {
		return httpapi.InField("keywords", err)
	}
	by, err := h.caller(r, m, "creatorUid", "clientUid")
	if err != nil {
		return err
	}
	if m, err = h.opts.Missions.SetMissionKeywords(r.Context(), m.Name, by, nonNil(kw)); err != nil {
		return httpapi.InField("keywords", err)
	}
	return h.changed(w, r, m, by, "keywords")
}

// keywordsClear answers DELETE .../{name}/keywords: no keywords.
func (h *Handler) keywordsClear(w http.ResponseWriter, r *http.Request) error {
	m, by, err := h.missionAndCaller(r)
	if err != nil {
		return err
	}
	if m, err = h.opts.Missions.SetMissionKeywords(r.Context(), m.Name, by, []string{}); err != nil {
		return err
	}
	return h.changed(w, r, m, by, "keywords")
}

// keywordDelete answers DELETE .../{name}/keywords/{keyword}.
func (h *Handler) keywordDelete(w http.ResponseWriter, r *http.Request) error {
	m, err := h.openMission(r, "mission_id", readMission)
	if err != nil {
		return err
	}
	kw := r.PathValue("keyword")
	if err := httpapi.CheckText("keyword", kw, true, maxKeywordBytes); err != nil {
		return err
	}
	by, err := h.caller(r, m, "creatorUid", "clientUid")
	if err != nil {
		return err
	}
	if m, err = h.opts.Missions.RemoveMissionKeyword(r.Context(), m.Name, by, kw); err != nil {
		return err
	}
	return h.changed(w, r, m, by, "keywords")
}

// passwordPut answers PUT .../{name}/password?password=: the owner sets or
// changes the password (stored as a slow hash); an empty one is refused
// (DELETE removes it).
func (h *Handler) passwordPut(w http.ResponseWriter, r *http.Request) error {
	pw := r.URL.Query().Get("password")
	if pw == "" {
		return httpapi.BadRequest("password", "required; DELETE .../password removes the password")
	}
	return h.setPassword(w, r, pw)
}

// passwordDelete answers DELETE .../{name}/password: the owner removes it.
func (h *Handler) passwordDelete(w http.ResponseWriter, r *http.Request) error {
	return h.setPassword(w, r, "")
}

func (h *Handler) setPassword(w http.ResponseWriter, r *http.Request, pw string) error {
	m, by, err := h.missionAndCaller(r)
	if err != nil {
		return err
	}
	if m, err = h.opts.Missions.SetMissionPassword(r.Context(), m.Name, by, pw); err != nil {
		return httpapi.InField("password", err)
	}
	h.log.Info("mission password changed", "mission", logx.Clip(m.Name), "protected", m.PasswordProtected, "by", logx.Clip(by))
	h.notifyCreated(m, by)
	msg := "password set"
	if pw == "" {
		msg = "password removed"
	}
	httpapi.WriteMessage(w, http.StatusOK, msg)
	return nil
}

// expirationPut answers PUT .../{name}/expiration?expiration=: the owner
// sets when the mission expires (unix seconds; -1: never).
func (h *Handler) expirationPut(w http.ResponseWriter, r *http.Request) error {
	m, err := h.openMission(r, "mission_id", readMission)
	if err != nil {
		return err
	}
	v := r.URL.Query().Get("expiration")
	if v == "" {
		return httpapi.BadRequest("expiration", "required: a time in seconds since 1970, or -1 for never")
	}
	exp, err := parseInt64(v)
	if err != nil || exp < -1 {
		return httpapi.BadRequest("expiration", "must be -1 (never) or a time in seconds since 1970, not %q", httpapi.ClipValue(v))
	}
	by, err := h.caller(r, m, "creatorUid", "clientUid")
	if err != nil {
		return err
	}
	if m, err = h.opts.Missions.SetMissionExpiration(r.Context(), m.Name, by, exp); err != nil {
		return err
	}
	h.log.Info("mission expiration set", "mission", logx.Clip(m.Name), "expiration", exp, "by", logx.Clip(by))
	h.notifyCreated(m, by)
	httpapi.WriteMessage(w, http.StatusOK, "expiration set")
	return nil
}
