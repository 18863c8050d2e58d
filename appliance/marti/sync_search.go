package marti

// The enterprise sync search (api.md §4.2), one handler under its two
// spellings: /Marti/sync/search answers {"results": [sync records],
// "resultCount": N} (api.md §2.9), and /Marti/api/sync/search the envelope
// of resources the official server's API answers there
// ({"version", "type": "Resource", "data": [...], "nodeId"}, the items of a
// mission's contents). Both list the same files: public ones carrying the
// keyword, of the tool, that the caller's groups see.

import (
	"fmt"
	"net/http"

	"outpost/appliance/access"
	"outpost/appliance/httpapi"
	"outpost/appliance/store"
)

// apiSearchRoute is the /Marti/api spelling of the search, answered with
// the envelope.
const apiSearchRoute = "GET /Marti/api/sync/search"

// searchQuery is what a search asks for.
type searchQuery struct {
	keyword, tool string
	hash, uid     string // "" any
}

// readSearchQuery reads keyword (or ATAK's keywords; default
// missionpackage), tool (default public), and hash and uid (node-tak's
// Package.list sends uid), each bounded.
func readSearchQuery(r *http.Request) (searchQuery, error) {
	q := r.URL.Query()
	field, kw := "keyword", q.Get("keyword")
	if kw == "" {
		field, kw = "keywords", q.Get("keywords")
	}
	if kw == "" {
		kw = store.MissionPackageKeyword
	}
	s := searchQuery{keyword: kw, tool: q.Get("tool"), uid: q.Get("uid")}
	if s.tool == "" {
		s.tool = store.ToolPublic
	}
	for _, c := range []struct {
		field, v string
		max      int
	}{{field, s.keyword, 256}, {"tool", s.tool, 64}, {"uid", s.uid, 255}} {
		if err := httpapi.CheckText(c.field, c.v, false, c.max); err != nil {
			return s, err
		}
	}
	if h := q.Get("hash"); h != "" {
		var err error
		if s.hash, err = httpapi.CheckHash("hash", h); err != nil {
			return s, err
		}
	}
	return s, nil
}

// matches reports whether the search lists p for the caller. Private
// packages never appear.
func (s searchQuery) matches(p store.DataPackage, caller access.Principal) bool {
	return p.Tool == s.tool && p.Privacy == 0 && (s.hash == "" || p.Hash == s.hash) &&
		(s.uid == "" || p.UID == s.uid) && caller.CanRead(p.Groups, p.Owner)
}

// search answers both spellings of the search, newest first, written as
// the packages are read.
func (h *Handler) search(w http.ResponseWriter, r *http.Request) error {
	s, err := readSearchQuery(r)
	if err != nil {
		return err
	}
	caller := access.From(r)
	var (
		l    *httpapi.Listing
		item func(store.DataPackage) any
	)
	if r.Pattern == apiSearchRoute {
		head, tail := h.envelopeListing("Resource")
		l = httpapi.NewListing(w, r, "application/json", head, tail)
		item = func(p store.DataPackage) any { return store.ContentResourceOf(p) }
	} else {
		// resultCount follows the results, whose number is known only
		// then.
		l = httpapi.NewListing(w, r, httpapi.JSONText, `{"results":[`, "")
		item = func(p store.DataPackage) any { return newSearchRecord(p) }
	}
	err = h.opts.Files.EachSearchDataPackage(r.Context(), s.keyword, func(p store.DataPackage) error {
		if !s.matches(p, caller) {
			return nil
		}
		return l.Item(item(p))
	})
	if r.Pattern != apiSearchRoute {
		l.SetTail(fmt.Sprintf(`],"resultCount":%d}`+"\n", l.Count()))
	}
	l.Finish(err, syncError+"the search failed")
	return nil
}
