package marti

// The official server's repeater API (its RepeaterApi, /Marti/api/repeater;
// node-tak's Repeater class; api-marti.md "Repeated emergencies"): the
// emergencies that are re-broadcast until cancelled (911 Alert, Ring The
// Bell, Geo-fence Breached, Troops In Contact and the rest: the objects
// service keeps and repeats them), their period, and cancelling one.

import (
	"context"
	"fmt"
	"net/http"
	"time"

	"outpost/appliance/access"
	"outpost/appliance/cot"
	"outpost/appliance/httpapi"
	"outpost/appliance/logx"
	"outpost/appliance/store"
)

// RepeaterOptions is what the repeater routes read and change.
type RepeaterOptions struct {
	// Objects holds the active emergencies (store.KindEmergency).
	Objects EmergencyStore
	// Period is their re-broadcast period (emergencyRepeatInterval).
	Period time.Duration
	// Cancel cancels the active emergency uid for caller p (the objects
	// service's CancelEmergency: b-a-o-can to those who saw it, no more
	// repeats). Its errors carry their status (not found, forbidden).
	Cancel func(ctx context.Context, uid string, p access.Principal) error
}

// repeaterVersion is the official RepeaterApi's answer version.
const repeaterVersion = "1.0.0"

// repeatableJSON is the official server's Repeatable.
type repeatableJSON struct {
	UID               string `json:"uid"`
	RepeatType        string `json:"repeatType"`
	CoTType           string `json:"cotType"`
	DateTimeActivated string `json:"dateTimeActivated"`
	XML               string `json:"xml"`
	Callsign          string `json:"callsign"`
}

// repeatTypes are the official server's names of the emergency types it
// repeats (its CoreConfig examples' repeatableType _name); another type
// keeps its own words.
var repeatTypes = map[string]string{
	"911 Alert": "911", "Ring The Bell": "RingTheBell", "Geo-fence Breached": "GeoFenceBreach",
	"Troops In Contact": "TroopsInContact", "In Contact": "TroopsInContact",
}

func (h *Handler) repeaterRoutes(rt *access.Routes) {
	m := clientRoutes{rt}
	const p = "/Marti/api/repeater"
	m.Handle("GET "+p+"/list", h.mission(h.repeaterList))
	m.Handle("GET "+p+"/period", h.mission(h.repeaterPeriod))
	m.Handle("POST "+p+"/period", h.mission(h.repeaterSetPeriod))
	m.Handle("GET "+p+"/remove/{uid}", h.mission(h.repeaterRemove))
}

type repeaterEnvelope struct {
	Version string `json:"version"`
	Type    string `json:"type"`
	Data    any    `json:"data"`
	NodeID  string `json:"nodeId"`
}

func (h *Handler) repeaterAnswer(w http.ResponseWriter, typ string, data any) {
	httpapi.WriteJSON(w, http.StatusOK, repeaterEnvelope{Version: repeaterVersion, Type: typ, Data: data, NodeID: h.opts.NodeID})
}

// repeaterList answers GET /Marti/api/repeater/list: the active repeated
// emergencies the caller's groups see, oldest first.
func (h *Handler) repeaterList(w http.ResponseWriter, r *http.Request) error {
	out := []repeatableJSON{}
	objs := h.opts.Repeater.Objects
	if objs != nil {
		now := h.opts.Now()
		sees := access.From(r).Reads()
		err := objs.EachServerObject(r.Context(), store.KindEmergency, true, func(o store.ServerObject) error {
			if !o.Repeat || !o.Stale.After(now) || !store.Seen(o.Groups, sees) {
				return nil
			}
			typ := repeatTypes[o.Label]
			if typ == "" {
				typ = o.Label
			}
			// The official server's callsign is the event's contact's
			// (the alert's "<callsign>-Alert"), the emergency's name when
			// there is none.
			callsign := o.Name
			if ev, err := cot.Decode(o.XML); err == nil && ev.Detail.Contact != nil && ev.Detail.Contact.Callsign != "" {
				callsign = ev.Detail.Contact.Callsign
			}
			out = append(out, repeatableJSON{UID: o.UID, RepeatType: typ, CoTType: o.Type,
				DateTimeActivated: httpapi.FormatTime(o.CreatedAt), XML: string(o.XML), Callsign: callsign})
			return nil
		})
		if err != nil {
			return err
		}
	}
	// The official server names the type java.lang.String here.
	h.repeaterAnswer(w, "java.lang.String", out)
	return nil
}

// repeaterPeriod answers GET /Marti/api/repeater/period: the period in
// milliseconds.
func (h *Handler) repeaterPeriod(w http.ResponseWriter, r *http.Request) error {
	h.repeaterAnswer(w, "java.lang.Integer", h.opts.Repeater.Period.Milliseconds())
	return nil
}

// repeaterSetPeriod answers POST /Marti/api/repeater/period: 409, the
// period is the server's configuration (the official server lets its
// administrators change it at run time); nothing changes.
func (h *Handler) repeaterSetPeriod(w http.ResponseWriter, r *http.Request) error {
	return httpapi.Errorf(http.StatusConflict, "period: the repeat period is set by the server's configuration (emergencyRepeatInterval, now %d ms), not through the API",
		h.opts.Repeater.Period.Milliseconds())
}

// repeaterRemove answers GET /Marti/api/repeater/remove/{uid}: cancels the
// repeated emergency uid (data true), as DELETE /Marti/api/emergency (the
// management API's) does: b-a-o-can to the clients that saw it. 404 for an
// emergency that is not active or not in the caller's groups, 403 for
// another user's (access.md "Roles").
func (h *Handler) repeaterRemove(w http.ResponseWriter, r *http.Request) error {
	uid := r.PathValue("uid")
	if err := httpapi.CheckText("uid", uid, true, 255); err != nil {
		return err
	}
	if h.opts.Repeater.Cancel == nil {
		return fmt.Errorf("%w: no active emergency with uid %q", store.ErrNotFound, logx.Cut(uid, 60))
	}
	if err := h.opts.Repeater.Cancel(r.Context(), uid, access.From(r)); err != nil {
		return err
	}
	h.log.Info("repeated emergency cancelled", "uid", logx.Clip(uid), "by", logx.Clip(access.From(r).Identity()))
	h.repeaterAnswer(w, "java.lang.String", true)
	return nil
}
