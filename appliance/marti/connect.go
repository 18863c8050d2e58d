package marti

// What ATAK, WinTAK and iTAK call when they connect (protocol.md §7): the
// client list and contacts (groups in channels.go, the device profile in
// settings.go, the latest event of a uid in cot_history.go).

import (
	"net/http"
	"strconv"
	"time"

	"outpost/appliance/access"
	"outpost/appliance/httpapi"
	"outpost/appliance/store"
)

// clientEndpoint is one item of /Marti/api/clientEndPoints. Every field is
// always present and valid: one malformed item makes ATAK reject the whole
// list (protocol.md §7).
type clientEndpoint struct {
	Callsign      string `json:"callsign"`
	UID           string `json:"uid"`
	Username      string `json:"username"`
	LastEventTime string `json:"lastEventTime"`
	LastStatus    string `json:"lastStatus"` // Connected or Disconnected
}

// maxSecago bounds the secago parameter (ten years, in seconds).
const maxSecago = 10 * 365 * 24 * 3600

// secago reads the optional secago (or secAgo) query parameter: only
// clients heard from in the last that many seconds are listed. ok is false
// when it is absent.
func secago(r *http.Request) (d time.Duration, ok bool, err error) {
	name := "secago"
	v := r.URL.Query().Get(name)
	if v == "" {
		name = "secAgo"
		v = r.URL.Query().Get(name)
	}
	if v == "" {
		return 0, false, nil
	}
	n, perr := strconv.ParseInt(v, 10, 64)
	if perr != nil || n < 0 || n > maxSecago {
		return 0, false, httpapi.BadRequest(name, "must be a whole number of seconds from 0 to %d, not %q", maxSecago, httpapi.ClipValue(v))
	}
	return time.Duration(n) * time.Second, true, nil
}

// clientEndPoints lists the connected clients and those that disconnected
// recently (the broker remembers the last 256 closes), newest event first
// for the disconnected ones. A uid that is connected again is listed once,
// as Connected. With secago, only clients whose last event (or departure)
// is that recent are listed.
func (h *Handler) clientEndPoints(w http.ResponseWriter, r *http.Request) error {
	window, filter, err := secago(r)
	if err != nil {
		return err
	}
	now := h.opts.Now()
	sees := access.From(r).Reads() // access.md "Groups"
	recent := func(t time.Time) bool { return !filter || !t.Before(now.Add(-window)) }
	items := []clientEndpoint{}
	connected := map[string]bool{}
	for _, c := range h.opts.Broker.Clients() {
		if !store.Seen(c.Groups, sees) {
			continue
		}
		connected[c.UID] = true
		last := c.LastSeen
		if last.IsZero() {
			last = c.Connected
		}
		if !recent(last) {
			continue
		}
		items = append(items, clientEndpoint{Callsign: c.Callsign, UID: c.UID, Username: c.User,
			LastEventTime: httpapi.FormatTime(last), LastStatus: "Connected"})
	}
	for _, c := range h.opts.Broker.RecentlyClosed() {
		// Sessions that never identified themselves have no uid or callsign
		// to show; a uid is listed once, with its latest close.
		if c.UID == "" || c.Callsign == "" || connected[c.UID] || c.Closed.IsZero() || !store.Seen(c.Groups, sees) {
			continue
		}
		connected[c.UID] = true
		if !recent(c.Closed) {
			continue
		}
		items = append(items, clientEndpoint{Callsign: c.Callsign, UID: c.UID, Username: c.User,
			LastEventTime: httpapi.FormatTime(c.Closed), LastStatus: "Disconnected"})
	}
	httpapi.WriteJSON(w, http.StatusOK, h.envelope("com.bbn.marti.remote.ClientEndpoint", items))
	return nil
}

// contact is one item of /Marti/api/contacts/all: a connected client as the
// official server lists it.
type contact struct {
	FilterGroups []string `json:"filterGroups"`
	Notes        string   `json:"notes"`
	Callsign     string   `json:"callsign"`
	Team         string   `json:"team"`
	Role         string   `json:"role"`
	Takv         string   `json:"takv"`
	UID          string   `json:"uid"`
}

// contacts lists the connected clients that identified themselves and that
// the caller's groups see.
func (h *Handler) contacts(w http.ResponseWriter, r *http.Request) error {
	h.writeContacts(w, r, ^uint64(0))
	return nil
}

// writeContacts lists the connected clients that identified themselves,
// that the caller's groups see and whose groups meet mask.
func (h *Handler) writeContacts(w http.ResponseWriter, r *http.Request, mask uint64) {
	sees := access.From(r).Reads()
	items := []contact{}
	for _, c := range h.opts.Broker.Clients() {
		if !store.Seen(c.Groups, sees) || !store.Seen(c.Groups, mask) {
			continue
		}
		items = append(items, contact{FilterGroups: []string{}, Notes: c.User, Callsign: c.Callsign,
			Team: c.Team, Role: c.Role, UID: c.UID})
	}
	httpapi.WriteJSON(w, http.StatusOK, items)
}
