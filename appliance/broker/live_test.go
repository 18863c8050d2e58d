package broker

import (
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"
)

// LiveEvents lists each session's latest position report (with the groups
// it went to and when it came) and the retained events, all of them or
// those of one uid; not a session's other events, not a closed session's.
func TestLiveEvents(t *testing.T) {
	now := t0
	b := newBroker(t, Options{Now: func() time.Time { return now }})
	r := b.Join(SessionInfo{In: red, Out: red})
	bl := b.Join(SessionInfo{In: blue, Out: blue})
	b.Publish(sa("R", "RITA", "a-f-G"), r)
	now = now.Add(time.Second)
	b.Publish(sa("R", "RITA", "a-f-G-U"), r) // her latest replaces the first
	b.Publish(chat("R-chat"), r)             // not a position report
	b.Publish(sa("B", "BOB", "a-f-G"), bl)
	now = now.Add(time.Second)
	b.Retain("geo:G", sa("G", "MARKER", "a-u-G"), 0, AllGroups)
	describe := func(uid string) string {
		var out []string
		for _, l := range b.LiveEvents(uid) {
			if !strings.Contains(string(l.XML), `uid="`+l.Event.UID+`"`) {
				t.Errorf("%s: its XML is another event's: %s", l.Event.UID, l.XML)
			}
			out = append(out, fmt.Sprintf("%s %s %b %s", l.Event.UID, l.Event.Type, l.Groups, l.At.Sub(t0)))
		}
		slices.Sort(out)
		return strings.Join(out, ", ")
	}
	all := fmt.Sprintf("B a-f-G 10000 1s, G a-u-G %b 2s, R a-f-G-U 1000 1s", AllGroups)
	if got := describe(""); got != all {
		t.Errorf("every live event: %s, want %s", got, all)
	}
	if got := describe("R"); got != "R a-f-G-U 1000 1s" {
		t.Errorf("R's: %s", got)
	}
	if got := describe("R-chat"); got != "" {
		t.Errorf("a chat is no position report: %s", got)
	}
	bl.Close(ReasonClientClosed)
	b.Release("geo:G")
	if got := describe(""); got != "R a-f-G-U 1000 1s" {
		t.Errorf("after bob left and the marker was released: %s", got)
	}
}
