package marti

// Who may see and change a mission (access.md "Missions"): a mission the
// caller's groups do not see is answered exactly as a missing one; a
// password-protected one shows its contents, uids, logs, changes,
// subscriptions and CoT only to whoever subscribed with the password; the
// uids a request acts for are checked against the caller's identity
// (access.md "Uids belong to identities"); mission roles are those of that
// acting uid (the store checks them).

import (
	"context"
	"crypto/subtle"
	"errors"
	"fmt"
	"net/http"
	"strings"

	"outpost/appliance/access"
	"outpost/appliance/httpapi"
	"outpost/appliance/store"
)

// need is what a request does with a mission.
type need uint8

const (
	// seeMission: it names the mission (subscribe, unsubscribe): the
	// caller's groups must see it.
	seeMission need = iota
	// readMission: it reads or changes what is in it: a password-protected
	// mission also wants the caller to have subscribed.
	readMission
)

// missionName is the {key} path value, checked.
func missionName(r *http.Request, key string) (string, error) {
	name := r.PathValue(key)
	if err := httpapi.CheckText(key, name, true, store.MaxMissionName); err != nil {
		return "", err
	}
	return name, nil
}

// openMission reads the mission named by the path value key and applies
// what the request needs of it.
func (h *Handler) openMission(r *http.Request, key string, n need) (store.Mission, error) {
	name, err := missionName(r, key)
	if err != nil {
		return store.Mission{}, err
	}
	return h.missionByName(r, name, n)
}

// missionByName is openMission for a name from elsewhere (a log entry's
// missions, a checklist's).
func (h *Handler) missionByName(r *http.Request, name string, n need) (store.Mission, error) {
	m, err := h.opts.Missions.MissionByName(r.Context(), name)
	if err != nil {
		return store.Mission{}, err
	}
	visible, err := h.sees(r, m)
	if err != nil {
		return store.Mission{}, err
	}
	if !visible {
		return store.Mission{}, fmt.Errorf("%w: no mission %q", store.ErrNotFound, name)
	}
	if n == readMission && m.PasswordProtected {
		ok, err := h.subscribed(r, m)
		if err != nil {
			return store.Mission{}, err
		}
		if !ok {
			return store.Mission{}, fmt.Errorf("%w: mission %q is password protected: subscribe with its password first",
				access.ErrForbidden, name)
		}
	}
	return m, nil
}

// sees reports whether the caller's groups see mission m (its groups; none
// is __ANON__).
func (h *Handler) sees(r *http.Request, m store.Mission) (bool, error) {
	groups, err := h.groupList(r.Context())
	if err != nil {
		return false, err
	}
	return access.From(r).Sees(access.MaskOf(groups, m.Groups)), nil
}

// groupList is the groups as they are now (the store's, always read: a
// group made from the command line is seen at once).
func (h *Handler) groupList(ctx context.Context) ([]store.Group, error) {
	if h.opts.Users == nil {
		return []store.Group{{Name: store.AnonGroupName, Bit: store.AnonBit}}, nil
	}
	return h.opts.Users.Groups(ctx)
}

// subscribed reports whether the request comes from a subscriber of m: it
// carries a subscription's token (Authorization: Bearer, what ATAK sends
// after subscribing), or the uid it acts for holds a subscription, or, on
// 8443, one of the certificate identity's uids does.
func (h *Handler) subscribed(r *http.Request, m store.Mission) (bool, error) {
	subs, err := h.opts.Missions.Subscriptions(r.Context(), m.Name)
	if err != nil {
		return false, err
	}
	token := bearer(r)
	q := r.URL.Query()
	acting := map[string]bool{}
	for _, field := range []string{"clientUid", "creatorUid"} {
		if v := q.Get(field); v != "" {
			if err := h.actFor(r, field, v); err != nil {
				return false, err
			}
			acting[v] = true
		}
	}
	identity := access.From(r).Identity()
	for _, s := range subs {
		if token != "" && s.Token != "" && subtle.ConstantTimeCompare([]byte(token), []byte(s.Token)) == 1 {
			return true, nil
		}
		if acting[s.ClientUID] {
			return true, nil
		}
		if identity != "" && h.opts.Broker != nil {
			if who, ok := h.opts.Broker.UIDOwner(s.ClientUID); ok && who == identity {
				return true, nil
			}
		}
	}
	return false, nil
}

// bearer is the request's "Authorization: Bearer" token, or its
// "MissionAuthorization: Bearer" one (what node-tak and CloudTAK send), if
// any.
func bearer(r *http.Request) string {
	for _, header := range []string{"Authorization", "MissionAuthorization"} {
		scheme, token, ok := strings.Cut(strings.TrimSpace(r.Header.Get(header)), " ")
		if ok && strings.EqualFold(scheme, "Bearer") {
			return strings.TrimSpace(token)
		}
	}
	return ""
}

// actor is the client uid a request acts for: creatorUid, else clientUid,
// checked against the caller's identity.
func (h *Handler) actor(r *http.Request) (string, error) {
	q := r.URL.Query()
	field, v := "creatorUid", q.Get("creatorUid")
	if v == "" {
		field, v = "clientUid", q.Get("clientUid")
	}
	if err := httpapi.CheckText(field, v, false, 255); err != nil {
		return "", err
	}
	return v, h.actFor(r, field, v)
}

// missionAndActor opens the {mission_id} mission for n and reads the
// acting uid.
func (h *Handler) missionAndActor(r *http.Request, n need) (store.Mission, string, error) {
	m, err := h.openMission(r, "mission_id", n)
	if err != nil {
		return m, "", err
	}
	who, err := h.actor(r)
	return m, who, err
}

// missionAndSubscriber opens the {mission_id} mission (its groups must see
// it) and reads the subscribing client's uid= (one of the caller's own).
func (h *Handler) missionAndSubscriber(r *http.Request) (store.Mission, string, error) {
	uid := r.URL.Query().Get("uid")
	if err := httpapi.CheckText("uid", uid, true, 255); err != nil {
		return store.Mission{}, "", err
	}
	if err := h.actFor(r, "uid", uid); err != nil {
		return store.Mission{}, "", err
	}
	m, err := h.openMission(r, "mission_id", seeMission)
	return m, uid, err
}

// visibleMissions keeps the missions of list the caller's groups see.
func (h *Handler) visibleMissions(r *http.Request, list []store.Mission) ([]store.Mission, error) {
	groups, err := h.groupList(r.Context())
	if err != nil {
		return nil, err
	}
	p := access.From(r)
	out := list[:0:0]
	for _, m := range list {
		if p.Sees(access.MaskOf(groups, m.Groups)) {
			out = append(out, m)
		}
	}
	return out, nil
}

// readable reports whether the caller may read the contents of mission
// name (a log entry's, a subscription's): visible, and subscribed when it
// is password protected. A mission that is gone is not readable.
func (h *Handler) readable(r *http.Request, name string, cache map[string]bool) (bool, error) {
	if ok, seen := cache[name]; seen {
		return ok, nil
	}
	_, err := h.missionByName(r, name, readMission)
	ok := err == nil
	if err != nil && !errors.Is(err, store.ErrNotFound) && !errors.Is(err, access.ErrForbidden) {
		return false, err
	}
	cache[name] = ok
	return ok, nil
}

// creatorGroups are the group names a new mission or checklist made by the
// caller belongs to: its IN groups (none for __ANON__).
func (h *Handler) creatorGroups(r *http.Request) ([]string, error) {
	p := access.From(r)
	if p.In == store.AnonGroup {
		return []string{}, nil
	}
	groups, err := h.groupList(r.Context())
	if err != nil {
		return nil, err
	}
	return access.NamesOf(groups, p.In), nil
}
