package marti

// The mission routes by guid (the official server's and node-tak's
// /Marti/api/missions/guid/{guid}/...): each is its name route's handler,
// run after the guid is resolved to the mission's name once. They live on
// a mux of their own (Handler.ServeHTTP sends guidPrefix there): in one
// ServeMux, guid/{guid} and {mission_id}/cot would both match
// /missions/guid/cot and their registration would panic.

import (
	"errors"
	"fmt"
	"net/http"

	"outpost/appliance/access"
	"outpost/appliance/httpapi"
	"outpost/appliance/store"
)

const guidPrefix = "/Marti/api/missions/guid/"

func (h *Handler) missionGUIDRoutes(rt *access.Routes) {
	m := clientRoutes{rt}
	const p = "/Marti/api/missions/guid/{guid}"
	for _, r := range []struct {
		pattern string
		fn      httpapi.HandlerFunc
	}{
		{"GET " + p, h.missionGet},
		{"DELETE " + p, h.missionDelete},
		{"GET " + p + "/cot", h.missionCoT},
		{"GET " + p + "/changes", h.missionChanges},
		{"GET " + p + "/log", h.missionLogs},
		{"GET " + p + "/contacts", h.missionContacts},
		{"PUT " + p + "/contents", h.missionAddContents},
		{"DELETE " + p + "/contents", h.missionRemoveContent},
		{"PUT " + p + "/subscription", h.subscribe},
		{"DELETE " + p + "/subscription", h.unsubscribe},
		{"GET " + p + "/subscription", h.ownSubscription},
		{"GET " + p + "/subscriptions", h.subscriptions},
		{"GET " + p + "/subscriptions/roles", h.subscriptionRoles},
		{"GET " + p + "/role", h.missionRoleGet},
		{"PUT " + p + "/role", h.missionRolePut},
		{"PUT " + p + "/keywords", h.keywordsPut},
		{"DELETE " + p + "/keywords", h.keywordsClear},
		{"DELETE " + p + "/keywords/{keyword}", h.keywordDelete},
		{"PUT " + p + "/password", h.passwordPut},
		{"DELETE " + p + "/password", h.passwordDelete},
		{"PUT " + p + "/expiration", h.expirationPut},
		{"GET " + p + "/invitations", h.missionInvitations},
		{"GET " + p + "/kml", h.missionKMLRoute},
		{"GET " + p + "/archive", h.missionArchive},
		{"GET " + p + "/layers", h.layerList},
		{"PUT " + p + "/layers", h.layerCreate},
		{"DELETE " + p + "/layers", h.layerDelete},
		{"PUT " + p + "/layers/parent", h.layerMove},
		{"GET " + p + "/layers/{layer_uid}", h.layerGet},
		{"PUT " + p + "/layers/{layer_uid}/name", h.layerRename},
		{"PUT " + p + "/layers/{layer_uid}/position", h.layerPosition},
	} {
		m.Handle(r.pattern, h.mission(h.byGUID(r.fn)))
	}
}

// byGUID resolves the {guid} path value to the mission the caller's groups
// see (404 otherwise, naming the guid only) and runs fn as if the request
// had named the mission.
func (h *Handler) byGUID(fn httpapi.HandlerFunc) httpapi.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) error {
		name, err := h.missionNameOfGUID(r, r.PathValue("guid"))
		if err != nil {
			return err
		}
		r.SetPathValue("mission_id", name)
		return fn(w, r)
	}
}

// missionNameOfGUID is the name of the mission guid names, when the
// caller's groups see it.
func (h *Handler) missionNameOfGUID(r *http.Request, guid string) (string, error) {
	if err := httpapi.CheckText("guid", guid, true, 64); err != nil {
		return "", err
	}
	m, err := h.opts.Missions.MissionByGUID(r.Context(), guid)
	if errors.Is(err, store.ErrInvalid) {
		return "", httpapi.BadRequest("guid", "must be a UUID, not %q", httpapi.ClipValue(guid))
	}
	if err != nil {
		return "", err
	}
	ok, err := h.sees(r, m)
	if err != nil {
		return "", err
	}
	if !ok {
		return "", fmt.Errorf("%w: no mission with guid %s", store.ErrNotFound, m.GUID)
	}
	return m.Name, nil
}
