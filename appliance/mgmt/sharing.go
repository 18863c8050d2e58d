package mgmt

// Who owns and who receives what the management API makes (access.md
// "Groups"): an administrator's objects go to the groups the request names
// (every group by default); a user's to its IN groups, or the subset of
// them it names.

import (
	"fmt"
	"net/http"

	"outpost/appliance/access"
	"outpost/appliance/httpapi"
	"outpost/appliance/objects"
	"outpost/appliance/store"
)

// caller is the request's principal as the objects service sees it.
func caller(r *http.Request) objects.Caller {
	p := access.From(r)
	return objects.Caller{Name: owner(r), Admin: p.Admin(), Sees: p.Reads()}
}

// owner is the name what a request makes is recorded under (access
// Principal.Owner).
func owner(r *http.Request) string { return access.From(r).Owner() }

// shareWith reads a request's groups (absent, a list of names, or one
// comma-separated string) and returns the mask it shares with.
func (a *API) shareWith(r *http.Request, field string, v any) (uint64, error) {
	names, err := groupNames(field, v)
	if err != nil {
		return 0, err
	}
	groups, err := a.opts.Users.Groups(r.Context())
	if err != nil {
		return 0, err
	}
	m, err := access.Restrict(access.From(r), groups, names)
	if err != nil {
		return 0, httpapi.InField(field, err)
	}
	return m, nil
}

// groupNames reads a list of group names.
func groupNames(field string, v any) ([]string, error) {
	switch t := v.(type) {
	case nil:
		return nil, nil
	case string:
		if t == "" {
			return nil, nil
		}
		names, err := store.ParseGroupField(t)
		if err != nil {
			return nil, httpapi.InField(field, err)
		}
		return names, nil
	case []any:
		out := make([]string, 0, len(t))
		for i, it := range t {
			s, ok := it.(string)
			if !ok {
				return nil, httpapi.BadRequest(fmt.Sprintf("%s[%d]", field, i), "must be a group name")
			}
			if err := checkText(fmt.Sprintf("%s[%d]", field, i), s, true, 64); err != nil {
				return nil, err
			}
			out = append(out, s)
		}
		return out, nil
	}
	return nil, httpapi.BadRequest(field, "must be a list of group names")
}
