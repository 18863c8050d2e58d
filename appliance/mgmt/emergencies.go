package mgmt

// /ManageEmergency (api.md §2.10, §4.1): raise, list and cancel
// emergencies. Package objects builds, keeps, repeats and sends them, and
// also tracks those clients raise over CoT, which the list includes.

import (
	"net/http"
	"strings"

	"outpost/appliance/access"
	"outpost/appliance/httpapi"
	"outpost/appliance/objects"
)

// The contract has no 500 texts for emergencies (api.md §7); these follow
// its wording.
const (
	emergencyAddError    = "An error occurred adding emergency."
	emergencyGetError    = "An error occurred retrieving emergency."
	emergencyCancelError = "An error occurred cancelling emergency."
)

// emergencyItem is api.md §2.10.
type emergencyItem struct {
	UID  string  `json:"uid"`
	Name string  `json:"name"`
	Type string  `json:"type"`
	Lat  float64 `json:"lat"`
	Lon  float64 `json:"lon"`
}

// getEmergency answers GET /ManageEmergency/getEmergency: {"json_list":
// [...]}, the active emergencies, oldest first.
func (a *API) getEmergency(w http.ResponseWriter, r *http.Request) error {
	list, err := a.opts.Objects.Emergencies(r.Context(), access.From(r).Reads())
	if err != nil {
		return httpapi.Internal(err, emergencyGetError)
	}
	out := make([]emergencyItem, len(list))
	for i, e := range list {
		out[i] = emergencyItem{UID: e.UID, Name: e.Name, Type: e.Type, Lat: e.Lat, Lon: e.Lon}
	}
	httpapi.WriteJSON(w, http.StatusOK, struct {
		JSONList []emergencyItem `json:"json_list"`
	}{out})
	return nil
}

// postEmergency answers POST /ManageEmergency/postEmergency:
// {"message": "<uid>"}.
func (a *API) postEmergency(w http.ResponseWriter, r *http.Request) error {
	var b struct {
		EmergencyType *string `json:"emergencyType"`
		Latitude      any     `json:"latitude"`
		Longitude     any     `json:"longitude"`
		Address       *string `json:"address"`
		Name          *string `json:"name"`
		Remarks       *string `json:"remarks"`
		Groups        any     `json:"groups"`
	}
	if err := httpapi.DecodeJSON(r, maxJSONBody, &b); err != nil {
		return err
	}
	in := objects.EmergencyInput{Type: str(b.EmergencyType), Name: strings.TrimSpace(str(b.Name)), Remarks: str(b.Remarks)}
	if err := checkText("emergencyType", in.Type, true, 100); err != nil {
		return err
	}
	if _, _, ok := objects.EmergencyType(in.Type); !ok {
		return httpapi.BadRequest("emergencyType", "must be %s, not %q", objects.EmergencyTypeWords, httpapi.ClipValue(in.Type))
	}
	if err := checkText("name", in.Name, false, maxNameLen); err != nil {
		return err
	}
	if err := checkNote("remarks", in.Remarks, maxRemarksLen); err != nil {
		return err
	}
	at := where{address: strings.TrimSpace(str(b.Address)), lat: b.Latitude, lon: b.Longitude}
	if err := at.check(); err != nil {
		return err
	}
	p, err := a.resolve(r.Context(), at)
	if err != nil {
		return httpapi.Internal(err, emergencyAddError)
	}
	in.Point = p
	if in.Groups, err = a.shareWith(r, "groups", b.Groups); err != nil {
		return httpapi.Internal(err, emergencyAddError)
	}
	in.Owner = owner(r)
	uid, err := a.opts.Objects.PostEmergency(r.Context(), in)
	if err != nil {
		return httpapi.Internal(objectsFault(err, "emergencyType"), emergencyAddError)
	}
	httpapi.WriteMessage(w, http.StatusOK, uid)
	return nil
}

// deleteEmergency answers DELETE /ManageEmergency/deleteEmergency with body
// {"uid"} (or ?uid=): the cancellation goes to every client;
// {"message": "<uid>"}.
func (a *API) deleteEmergency(w http.ResponseWriter, r *http.Request) error {
	var b struct {
		UID *string `json:"uid"`
	}
	uid := r.URL.Query().Get("uid")
	if r.ContentLength != 0 {
		if err := httpapi.DecodeJSON(r, maxJSONBody, &b); err != nil {
			return err
		}
		if b.UID != nil {
			uid = *b.UID
		}
	}
	uid = strings.TrimSpace(uid)
	if err := checkText("uid", uid, true, maxNameLen); err != nil {
		return err
	}
	if err := a.opts.Objects.CancelEmergency(r.Context(), uid, caller(r)); err != nil {
		return httpapi.Internal(objectsFault(err, "uid"), emergencyCancelError)
	}
	httpapi.WriteMessage(w, http.StatusOK, uid)
	return nil
}
