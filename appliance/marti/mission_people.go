package marti

// Who a mission concerns (api-marti.md "Missions"): the connected clients
// that may join it, its invitations, and the missions a client is invited
// to.

import (
	"net/http"

	"outpost/appliance/access"
	"outpost/appliance/httpapi"
)

// missionContacts answers GET .../{name}/contacts: as the official server,
// the connected clients whose groups see the mission (and the caller's
// groups see), a bare list in the shape of /Marti/api/contacts/all.
func (h *Handler) missionContacts(w http.ResponseWriter, r *http.Request) error {
	m, err := h.openMission(r, "mission_id", readMission)
	if err != nil {
		return err
	}
	groups, err := h.groupList(r.Context())
	if err != nil {
		return err
	}
	h.writeContacts(w, r, access.MaskOf(groups, m.Groups))
	return nil
}

// missionInvitations answers GET .../{name}/invitations: the invitations to
// the mission, newest first; an invitation's token only to its invitee
// (who reads it from /Marti/api/missions/invitations).
func (h *Handler) missionInvitations(w http.ResponseWriter, r *http.Request) error {
	m, err := h.openMission(r, "mission_id", readMission)
	if err != nil {
		return err
	}
	list, err := h.opts.Missions.MissionInvitations(r.Context(), m.Name)
	if err != nil {
		return err
	}
	out := make([]invitationJSON, 0, len(list))
	for _, inv := range list {
		v := invitationView(inv)
		v.Token = ""
		out = append(out, v)
	}
	httpapi.WriteJSON(w, http.StatusOK, h.envelope(typeInvitation, out))
	return nil
}

// allInvitations answers GET /Marti/api/missions/all/invitations?clientUid=:
// as the official server, the names of the missions the client (one of the
// caller's uids; on 8443 also the certificate's user name) is invited to
// and the caller's groups see.
func (h *Handler) allInvitations(w http.ResponseWriter, r *http.Request) error {
	uid, user, list, err := h.clientInvitations(r)
	if err != nil {
		return err
	}
	groups, err := h.groupList(r.Context())
	if err != nil {
		return err
	}
	p := access.From(r)
	names, done := []string{}, map[string]bool{}
	for _, inv := range list {
		if inv.Invitee == user && inv.Invitee != uid && inv.Type != "userName" {
			continue // a user name matches invitations by user name only
		}
		if done[inv.MissionName] {
			continue
		}
		done[inv.MissionName] = true
		// A mission that is gone is not listed.
		m, err := h.opts.Missions.MissionByName(r.Context(), inv.MissionName)
		if err == nil && p.Sees(access.MaskOf(groups, m.Groups)) {
			names = append(names, inv.MissionName)
		}
	}
	httpapi.WriteJSON(w, http.StatusOK, h.envelope(typeInvitation, names))
	return nil
}
