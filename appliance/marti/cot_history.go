package marti

// The CoT history routes (docs/api-marti.md "CoT history"): the latest
// event of a uid, a uid's events in a time window, and the latest event of
// every uid in a window (the situation picture). The relay writes the
// history in batches, up to a second after it routed an event, so these
// routes also read the broker's live state (each session's latest position
// report, the retained events) and answer what the relay has seen, written
// yet or not. Both are filtered by the caller's groups (access.md "Groups").

import (
	"bytes"
	"cmp"
	"context"
	"errors"
	"net/http"
	"slices"
	"strconv"
	"time"

	"outpost/appliance/access"
	"outpost/appliance/broker"
	"outpost/appliance/httpapi"
	"outpost/appliance/store"
)

// The bounds of cot/sa: its window, as the official server's, and its
// answer (the newest events first; Outpost-Truncated says more were left
// out). cot/xml/{uid}/all answers pages (mission_page.go).
const (
	saMaxWindow = 24 * time.Hour
	saMaxEvents = pageMax
)

const (
	headerNextEvents = "Outpost-Next-Events" // cot/xml/{uid}/all: the cursor of the next page (before=)
	headerTruncated  = "Outpost-Truncated"   // cot/sa: "true" when events were left out
)

// cotError is the answer to a fault of ours on these routes.
const cotError = "An error occurred retrieving the event."

// cotRoutes registers the CoT history routes.
func (h *Handler) cotRoutes(c func(string, httpapi.HandlerFunc)) {
	c("GET /Marti/api/cot/xml/{uid}", h.cotXML)
	c("GET /Marti/api/cot/xml/{uid}/all", h.cotAll)
	c("GET /Marti/api/cot/sa", h.cotSA)
}

// cotUID reads the uid of the path; 400 for one over 255 bytes or with
// control characters.
func cotUID(r *http.Request) (string, error) {
	uid := r.PathValue("uid")
	return uid, httpapi.CheckText("uid", uid, true, 255)
}

// unknownUID is the 404 of a uid the caller sees no event of.
func unknownUID(uid string) error {
	return httpapi.Errorf(http.StatusNotFound, "uid: no event of %s in the history", strconv.Quote(httpapi.ClipValue(uid)))
}

// newestLive returns, by uid, the newest event of the broker's live state
// that a caller of mask sees sees; of uid alone when uid is not "".
func (h *Handler) newestLive(uid string, sees uint64) map[string]broker.Live {
	out := map[string]broker.Live{}
	if h.opts.Broker == nil {
		return out
	}
	for _, l := range h.opts.Broker.LiveEvents(uid) {
		if !store.Seen(l.Groups, sees) {
			continue
		}
		if cur, ok := out[l.Event.UID]; !ok || l.At.After(cur.At) {
			out[l.Event.UID] = l
		}
	}
	return out
}

// newer reports whether a live event received at live is at least as new
// as a stored one received at stored (the history keeps milliseconds).
func newer(live, stored time.Time) bool { return live.UnixMilli() >= stored.UnixMilli() }

// cotXML answers the latest event of a uid the caller sees as CoT XML: the
// newer of the broker's live state and the history (which may hold older
// events of the uid sent to the caller's groups when its latest was not);
// 404 when the caller sees none.
func (h *Handler) cotXML(w http.ResponseWriter, r *http.Request) error {
	uid, err := cotUID(r)
	if err != nil {
		return err
	}
	sees := access.From(r).Reads()
	live, isLive := h.newestLive(uid, sees)[uid]
	stored, _, err := h.opts.Events.EventsOfUID(r.Context(), uid, time.Time{}, time.Time{}, sees, store.Page{Limit: 1})
	switch {
	case err != nil:
		return httpapi.Internal(err, cotError)
	case isLive && (len(stored) == 0 || newer(live.At, stored[0].ReceivedAt)):
		httpapi.WriteBody(w, http.StatusOK, "application/xml; charset=utf-8", live.XML)
	case len(stored) == 1:
		httpapi.WriteBody(w, http.StatusOK, "application/xml; charset=utf-8", stored[0].XML)
	default:
		return unknownUID(uid)
	}
	return nil
}

// cotAll answers the events of a uid in a window (historyWindow) as an
// <events> document, newest first, a page at a time (readPage; the next
// page's cursor in Outpost-Next-Events). The first page also starts with
// the uid's live event while the history has not written it. 404 when the
// caller sees no event of the uid at all; a window without any is an empty
// <events>.
func (h *Handler) cotAll(w http.ResponseWriter, r *http.Request) error {
	return httpapi.Internal(h.writeCoTAll(w, r), cotError)
}

func (h *Handler) writeCoTAll(w http.ResponseWriter, r *http.Request) error {
	uid, err := cotUID(r)
	if err != nil {
		return err
	}
	win, err := historyWindow(r, h.opts.Now())
	if err != nil {
		return err
	}
	p, err := readPage(r, true)
	if err != nil {
		return err
	}
	sees := access.From(r).Reads()
	events, next, err := h.opts.Events.EventsOfUID(r.Context(), uid, win.from, win.to, sees, p)
	if errors.Is(err, store.ErrInvalid) {
		return httpapi.InField("before", err)
	}
	if err != nil {
		return err
	}
	live, isLive := h.newestLive(uid, sees)[uid]
	var xmls [][]byte
	if isLive && p.Before.IsZero() && win.holds(live.At) {
		unwritten, err := h.unwritten(r.Context(), live)
		if err != nil {
			return err
		}
		if unwritten {
			xmls = append(xmls, live.XML)
		}
	}
	for _, e := range events {
		xmls = append(xmls, e.XML)
	}
	if len(xmls) == 0 && !isLive {
		// Nothing in the window: is the uid known at all?
		known, _, err := h.opts.Events.EventsOfUID(r.Context(), uid, time.Time{}, time.Time{}, sees, store.Page{Limit: 1})
		if err != nil {
			return err
		}
		if len(known) == 0 {
			return unknownUID(uid)
		}
	}
	setNext(w, headerNextEvents, next.String())
	httpapi.WriteBody(w, http.StatusOK, "application/xml; charset=utf-8", eventsDocument(xmls))
	return nil
}

// unwritten reports whether the history has not written the live event l
// yet: it has nothing of l's uid, or only what it received before l and
// that is not l itself (a retained event is received again at each start).
func (h *Handler) unwritten(ctx context.Context, l broker.Live) (bool, error) {
	at, xml, err := h.opts.Events.LatestReceived(ctx, l.Event.UID)
	if errors.Is(err, store.ErrNotFound) {
		return true, nil
	}
	if err != nil {
		return false, err
	}
	return l.At.UnixMilli() > at.UnixMilli() && string(xml) != string(l.XML), nil
}

// saItem is one uid's event in the situation picture.
type saItem struct {
	uid string
	at  time.Time
	xml []byte
}

// cotSA answers the latest event of every uid in a window of at most 24
// hours (saWindow), optionally in a box (readBox), as an <events> document,
// newest first: the history's and the live state's, the newer of the two
// for each uid. At most saMaxEvents events and pageMaxBytes of them (at
// least one); Outpost-Truncated: true when others were left out.
func (h *Handler) cotSA(w http.ResponseWriter, r *http.Request) error {
	return httpapi.Internal(h.writeCoTSA(w, r), cotError)
}

func (h *Handler) writeCoTSA(w http.ResponseWriter, r *http.Request) error {
	win, err := saWindow(r, h.opts.Now())
	if err != nil {
		return err
	}
	box, err := readBox(r)
	if err != nil {
		return err
	}
	sees := access.From(r).Reads()
	stored, cut, err := h.opts.Events.LatestInWindow(r.Context(), win.from, win.to, box, sees, saMaxEvents, pageMaxBytes)
	if err != nil {
		return err
	}
	byUID := make(map[string]saItem, len(stored))
	for _, e := range stored {
		byUID[e.UID] = saItem{uid: e.UID, at: e.ReceivedAt, xml: e.XML}
	}
	for uid, l := range h.newestLive("", sees) {
		if !store.PictureType(l.Event.Type) || !win.holds(l.At) || (box != nil && !box.Contains(l.Event.Point.Lat, l.Event.Point.Lon)) {
			continue
		}
		if cur, ok := byUID[uid]; !ok || newer(l.At, cur.at) {
			byUID[uid] = saItem{uid: uid, at: l.At, xml: l.XML}
		}
	}
	items := make([]saItem, 0, len(byUID))
	for _, it := range byUID {
		items = append(items, it)
	}
	slices.SortFunc(items, func(a, b saItem) int {
		if c := b.at.Compare(a.at); c != 0 {
			return c
		}
		return cmp.Compare(a.uid, b.uid)
	})
	xmls := make([][]byte, 0, min(len(items), saMaxEvents))
	size := 0
	for i, it := range items {
		if i == saMaxEvents || (i > 0 && size+len(it.xml) > pageMaxBytes) {
			cut = true
			break
		}
		size += len(it.xml)
		xmls = append(xmls, it.xml)
	}
	if cut {
		w.Header().Set(headerTruncated, "true")
	}
	httpapi.WriteBody(w, http.StatusOK, "application/xml; charset=utf-8", eventsDocument(xmls))
	return nil
}

// eventsDocument is the <events> document the official server answers for
// a list of CoT events: the XML declaration, then each event (without its
// own declaration) and a newline.
func eventsDocument(xmls [][]byte) []byte {
	n := 64
	for _, x := range xmls {
		n += len(x) + 1
	}
	b := make([]byte, 0, n)
	b = append(b, `<?xml version="1.0" encoding="UTF-8"?>`+"\n<events>"...)
	for _, x := range xmls {
		b = append(b, stripDeclaration(x)...)
		b = append(b, '\n')
	}
	return append(b, "</events>"...)
}

// stripDeclaration drops the XML declaration and surrounding whitespace of
// a stored event.
func stripDeclaration(x []byte) []byte {
	x = bytes.TrimSpace(x)
	if bytes.HasPrefix(x, []byte("<?xml")) {
		if i := bytes.Index(x, []byte("?>")); i >= 0 {
			x = bytes.TrimSpace(x[i+2:])
		}
	}
	return x
}
