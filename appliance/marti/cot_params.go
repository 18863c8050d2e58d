package marti

// The parameters of the CoT history routes (cot_history.go): the time
// window and the box of the map.

import (
	"math"
	"net/http"
	"strconv"
	"time"

	"outpost/appliance/httpapi"
	"outpost/appliance/store"
)

// historyWin is a time window of the history, [from, to]; a zero time
// leaves that end open. opened names the parameter that set from.
type historyWin struct {
	from, to time.Time
	opened   string
}

// holds reports whether t lies in the window.
func (w historyWin) holds(t time.Time) bool {
	return (w.from.IsZero() || !t.Before(w.from)) && (w.to.IsZero() || !t.After(w.to))
}

// historyWindow reads the window of a history route as the official server
// does: secago= (or secAgo=, secago()) is the seconds before now, 0 meaning
// no bound, and wins over start=; start= and end= are ISO 8601 times. Each
// may be absent. 400 for a bad value, and for a window whose start is not
// before its end.
func historyWindow(r *http.Request, now time.Time) (historyWin, error) {
	var w historyWin
	back, given, err := secago(r)
	if err != nil {
		return w, err
	}
	if w.from, err = timeParam(r, "start"); err != nil {
		return w, err
	}
	if !w.from.IsZero() {
		w.opened = "start"
	}
	if given && back > 0 {
		w.from, w.opened = now.Add(-back), "secago"
	}
	if w.to, err = timeParam(r, "end"); err != nil {
		return w, err
	}
	if !w.from.IsZero() && !w.to.IsZero() && !w.from.Before(w.to) {
		return w, httpapi.BadRequest("end", "must be after the window's start (%s), not %s",
			httpapi.FormatTime(w.from), httpapi.FormatTime(w.to))
	}
	return w, nil
}

// saWindow reads the window of cot/sa: secago= from 1 to 86400, or start=
// (and end=, now when absent) at most 24 hours apart, as the official
// server bounds it. 400 otherwise.
func saWindow(r *http.Request, now time.Time) (historyWin, error) {
	w, err := historyWindow(r, now)
	if err != nil {
		return w, err
	}
	if w.from.IsZero() {
		return w, httpapi.BadRequest("secago", "a window is required: secago (1 to %d seconds) or start and end at most 24 hours apart",
			int(saMaxWindow/time.Second))
	}
	if w.to.IsZero() {
		w.to = now
		if !w.from.Before(w.to) {
			return w, httpapi.BadRequest("start", "must be before end (now: %s), not %s", httpapi.FormatTime(now), httpapi.FormatTime(w.from))
		}
	}
	if span := w.to.Sub(w.from); span > saMaxWindow {
		return w, httpapi.BadRequest(w.opened, "the window may span at most 24 hours, not %s", span.Round(time.Second))
	}
	return w, nil
}

// timeParam reads the ISO 8601 time of the query parameter name (zero when
// absent); 400 naming it when it is not one.
func timeParam(r *http.Request, name string) (time.Time, error) {
	v := r.URL.Query().Get(name)
	if v == "" {
		return time.Time{}, nil
	}
	t, err := parseTime(v)
	if err != nil {
		return time.Time{}, httpapi.BadRequest(name, "must be an ISO 8601 time (2026-11-22T10:00:00.000Z), not %q", httpapi.ClipValue(v))
	}
	return t, nil
}

// readBox reads the box of cot/sa, as the official server names its edges:
// left= and right= (longitudes; left east of right crosses the
// antimeridian), bottom= and top= (latitudes). All four or none (nil); 400
// naming the first that is missing or not a number, or the box when it is
// no area.
func readBox(r *http.Request) (*store.Box, error) {
	q := r.URL.Query()
	names := []string{"left", "bottom", "right", "top"}
	if !q.Has("left") && !q.Has("bottom") && !q.Has("right") && !q.Has("top") {
		return nil, nil
	}
	var v [4]float64
	for i, name := range names {
		s := q.Get(name)
		if s == "" {
			return nil, httpapi.BadRequest(name, "is required with the other edges of the box (left, bottom, right, top)")
		}
		f, err := strconv.ParseFloat(s, 64)
		if err != nil || math.IsNaN(f) || math.IsInf(f, 0) {
			return nil, httpapi.BadRequest(name, "must be a number of degrees, not %q", httpapi.ClipValue(s))
		}
		v[i] = f
	}
	b := &store.Box{MinLon: v[0], MinLat: v[1], MaxLon: v[2], MaxLat: v[3]}
	if err := b.Check(); err != nil {
		return nil, httpapi.InField("box", err)
	}
	return b, nil
}
