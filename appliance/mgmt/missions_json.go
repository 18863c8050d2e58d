package mgmt

// The items of GET /api/missions/{name} (missions.go): a mission's files,
// uids, subscribers, changes and log entries, with ISO-8601 times.

import (
	"unicode/utf8"

	"outpost/appliance/httpapi"
	"outpost/appliance/store"
)

// contentItem is a file of a mission; its content is
// GET /DataPackageTable/{hash}.
type contentItem struct {
	Name       string   `json:"name"`
	Hash       string   `json:"hash"`
	Size       int64    `json:"size"`
	MIMEType   string   `json:"mimeType"`
	Keywords   []string `json:"keywords"`
	Submitter  string   `json:"submitter"`
	CreatorUID string   `json:"creatorUid"` // who added it to the mission
	Added      string   `json:"added"`
}

func contentItemOf(c store.MissionContent) contentItem {
	return contentItem{Name: c.Data.Name, Hash: c.Data.Hash, Size: c.Data.Size, MIMEType: c.Data.MIMEType,
		Keywords: c.Data.Keywords, Submitter: c.Data.Submitter, CreatorUID: c.CreatorUID, Added: httpapi.FormatTime(c.Added)}
}

// uidItem is a CoT uid of a mission with its latest event's type,
// callsign and position (empty and null when the history has none).
type uidItem struct {
	UID        string   `json:"uid"`
	CreatorUID string   `json:"creatorUid"`
	Added      string   `json:"added"`
	Type       string   `json:"type"`
	Callsign   string   `json:"callsign"`
	Lat        *float64 `json:"lat"`
	Lon        *float64 `json:"lon"`
}

func uidItemOf(u store.MissionUID) uidItem {
	it := uidItem{UID: u.UID, CreatorUID: u.CreatorUID, Added: httpapi.FormatTime(u.Added)}
	if d := u.Details; d != nil {
		lat, lon := d.Location.Lat, d.Location.Lon
		it.Type, it.Callsign, it.Lat, it.Lon = d.Type, d.Callsign, &lat, &lon
	}
	return it
}

// subscriberItem is an active subscription, without its token.
type subscriberItem struct {
	ClientUID string `json:"clientUid"`
	Username  string `json:"username"`
	Role      string `json:"role"`
	Created   string `json:"created"`
}

func subscriberItemOf(s store.Subscription) subscriberItem {
	return subscriberItem{ClientUID: s.ClientUID, Username: s.Username, Role: s.Role, Created: httpapi.FormatTime(s.Created)}
}

// changeItem is one record of the change history. Kind says what changed:
// "mission" (created), "file" (name, hash, size), "uid" (uid, callsign),
// "log" (logId, text: the entry's first changeLogTextClip bytes) or
// "externalData" (uid, name).
type changeItem struct {
	ID         int64  `json:"id"`
	Type       string `json:"type"`
	Kind       string `json:"kind"`
	CreatorUID string `json:"creatorUid"`
	Time       string `json:"time"`
	Name       string `json:"name,omitempty"`
	Hash       string `json:"hash,omitempty"`
	Size       int64  `json:"size,omitempty"`
	UID        string `json:"uid,omitempty"`
	Callsign   string `json:"callsign,omitempty"`
	LogID      string `json:"logId,omitempty"`
	Text       string `json:"text,omitempty"`
}

func changeItemOf(c store.MissionChange) changeItem {
	it := changeItem{ID: c.ID, Type: c.Type, Kind: "mission", CreatorUID: c.CreatorUID, Time: httpapi.FormatTime(c.At)}
	switch {
	case c.ContentResource != nil:
		it.Kind, it.Name, it.Hash, it.Size = "file", c.ContentResource.Name, c.ContentResource.Hash, c.ContentResource.Size
	case c.ContentUID != "":
		it.Kind, it.UID = "uid", c.ContentUID
		if c.Details != nil {
			it.Callsign = c.Details.Callsign
		}
	case c.LogEntry != nil:
		it.Kind, it.LogID, it.Text = "log", c.LogEntry.ID, excerpt(c.LogEntry.Content, changeLogTextClip)
	case c.ExternalData != nil:
		it.Kind, it.UID, it.Name = "externalData", c.ExternalData.UID, c.ExternalData.Name
	}
	return it
}

// missionLogItem is a mission log entry.
type missionLogItem struct {
	ID            string   `json:"id"`
	EntryUID      string   `json:"entryUid"`
	Content       string   `json:"content"`
	CreatorUID    string   `json:"creatorUid"`
	DTG           string   `json:"dtg"`
	Created       string   `json:"created"`
	ServerTime    string   `json:"serverTime"`
	Keywords      []string `json:"keywords"`
	ContentHashes []string `json:"contentHashes"`
}

func missionLogItemOf(e store.LogEntry) missionLogItem {
	return missionLogItem{ID: e.ID, EntryUID: e.EntryUID, Content: e.Content, CreatorUID: e.CreatorUID,
		DTG: httpapi.FormatTime(e.DTG), Created: httpapi.FormatTime(e.Created), ServerTime: httpapi.FormatTime(e.ServerTime),
		Keywords: e.Keywords, ContentHashes: e.ContentHashes}
}

// excerpt cuts s to at most n bytes on a rune boundary, marking a cut
// with "…".
func excerpt(s string, n int) string {
	if len(s) <= n {
		return s
	}
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	return s[:n] + "…"
}
