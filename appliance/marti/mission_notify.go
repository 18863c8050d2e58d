package marti

// Mission and checklist notifications on the CoT wire (api.md §6.2), sent
// through the broker to the CoT listeners and websockets once the change
// has committed: to every client for a new mission, to the mission's
// subscribers (by client uid) for its changes, to the invitee for an
// invitation. They are server events: uid random, how h-g-i-g-o, stale
// in 20 s, point 0 0 0 with unknown ce/le.

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/xml"
	"strconv"
	"strings"
	"time"

	"github.com/google/uuid"

	"outpost/appliance/access"
	"outpost/appliance/cot"
	"outpost/appliance/httpapi"
	"outpost/appliance/logx"
	"outpost/appliance/store"
)

// Notification types (api.md §6.2).
const (
	typeMissionCreated  = "t-x-m-n"
	typeMissionChange   = "t-x-m-c"
	typeMissionLog      = "t-x-m-c-l"
	typeMissionExternal = "t-x-m-c-e"
	typeMissionInvite   = "t-x-m-i"
	typeMissionDeleted  = "t-x-m-d"
	typeMissionRole     = "t-x-m-r"
)

// xb builds detail XML, escaping every value.
type xb struct{ bytes.Buffer }

func (b *xb) attr(name, v string) {
	b.WriteString(" " + name + `="`)
	xml.EscapeText(b, []byte(v))
	b.WriteByte('"')
}

func (b *xb) elem(name, v string) {
	b.WriteString("<" + name + ">")
	xml.EscapeText(b, []byte(v))
	b.WriteString("</" + name + ">")
}

// missionOpen writes <mission type name tool guid authorUid> (left open).
func (b *xb) missionOpen(kind string, m store.Mission, author string) {
	b.WriteString("<mission")
	b.attr("type", kind)
	b.attr("name", m.Name)
	b.attr("tool", m.Tool)
	b.attr("guid", m.GUID)
	b.attr("authorUid", author)
	b.WriteString(">")
}

func (b *xb) contentResource(c *store.ContentResource) {
	b.WriteString("<contentResource>")
	b.elem("filename", c.Filename)
	b.elem("hash", c.Hash)
	for _, k := range c.Keywords {
		b.elem("keywords", k)
	}
	b.elem("mimeType", c.MIMEType)
	b.elem("name", c.Name)
	b.elem("size", strconv.FormatInt(c.Size, 10))
	b.elem("submissionTime", c.SubmissionTime)
	b.elem("submitter", c.Submitter)
	b.elem("tool", c.Tool)
	b.elem("uid", c.UID)
	b.elem("creatorUid", c.CreatorUID)
	b.WriteString("</contentResource>")
}

// changeTail writes the fields every MissionChange ends with.
func (b *xb) changeTail(m store.Mission, author, changeType string, now time.Time) {
	b.elem("creatorUid", author)
	b.elem("isFederatedChange", "false")
	b.elem("missionName", m.Name)
	b.elem("missionGuid", m.GUID)
	b.elem("timestamp", httpapi.FormatTime(now))
	b.elem("type", changeType)
}

func notification(typ string, detail []byte, now time.Time) *cot.Event {
	now = now.UTC().Truncate(time.Millisecond)
	ev := &cot.Event{Version: "2.0", UID: uuid.NewString(), Type: typ, How: "h-g-i-g-o", Time: now, Start: now,
		Stale: now.Add(20 * time.Second), Point: cot.Point{Ce: cot.Unknown, Le: cot.Unknown}}
	ev.Detail.XML = detail
	return ev
}

// send delivers a notification to the connections of uids (nil: to every
// client of groups, a mask).
func (h *Handler) send(ev *cot.Event, uids []string, groups uint64) {
	if h.opts.Broker == nil || (uids != nil && len(uids) == 0) {
		return
	}
	if err := h.opts.Broker.Notify(ev, uids, groups); err != nil {
		h.log.Warn("a mission notification was not sent", "type", ev.Type, "err", err)
	}
}

func (h *Handler) subscribers(mission string) []string {
	uids := h.opts.Missions.MissionSubscribers(mission)
	if uids == nil {
		return []string{}
	}
	return uids
}

// notifyCreated sends MissionCreatedNotification to every client.
func (h *Handler) notifyCreated(m store.Mission, author string) {
	h.announce(typeMissionCreated, "CREATE", m, author)
}

// notifyDeleted sends the official server's mission delete notification
// (t-x-m-d, <mission type="DELETE">) to every client, subscribers first
// among them, once the mission is gone.
func (h *Handler) notifyDeleted(m store.Mission, author string) {
	h.announce(typeMissionDeleted, "DELETE", m, author)
}

// announce sends a notification of typ about mission m to every client
// whose groups see it.
func (h *Handler) announce(typ, kind string, m store.Mission, author string) {
	var b xb
	b.missionOpen(kind, m, author)
	b.WriteString("</mission>")
	// access.md "Missions": only the clients whose groups see the mission
	// hear of it.
	groups, err := h.groupList(context.Background())
	if err != nil {
		h.log.Warn("a mission notification was not sent: the groups could not be read", "err", err)
		return
	}
	h.send(notification(typ, b.Bytes(), h.opts.Now()), nil, access.MaskOf(groups, m.Groups))
}

// notifyContents sends one MissionContentCreatedNotification per file and
// uid added, to the mission's subscribers.
func (h *Handler) notifyContents(m store.Mission, author string, added []store.ContentChange) {
	subs := h.subscribers(m.Name)
	if len(subs) == 0 {
		return
	}
	now := h.opts.Now()
	for _, c := range added {
		var b xb
		b.missionOpen("CHANGE", m, author)
		b.WriteString("<MissionChanges><MissionChange>")
		if c.Content != nil {
			b.contentResource(c.Content)
		} else {
			b.elem("contentUid", c.UID)
			if d := c.Details; d != nil {
				b.WriteString("<details")
				b.attr("type", d.Type)
				b.attr("callsign", d.Callsign)
				b.attr("iconsetPath", d.IconsetPath)
				b.WriteString("><location")
				b.attr("lat", strconv.FormatFloat(d.Location.Lat, 'f', -1, 64))
				b.attr("lon", strconv.FormatFloat(d.Location.Lon, 'f', -1, 64))
				b.WriteString("/></details>")
			}
		}
		b.changeTail(m, author, store.ChangeAddContent, now)
		b.WriteString("</MissionChange></MissionChanges></mission>")
		h.send(notification(typeMissionChange, b.Bytes(), now), subs, store.AllGroups)
	}
}

// notifyLog sends the log change notification to the subscribers of each
// mission of the entry.
func (h *Handler) notifyLog(e store.LogEntry, changeType string) {
	now := h.opts.Now()
	for _, name := range e.Missions {
		subs := h.subscribers(name)
		if len(subs) == 0 {
			continue
		}
		m, err := h.opts.Missions.MissionByName(context.Background(), name)
		if err != nil {
			continue // removed meanwhile
		}
		var b xb
		b.missionOpen("CHANGE", m, e.CreatorUID)
		b.WriteString("<MissionChanges><MissionChange>")
		b.WriteString("<logEntry")
		b.attr("id", e.ID)
		b.attr("dtg", httpapi.FormatTime(e.DTG))
		b.WriteString(">")
		b.elem("content", e.Content)
		b.WriteString("</logEntry>")
		b.changeTail(m, e.CreatorUID, changeType, now)
		b.WriteString("</MissionChange></MissionChanges></mission>")
		h.send(notification(typeMissionLog, b.Bytes(), now), subs, store.AllGroups)
	}
}

// notifyExternalData sends MissionExternalDataCreatedNotification.
func (h *Handler) notifyExternalData(m store.Mission, author string, x store.ExternalData) {
	subs := h.subscribers(m.Name)
	if len(subs) == 0 {
		return
	}
	now := h.opts.Now()
	var b xb
	b.missionOpen("CHANGE", m, author)
	b.WriteString("<MissionChanges><MissionChange><externalData>")
	b.elem("uid", x.UID)
	b.elem("name", x.Name)
	b.elem("tool", x.Tool)
	b.elem("urlData", x.URLData)
	b.elem("urlView", x.URLView)
	b.elem("notes", x.Notes)
	b.WriteString("</externalData>")
	b.changeTail(m, author, store.ChangeAddContent, now)
	b.WriteString("</MissionChange></MissionChanges></mission>")
	h.send(notification(typeMissionExternal, b.Bytes(), now), subs, store.AllGroups)
}

// notifyChecklist sends ChecklistUpdateNotification for a changed task to
// the subscribers of the checklist's mission.
func (h *Handler) notifyChecklist(checklistUID, author, taskUID string, task []byte) {
	subs := h.subscribers(checklistUID)
	if len(subs) == 0 {
		return
	}
	now := h.opts.Now()
	sum := sha256.Sum256(task)
	m := store.Mission{Name: checklistUID, Tool: store.ToolExCheck}
	if full, err := h.opts.Missions.MissionByName(context.Background(), checklistUID); err == nil {
		m = full
	}
	var b xb
	b.missionOpen("CHANGE", m, author)
	b.WriteString("<MissionChanges><MissionChange>")
	b.contentResource(&store.ContentResource{Filename: taskUID + ".xml", Hash: hex.EncodeToString(sum[:]), Keywords: []string{"Task"},
		MIMEType: "application/xml", Name: taskUID, Size: int64(len(task)), SubmissionTime: httpapi.FormatTime(now),
		Submitter: author, Tool: store.ToolExCheck, UID: taskUID, CreatorUID: author})
	b.changeTail(m, author, store.ChangeAddContent, now)
	b.WriteString("</MissionChange></MissionChanges>")
	b.elem("content", string(task))
	b.WriteString("</mission>")
	h.send(notification(typeMissionChange, b.Bytes(), now), subs, store.AllGroups)
}

// notifyInvitation sends the invitation to the invitee: a client uid, or
// the connected clients with that callsign.
func (h *Handler) notifyInvitation(inv store.Invitation) {
	var uids []string
	switch strings.ToLower(inv.Type) {
	case "clientuid":
		uids = []string{inv.Invitee}
	case "callsign":
		for _, c := range h.opts.Broker.Clients() {
			if c.Callsign == inv.Invitee {
				uids = append(uids, c.UID)
			}
		}
	default:
		return // user names, groups and teams read their invitations over HTTPS
	}
	m, err := h.opts.Missions.MissionByName(context.Background(), inv.MissionName)
	if err != nil {
		return
	}
	var b xb
	b.WriteString("<mission")
	b.attr("type", "INVITE")
	b.attr("name", m.Name)
	b.attr("tool", m.Tool)
	b.attr("guid", m.GUID)
	b.attr("authorUid", inv.CreatorUID)
	b.attr("token", inv.Token)
	b.WriteString(">")
	b.role(inv.Role)
	b.WriteString("</mission>")
	h.send(notification(typeMissionInvite, b.Bytes(), h.opts.Now()), uids, store.AllGroups)
}

// role writes the official server's MissionRole as XML: <role type> with
// its <permissions>.
func (b *xb) role(name string) {
	b.WriteString("<role")
	b.attr("type", name)
	b.WriteString("><permissions>")
	for _, p := range store.RolePermissions(name) {
		b.WriteString(`<permission`)
		b.attr("type", p)
		b.WriteString("/>")
	}
	b.WriteString("</permissions></role>")
}

// notifyRoleChange tells subscriber uid of mission m that its role is now
// role, as the official server does when a role is set (PUT
// .../role; its DistributedSubscriptionManager.createMissionRoleChangeMessage,
// called from MissionServiceDefaultImpl.setRole): a t-x-m-r event whose
// <mission type="INVITE" name tool guid> holds the new <role>, sent to that
// client uid's connections only. The official server sends it with an
// empty author, so there is no authorUid attribute.
func (h *Handler) notifyRoleChange(m store.Mission, uid, role string) {
	var b xb
	b.WriteString("<mission")
	b.attr("type", "INVITE")
	b.attr("name", m.Name)
	b.attr("tool", m.Tool)
	b.attr("guid", m.GUID)
	b.WriteString(">")
	b.role(role)
	b.WriteString("</mission>")
	h.send(notification(typeMissionRole, b.Bytes(), h.opts.Now()), []string{uid}, store.AllGroups)
}

// sendMissionCoT sends a new subscriber the latest event of each uid of
// the mission (received within [from, to] when given).
func (h *Handler) sendMissionCoT(ctx context.Context, mission, uid string, from, to time.Time) {
	events, err := h.opts.Missions.MissionCoT(ctx, mission)
	if err != nil {
		h.log.Warn("could not read a mission's events for a new subscriber", "mission", logx.Clip(mission), "err", err)
		return
	}
	for _, e := range events {
		if (!from.IsZero() && e.ReceivedAt.Before(from)) || (!to.IsZero() && e.ReceivedAt.After(to)) {
			continue
		}
		ev, err := e.Event()
		if err != nil {
			continue
		}
		h.send(ev, []string{uid}, store.AllGroups)
	}
}
