package marti

// The JSON of missions (api.md §2.13, §2.16): the official TAK server's
// shapes, which ATAK, WinTAK and node-tak parse. Times are api.md's
// ISO-8601 UTC with milliseconds.

import (
	"errors"
	"net/http"
	"time"

	"outpost/appliance/access"
	"outpost/appliance/httpapi"
	"outpost/appliance/store"
)

// Envelope types of the mission routes.
const (
	typeMission      = "Mission"
	typeSubscription = "com.bbn.marti.sync.model.MissionSubscription"
	typeChange       = "MissionChange"
	typeLogEntry     = "com.bbn.marti.sync.model.LogEntry"
	typeExternalData = "com.bbn.marti.sync.model.ExternalMissionData"
	typeInvitation   = "MissionInvitation"
)

// missionError starts the 500 text of the mission and ExCheck routes
// (api.md §7 gives none for them).
const missionError = "An error occurred accessing the mission."

type roleJSON struct {
	Type        string   `json:"type"`
	Permissions []string `json:"permissions"`
}

func role(r string) roleJSON { return roleJSON{Type: r, Permissions: store.RolePermissions(r)} }

type uidJSON struct {
	Data       string            `json:"data"`
	Timestamp  string            `json:"timestamp"`
	CreatorUID string            `json:"creatorUid"`
	Details    *store.UIDDetails `json:"details,omitempty"`
}

type contentJSON struct {
	Data       store.ContentResource `json:"data"`
	Timestamp  string                `json:"timestamp"`
	CreatorUID string                `json:"creatorUid"`
}

type missionJSON struct {
	Name              string               `json:"name"`
	GUID              string               `json:"guid"`
	Description       string               `json:"description"`
	ChatRoom          string               `json:"chatRoom"`
	BaseLayer         string               `json:"baseLayer"`
	BBox              string               `json:"bbox"`
	Path              string               `json:"path"`
	Classification    string               `json:"classification"`
	Tool              string               `json:"tool"`
	Keywords          []string             `json:"keywords"`
	CreatorUID        string               `json:"creatorUid"`
	CreateTime        string               `json:"createTime"`
	LastEdited        string               `json:"lastEdited"`
	Groups            []string             `json:"groups"`
	ExternalData      []store.ExternalData `json:"externalData"`
	Feeds             []any                `json:"feeds"`
	MapLayers         []any                `json:"mapLayers"`
	DefaultRole       roleJSON             `json:"defaultRole"`
	OwnerRole         roleJSON             `json:"ownerRole"`
	InviteOnly        bool                 `json:"inviteOnly"`
	PasswordProtected bool                 `json:"passwordProtected"`
	Expiration        int64                `json:"expiration"`
	UIDs              []uidJSON            `json:"uids"`
	Contents          []contentJSON        `json:"contents"`
	Token             string               `json:"token,omitempty"`
	Subscriptions     []subscriptionJSON   `json:"subscriptions,omitempty"`
	Logs              []logJSON            `json:"logs,omitempty"`
	MissionChanges    []changeJSON         `json:"missionChanges,omitempty"`
}

// missionView reads a mission's contents, uids and external data.
func (h *Handler) missionView(r *http.Request, m store.Mission) (missionJSON, error) {
	ctx := r.Context()
	st := &h.opts
	v := missionJSON{Name: m.Name, GUID: m.GUID, Description: m.Description, ChatRoom: m.ChatRoom, BaseLayer: m.BaseLayer,
		BBox: m.BBox, Path: m.Path, Classification: m.Classification, Tool: m.Tool, Keywords: m.Keywords,
		CreatorUID: m.CreatorUID, CreateTime: httpapi.FormatTime(m.Created), LastEdited: httpapi.FormatTime(m.Updated),
		Groups: m.Groups, Feeds: []any{}, MapLayers: []any{}, DefaultRole: role(m.DefaultRole), OwnerRole: role(store.RoleOwner),
		InviteOnly: m.InviteOnly, PasswordProtected: m.PasswordProtected, Expiration: m.Expiration}
	var err error
	if v.ExternalData, err = st.Missions.MissionExternalData(ctx, m.ID); err != nil {
		return v, err
	}
	contents, err := st.Missions.MissionContents(ctx, m.ID)
	if err != nil {
		return v, err
	}
	v.Contents = make([]contentJSON, len(contents))
	for i, c := range contents {
		v.Contents[i] = contentJSON{Data: c.Data, Timestamp: httpapi.FormatTime(c.Added), CreatorUID: c.CreatorUID}
	}
	if m.Name == store.TemplatesMission && m.Tool == store.ToolExCheck {
		tpls, err := h.templateContents(ctx, access.From(r).Reads())
		if err != nil {
			return v, err
		}
		v.Contents = append(v.Contents, tpls...)
	}
	uids, err := st.Missions.MissionUIDs(ctx, m.ID)
	if err != nil {
		return v, err
	}
	v.UIDs = make([]uidJSON, len(uids))
	for i, u := range uids {
		v.UIDs[i] = uidJSON{Data: u.UID, Timestamp: httpapi.FormatTime(u.Added), CreatorUID: u.CreatorUID, Details: u.Details}
	}
	return v, nil
}

// protectedView is a password-protected mission as whoever has not
// subscribed sees it in a list: that it exists and is protected, nothing
// more (access.md "Missions").
func protectedView(m store.Mission) missionJSON {
	return missionJSON{Name: m.Name, GUID: m.GUID, Tool: m.Tool, Keywords: []string{}, Groups: []string{},
		CreateTime: httpapi.FormatTime(m.Created), LastEdited: httpapi.FormatTime(m.Updated),
		ExternalData: []store.ExternalData{}, Feeds: []any{}, MapLayers: []any{}, DefaultRole: role(m.DefaultRole),
		OwnerRole: role(store.RoleOwner), InviteOnly: m.InviteOnly, PasswordProtected: true, Expiration: m.Expiration,
		UIDs: []uidJSON{}, Contents: []contentJSON{}}
}

type subscriptionJSON struct {
	MissionName string   `json:"missionName,omitempty"`
	Token       string   `json:"token,omitempty"`
	ClientUID   string   `json:"clientUid"`
	Username    string   `json:"username"`
	CreateTime  string   `json:"createTime"`
	Role        roleJSON `json:"role"`
}

// subscriptionView shows a subscription; its token only to its holder.
func subscriptionView(s store.Subscription, withToken bool) subscriptionJSON {
	v := subscriptionJSON{MissionName: s.MissionName, ClientUID: s.ClientUID, Username: s.Username,
		CreateTime: httpapi.FormatTime(s.Created), Role: role(s.Role)}
	if withToken {
		v.Token = s.Token
	}
	return v
}

type logJSON struct {
	ID            string   `json:"id"`
	EntryUID      string   `json:"entryUid"`
	Content       string   `json:"content"`
	CreatorUID    string   `json:"creatorUid"`
	MissionNames  []string `json:"missionNames"`
	DTG           string   `json:"dtg"`
	ServerTime    string   `json:"servertime"`
	Created       string   `json:"created"`
	ContentHashes []string `json:"contentHashes"`
	Keywords      []string `json:"keywords"`
}

func logView(e store.LogEntry) logJSON {
	return logJSON{ID: e.ID, EntryUID: e.EntryUID, Content: e.Content, CreatorUID: e.CreatorUID, MissionNames: e.Missions,
		DTG: httpapi.FormatTime(e.DTG), ServerTime: httpapi.FormatTime(e.ServerTime), Created: httpapi.FormatTime(e.Created),
		ContentHashes: nonNil(e.ContentHashes), Keywords: nonNil(e.Keywords)}
}

func nonNil(l []string) []string {
	if l == nil {
		return []string{}
	}
	return l
}

type changeJSON struct {
	Type              string                 `json:"type"`
	MissionName       string                 `json:"missionName"`
	MissionGUID       string                 `json:"missionGuid"`
	Timestamp         string                 `json:"timestamp"`
	ServerTime        string                 `json:"serverTime"`
	CreatorUID        string                 `json:"creatorUid"`
	IsFederatedChange bool                   `json:"isFederatedChange"`
	ContentUID        string                 `json:"contentUid,omitempty"`
	ContentResource   *store.ContentResource `json:"contentResource,omitempty"`
	Details           *store.UIDDetails      `json:"details,omitempty"`
	ExternalData      *store.ExternalData    `json:"externalData,omitempty"`
	LogEntry          *logJSON               `json:"logEntry,omitempty"`
}

func changeView(c store.MissionChange) changeJSON {
	v := changeJSON{Type: c.Type, MissionName: c.MissionName, MissionGUID: c.MissionGUID, Timestamp: httpapi.FormatTime(c.At),
		ServerTime: httpapi.FormatTime(c.At), CreatorUID: c.CreatorUID, ContentUID: c.ContentUID,
		ContentResource: c.ContentResource, Details: c.Details, ExternalData: c.ExternalData, IsFederatedChange: c.Federate != ""}
	if c.LogEntry != nil {
		l := logView(*c.LogEntry)
		v.LogEntry = &l
	}
	return v
}

type invitationJSON struct {
	MissionName string   `json:"missionName"`
	Invitee     string   `json:"invitee"`
	Type        string   `json:"type"`
	CreatorUID  string   `json:"creatorUid"`
	CreateTime  string   `json:"createTime"`
	Role        roleJSON `json:"role"`
	Token       string   `json:"token"`
}

func invitationView(i store.Invitation) invitationJSON {
	return invitationJSON{MissionName: i.MissionName, Invitee: i.Invitee, Type: i.Type, CreatorUID: i.CreatorUID,
		CreateTime: httpapi.FormatTime(i.Created), Role: role(i.Role), Token: i.Token}
}

// mission gives the failures of a mission, ExCheck or repeater route
// their meaning: a wrong mission password names the password field, and a
// fault of ours is answered with missionError (httpapi.Fail, through
// httpapi.HandlerFunc).
func (h *Handler) mission(fn httpapi.HandlerFunc) httpapi.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) error {
		err := fn(w, r)
		if errors.Is(err, store.ErrBadCredentials) {
			err = httpapi.InField("password", err)
		}
		return httpapi.Internal(err, missionError)
	}
}

// timeRange reads secago, start and end (api.md §4.4): secago wins over
// start.
func timeRange(r *http.Request, now time.Time) (from, to time.Time, err error) {
	q := r.URL.Query()
	if v := q.Get("secago"); v != "" {
		n, perr := parseInt64(v)
		if perr != nil || n < 0 {
			return from, to, httpapi.BadRequest("secago", "must be a whole number of seconds, not %q", httpapi.ClipValue(v))
		}
		from = now.Add(-time.Duration(min(n, int64(100*365*24*3600))) * time.Second)
	} else if from, err = timeParam(r, "start"); err != nil {
		return from, to, err
	}
	to, err = timeParam(r, "end")
	return from, to, err
}

func parseTime(v string) (time.Time, error) {
	for _, layout := range []string{time.RFC3339Nano, "2006-01-02T15:04:05.000Z0700", "2006-01-02T15:04:05Z0700", "2006-01-02"} {
		if t, err := time.Parse(layout, v); err == nil {
			return t, nil
		}
	}
	return time.Time{}, errors.New("not a time")
}
