package marti_test

import (
	"net/url"
	"strconv"
	"strings"
	"testing"

	"outpost/appliance/config"
	"outpost/appliance/netx"
)

// logPost is a log entry request of content in the missions.
func logPost(content string, missions ...string) map[string]any {
	return map[string]any{"content": content, "creatorUid": "writer-1", "missionNames": missions}
}

// counts is how many log entries and change records a mission shows.
func (e *env) counts(t *testing.T, name string) (logs, changes int) {
	t.Helper()
	var ls, cs []map[string]any
	p := "/Marti/api/missions/" + url.PathEscape(name)
	e.call(t, both[0], "GET", p+"/log", nil, 200, &ls)
	e.call(t, both[0], "GET", p+"/changes", nil, 200, &cs)
	return len(ls), len(cs)
}

// refused sends a request that must be refused with status and a message
// holding msg, and checks that the mission's log and history did not
// change.
func (e *env) refused(t *testing.T, mission, method, path string, body any, status int, msg string) {
	t.Helper()
	logs, changes := e.counts(t, mission)
	resp := e.do(t, both[0], method, path, body)
	var out struct{ Message string }
	resp.JSON(t, &out)
	if resp.Status != status || !strings.Contains(out.Message, msg) {
		t.Fatalf("%s %s: %d %q, want %d with %q", method, path, resp.Status, out.Message, status, msg)
	}
	if l, c := e.counts(t, mission); l != logs || c != changes {
		t.Fatalf("%s %s was refused but wrote: logs %d→%d, changes %d→%d", method, path, logs, l, changes, c)
	}
}

// TestMissionBudgets: a log entry larger than one may be, a mission's log
// past its entries or bytes, and its contents past their budget are
// refused with 413 and a message saying which, writing nothing; deleting
// makes room again; the change history keeps the newest records within
// its budget.
func TestMissionBudgets(t *testing.T) {
	e := start(t, func(c *config.Config) {
		c.MissionLogEntryMaxBytes = 1024
		c.MissionLogMaxEntries = 4
		c.MissionLogMaxBytes = 3000
		c.MissionMaxContents = 3
		c.MissionMaxChanges = 6
		c.MissionLogEntriesPerMinute, c.MissionLogBytesPerMinute = 0, 0
	})
	const m = "/Marti/api/missions/"
	e.call(t, both[0], "PUT", m+"full?creatorUid=owner-1", nil, 201, nil)
	const entries = m + "logs/entries"

	e.refused(t, "full", "POST", entries, logPost(strings.Repeat("x", 1025), "full"), 413,
		"content is 1025 bytes, a log entry may hold at most 1024")
	var ids []string
	for range 3 {
		var out struct{ ID string }
		e.call(t, both[0], "POST", entries, logPost(strings.Repeat("x", 1000), "full"), 201, &out)
		ids = append(ids, out.ID)
	}
	e.refused(t, "full", "POST", entries, logPost("y", "full"), 413,
		`mission "full"'s log entries hold 3000 bytes; 1 more would pass its budget of 3000`)
	// An update replaces its entry's bytes: the same size fits.
	e.call(t, both[0], "PUT", entries, map[string]any{"id": ids[0], "content": strings.Repeat("z", 1000),
		"creatorUid": "writer-1", "missionNames": []string{"full"}}, 200, nil)
	e.call(t, both[0], "DELETE", entries+"/"+ids[1], nil, 200, nil)
	e.call(t, both[0], "POST", entries, logPost("a", "full"), 201, nil)
	e.call(t, both[0], "POST", entries, logPost("b", "full"), 201, nil)
	e.refused(t, "full", "POST", entries, logPost("c", "full"), 413, `mission "full" holds 4 log entries, the most it may hold`)

	e.call(t, both[0], "PUT", m+"full/contents?creatorUid=owner-1", map[string]any{"uids": []string{"u1", "u2"}}, 200, nil)
	e.refused(t, "full", "PUT", m+"full/contents?creatorUid=owner-1", map[string]any{"uids": []string{"u3", "u4"}}, 413,
		`mission "full" may hold at most 3 files and uids together`)
	if got := len(e.mission(t, both[0], "full").UIDs); got != 2 {
		t.Fatalf("a refused addition left %d uids, want 2", got)
	}

	// 1 creation, 3 log entries, 1 update, 1 deletion, 2 more entries, 2
	// uids: 10 changes, of which the newest 6 are kept.
	cs := e.changes(t, both[0], "full")
	if len(cs) != 6 || cs[5].ContentUID != "u2" || cs[0].LogEntry == nil {
		t.Fatalf("history: %d records %+v", len(cs), cs)
	}
}

// TestMissionLogRate: one address may write so many log entries and bytes
// a minute; past either it gets 429 with Retry-After and nothing is
// written.
func TestMissionLogRate(t *testing.T) {
	e := start(t, func(c *config.Config) {
		c.MissionLogEntryMaxBytes = 1024
		c.MissionLogEntriesPerMinute = 3
		c.MissionLogBytesPerMinute = 2048
	})
	e.call(t, both[0], "PUT", "/Marti/api/missions/busy?creatorUid=owner-1", nil, 201, nil)
	const entries = "/Marti/api/missions/logs/entries"
	big := strings.Repeat("x", 1024)
	e.call(t, both[0], "POST", entries, logPost(big, "busy"), 201, nil)
	e.call(t, both[0], "POST", entries, logPost(big, "busy"), 201, nil)
	e.refused(t, "busy", "POST", entries, logPost(big, "busy"), 429, "too many mission log entries from this address; try again in")
	e.call(t, both[0], "POST", entries, logPost("", "busy"), 201, nil) // bytes spent, one entry left
	e.refused(t, "busy", "POST", entries, logPost("", "busy"), 429, "too many mission log entries from this address")
	resp := e.do(t, both[0], "POST", entries, logPost("", "busy"))
	if ra, err := strconv.Atoi(resp.Header.Get("Retry-After")); resp.Status != 429 || err != nil || ra < 1 || ra > 60 {
		t.Fatalf("429 without a Retry-After of 1 to 60 s: %d %q", resp.Status, resp.Header.Get("Retry-After"))
	}
	// The budget is the address's, whichever listener it uses.
	if resp := e.do(t, netx.ListenerHTTPS, "POST", entries, logPost("", "busy")); resp.Status != 429 {
		t.Fatalf("over HTTPS from the same address: %d %s", resp.Status, resp.Body)
	}
}

// TestMissionLogFloodDefaults is issue 23's flood under the default
// settings: one anonymous address posting 60 KiB log entries as fast as it
// can gets 1 MiB of them in (17), then 429s, and the mission's log and
// history hold only what was accepted.
func TestMissionLogFloodDefaults(t *testing.T) {
	e := start(t, nil)
	e.call(t, both[0], "PUT", "/Marti/api/missions/grow?creatorUid=owner-1", nil, 201, nil)
	content := strings.Repeat("x", 60<<10)
	accepted, refused := 0, 0
	for range 40 {
		switch resp := e.do(t, both[0], "POST", "/Marti/api/missions/logs/entries", logPost(content, "grow")); resp.Status {
		case 201:
			accepted++
		case 429:
			refused++
		default:
			t.Fatalf("%d %s", resp.Status, resp.Body)
		}
	}
	// 17 fit in a minute's 1 MiB; an 18th only if the test took over 3 s.
	if accepted < 17 || accepted > 18 || refused != 40-accepted {
		t.Fatalf("%d accepted, %d refused", accepted, refused)
	}
	if logs, changes := e.counts(t, "grow"); logs != accepted || changes != accepted+1 {
		t.Fatalf("%d accepted, but the mission holds %d log entries and %d changes", accepted, logs, changes)
	}
}
