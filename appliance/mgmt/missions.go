package mgmt

// GET /api/missions and GET /api/missions/{name}: the missions (DataSync,
// api.md §4.4) as the web console's Missions page shows them. Read only;
// clients change missions through the client API. Every list is bounded
// (missionListLimit), and the answer says which were cut. Subscription
// tokens are never listed.

import (
	"errors"
	"fmt"
	"net/http"

	"outpost/appliance/access"
	"outpost/appliance/httpapi"
	"outpost/appliance/store"
)

// Limits of the mission routes.
const (
	missionListLimit  = 1000 // missions in GET /api/missions
	missionPartLimit  = 500  // files, uids, subscribers, external data, changes, log entries of one mission
	changeLogTextClip = 256  // bytes of a log entry's text quoted in a change
)

// missionsError is the 500 text of the mission routes.
const missionsError = "An error occurred accessing mission details: "

// missionItem is a mission with the sizes of its parts.
type missionItem struct {
	Name              string   `json:"name"`
	GUID              string   `json:"guid"`
	Description       string   `json:"description"`
	Tool              string   `json:"tool"`
	CreatorUID        string   `json:"creatorUid"`
	Created           string   `json:"created"`
	Updated           string   `json:"updated"`
	DefaultRole       string   `json:"defaultRole"`
	Keywords          []string `json:"keywords"`
	Groups            []string `json:"groups"`
	PasswordProtected bool     `json:"passwordProtected"`
	InviteOnly        bool     `json:"inviteOnly"`
	Contents          int      `json:"contentCount"`
	UIDs              int      `json:"uidCount"`
	Subscribers       int      `json:"subscriberCount"`
	Logs              int      `json:"logCount"`
}

func missionItemOf(s store.MissionSummary) missionItem {
	m := s.Mission
	return missionItem{
		Name: m.Name, GUID: m.GUID, Description: m.Description, Tool: m.Tool, CreatorUID: m.CreatorUID,
		Created: httpapi.FormatTime(m.Created), Updated: httpapi.FormatTime(m.Updated), DefaultRole: m.DefaultRole,
		Keywords: m.Keywords, Groups: m.Groups, PasswordProtected: m.PasswordProtected, InviteOnly: m.InviteOnly,
		Contents: s.Contents, UIDs: s.UIDs, Subscribers: s.Subscribers, Logs: s.Logs,
	}
}

// listMissions answers GET /api/missions: {"missions": [...], "truncated"},
// in name order.
func (a *API) listMissions(w http.ResponseWriter, r *http.Request) error {
	list, truncated, err := a.opts.Missions.MissionSummaries(r.Context(), missionListLimit)
	if err != nil {
		return httpapi.Internal(err, missionsError+"the list could not be read")
	}
	groups, err := a.opts.Users.Groups(r.Context())
	if err != nil {
		return httpapi.Internal(err, missionsError+"the list could not be read")
	}
	p := access.From(r)
	items := make([]missionItem, 0, len(list))
	for _, s := range list {
		if p.Sees(access.MaskOf(groups, s.Mission.Groups)) {
			items = append(items, missionItemOf(s))
		}
	}
	httpapi.WriteJSON(w, http.StatusOK, struct {
		Missions  []missionItem `json:"missions"`
		Truncated bool          `json:"truncated"`
	}{items, truncated})
	return nil
}

// missionDetail is GET /api/missions/{name}'s answer.
type missionDetail struct {
	Mission      missionItem          `json:"mission"`
	Contents     []contentItem        `json:"contents"`
	UIDs         []uidItem            `json:"uids"`
	Subscribers  []subscriberItem     `json:"subscribers"`
	ExternalData []store.ExternalData `json:"externalData"`
	Changes      []changeItem         `json:"changes"`
	Logs         []missionLogItem     `json:"logs"`
	Truncated    missionTruncation    `json:"truncated"`
}

// missionTruncation says which lists of missionDetail hold only their
// first (contents, uids, subscribers, external data: oldest) or newest
// (changes, logs) missionPartLimit items.
type missionTruncation struct {
	Contents     bool `json:"contents"`
	UIDs         bool `json:"uids"`
	Subscribers  bool `json:"subscribers"`
	ExternalData bool `json:"externalData"`
	Changes      bool `json:"changes"`
	Logs         bool `json:"logs"`
}

// mayReadMission applies access.md "Missions" to the console: a mission the
// caller's groups do not see is not there; a password-protected one shows
// its details to administrators only (the list shows that it exists).
func (a *API) mayReadMission(r *http.Request, m store.Mission) error {
	p := access.From(r)
	if p.Admin() {
		return nil
	}
	groups, err := a.opts.Users.Groups(r.Context())
	if err != nil {
		return err
	}
	if !p.Sees(access.MaskOf(groups, m.Groups)) {
		return fmt.Errorf("%w: no mission named %q", store.ErrNotFound, m.Name)
	}
	if m.PasswordProtected {
		return fmt.Errorf("%w: mission %q is password protected: its details are for its subscribers and administrators", access.ErrForbidden, m.Name)
	}
	return nil
}

// getMission answers GET /api/missions/{name}.
func (a *API) getMission(w http.ResponseWriter, r *http.Request) error {
	ctx := r.Context()
	name := r.PathValue("name")
	if err := store.CheckMissionName(name); err != nil {
		return httpapi.InField("name", err)
	}
	sum, err := a.opts.Missions.MissionSummaryByName(ctx, name)
	if err == nil {
		err = a.mayReadMission(r, sum.Mission)
	}
	if errors.Is(err, store.ErrNotFound) {
		return httpapi.Errorf(http.StatusNotFound, "name: no mission named %q", httpapi.ClipValue(name))
	}
	if err != nil {
		return httpapi.Internal(err, missionsError+"the mission could not be read")
	}
	m := sum.Mission
	out := missionDetail{Mission: missionItemOf(sum)}
	fail := func(err error, what string) error {
		return httpapi.Internal(err, missionsError+"the mission's "+what+" could not be read")
	}
	contents, err := a.opts.Missions.MissionContents(ctx, m.ID)
	if err != nil {
		return fail(err, "files")
	}
	contents, out.Truncated.Contents = firstN(contents, missionPartLimit)
	out.Contents = mapSlice(contents, contentItemOf)
	uids, err := a.opts.Missions.MissionUIDs(ctx, m.ID)
	if err != nil {
		return fail(err, "uids")
	}
	uids, out.Truncated.UIDs = firstN(uids, missionPartLimit)
	out.UIDs = mapSlice(uids, uidItemOf)
	subs, err := a.opts.Missions.Subscriptions(ctx, m.Name)
	if err != nil {
		return fail(err, "subscribers")
	}
	subs, out.Truncated.Subscribers = firstN(subs, missionPartLimit)
	out.Subscribers = mapSlice(subs, subscriberItemOf)
	if out.ExternalData, err = a.opts.Missions.MissionExternalData(ctx, m.ID); err != nil {
		return fail(err, "external data")
	}
	out.ExternalData, out.Truncated.ExternalData = firstN(out.ExternalData, missionPartLimit)
	changes, truncated, err := a.opts.Missions.RecentMissionChanges(ctx, m, missionPartLimit)
	if err != nil {
		return fail(err, "changes")
	}
	out.Changes, out.Truncated.Changes = mapSlice(changes, changeItemOf), truncated
	logs, truncated, err := a.opts.Missions.RecentMissionLogs(ctx, m, missionPartLimit)
	if err != nil {
		return fail(err, "log entries")
	}
	out.Logs, out.Truncated.Logs = mapSlice(logs, missionLogItemOf), truncated
	httpapi.WriteJSON(w, http.StatusOK, out)
	return nil
}

// firstN returns the first n items of list and whether there were more.
func firstN[T any](list []T, n int) ([]T, bool) {
	if len(list) > n {
		return list[:n], true
	}
	return list, false
}

func mapSlice[T, U any](list []T, f func(T) U) []U {
	out := make([]U, len(list))
	for i, v := range list {
		out[i] = f(v)
	}
	return out
}
