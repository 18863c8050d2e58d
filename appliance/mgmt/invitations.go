package mgmt

// Enrollment invitations (api-management.md "Enrollment invitations";
// protocol.md §8 "Enrolling with an invitation"), for administrators:
//
//	POST   /api/users/{uid}/invitations  {"expires":"24h","uses":1,"device":"atak"} (all optional) -> 201, the token and codes once
//	GET    /api/invitations[?user=UID]   list, never a token
//	DELETE /api/invitations/{id}         revoke -> 204

import (
	"encoding/base64"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"strings"
	"time"

	"outpost/appliance/access"
	"outpost/appliance/httpapi"
	"outpost/appliance/qr"
	"outpost/appliance/store"
	"outpost/appliance/users"
)

const (
	invitationsError = "An error occurred with enrollment invitations."
	maxInviteBody    = 4 << 10 // three short fields
	qrPNGSize        = 384     // pixels
)

type codeJSON struct {
	Text string `json:"text"`
	PNG  string `json:"png"` // base64 of a PNG image
}

type invitationJSON struct {
	ID        string `json:"id"`
	UserUID   string `json:"userId"`
	User      string `json:"user"`
	Device    string `json:"device"`
	Created   string `json:"created"`
	Expires   string `json:"expires"`
	Uses      int    `json:"uses"`
	UsesLeft  int    `json:"usesLeft"`
	State     string `json:"state"` // active, used, expired, revoked
	Revoked   string `json:"revoked,omitempty"`
	CreatedBy string `json:"createdBy"`
}

type newInvitationJSON struct {
	invitationJSON
	Token  string   `json:"token"`
	ATAK   codeJSON `json:"atak"`
	ITAK   codeJSON `json:"itak"`
	WinTAK struct {
		URL string `json:"url"`
	} `json:"wintak"`
}

func invitationView(inv store.EnrollInvitation, now time.Time) invitationJSON {
	v := invitationJSON{
		ID: inv.ID, UserUID: inv.UserUID, User: inv.User, Device: inv.Device,
		Created: httpapi.FormatTime(inv.Created), Expires: httpapi.FormatTime(inv.Expires),
		Uses: inv.Uses, UsesLeft: inv.UsesLeft, State: inv.State(now), CreatedBy: inv.CreatedBy,
	}
	if !inv.Revoked.IsZero() {
		v.Revoked = httpapi.FormatTime(inv.Revoked)
	}
	return v
}

func codeOf(text string) (codeJSON, error) {
	png, err := qr.PNG(text, qrPNGSize)
	if err != nil {
		return codeJSON{}, err
	}
	return codeJSON{Text: text, PNG: base64.StdEncoding.EncodeToString(png)}, nil
}

// postInvitation answers POST /api/users/{uid}/invitations. The body is
// optional; each field takes its default when absent.
func (a *API) postInvitation(w http.ResponseWriter, r *http.Request) error {
	raw, err := io.ReadAll(http.MaxBytesReader(w, r.Body, maxInviteBody))
	if err != nil {
		return httpapi.Errorf(http.StatusRequestEntityTooLarge, "request body larger than %d bytes", maxInviteBody)
	}
	var body struct {
		Expires *string      `json:"expires"`
		Uses    *json.Number `json:"uses"`
		Device  *string      `json:"device"`
	}
	if strings.TrimSpace(string(raw)) != "" {
		if err := httpapi.DecodeJSONBytes(raw, &body); err != nil {
			return err
		}
	}
	in := users.InviteInput{CreatedBy: access.From(r).Name}
	if body.Expires != nil {
		if in.Expires, err = users.ParseExpiry(*body.Expires); err != nil {
			return httpapi.InField("expires", err)
		}
	}
	if body.Uses != nil {
		n, err := body.Uses.Int64()
		if err != nil || n < 1 || n > users.MaxInviteUses {
			return httpapi.BadRequest("uses", "a whole number from 1 to %d", users.MaxInviteUses)
		}
		in.Uses = int(n)
	}
	if body.Device != nil {
		if in.Device = strings.TrimSpace(*body.Device); in.Device == "" {
			return httpapi.BadRequest("device", "atak, itak or wintak")
		}
	}
	inv, err := a.opts.Users.Invite(r.Context(), r.PathValue("uid"), in)
	if err != nil {
		switch {
		case errors.Is(err, store.ErrNotFound):
			err = httpapi.InField("uid", err)
		case errors.Is(err, users.ErrInvite):
			err = httpapi.InField("device", err) // expires and uses were checked above
		}
		return httpapi.Internal(err, invitationsError)
	}
	out := newInvitationJSON{invitationJSON: invitationView(inv.EnrollInvitation, inv.Created), Token: inv.Token}
	if out.ATAK, err = codeOf(inv.Codes.ATAK); err == nil {
		out.ITAK, err = codeOf(inv.Codes.ITAK)
	}
	if err != nil {
		return httpapi.Internal(err, invitationsError)
	}
	out.WinTAK.URL = inv.Codes.WinTAK
	w.Header().Set("Cache-Control", "no-store")
	httpapi.WriteJSON(w, http.StatusCreated, out)
	return nil
}

// listInvitations answers GET /api/invitations[?user=UID].
func (a *API) listInvitations(w http.ResponseWriter, r *http.Request) error {
	list, err := a.opts.Users.Invitations(r.Context(), r.URL.Query().Get("user"))
	if err != nil {
		return httpapi.Internal(httpapi.InField("user", err), invitationsError)
	}
	now := time.Now()
	out := make([]invitationJSON, len(list))
	for i, inv := range list {
		out[i] = invitationView(inv, now)
	}
	httpapi.WriteJSON(w, http.StatusOK, map[string]any{"invitations": out})
	return nil
}

// deleteInvitation answers DELETE /api/invitations/{id}: revocation.
func (a *API) deleteInvitation(w http.ResponseWriter, r *http.Request) error {
	if _, err := a.opts.Users.RevokeInvitation(r.Context(), r.PathValue("id"), access.From(r).Name); err != nil {
		return httpapi.Internal(httpapi.InField("id", err), invitationsError)
	}
	w.WriteHeader(http.StatusNoContent)
	return nil
}
