package marti_test

import (
	"bytes"
	"os"
	"strings"
	"testing"

	"outpost/appliance/cot"
	"outpost/appliance/excheck"
)

func readTestdata(t *testing.T, name string) []byte {
	t.Helper()
	b, err := os.ReadFile("../excheck/testdata/" + name)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// xmlCall sends an XML request and returns the body, failing unless the
// status is want.
func (e *env) xmlCall(t *testing.T, listener, method, path string, body []byte, want int) []byte {
	t.Helper()
	var b any
	if body != nil {
		b = body
	}
	resp := e.do(t, listener, method, path, b, "Content-Type", "application/xml")
	if resp.Status != want {
		t.Fatalf("%s %s %s: %d %s, want %d", listener, method, path, resp.Status, resp.Body, want)
	}
	if want == 200 && strings.HasPrefix(string(resp.Body), "<") && !strings.HasPrefix(resp.Header.Get("Content-Type"), "application/xml") {
		t.Fatalf("%s %s: Content-Type %q", method, path, resp.Header.Get("Content-Type"))
	}
	return resp.Body
}

// TestExCheckRoundTrip: ATAK's element-style template is stored as sent,
// a checklist started from it gets a mission that CoT clients subscribe
// to, a task marked complete reaches the subscribers (TCP and TLS) as
// ChecklistUpdateNotification and not the others, and the checklist then
// shows the task complete with its completion time and every element the
// client sent. The checklist is linked into a mission as external data.
// On both listeners.
func TestExCheckRoundTrip(t *testing.T) {
	e := start(t, nil)
	c := dialMissionClients(t, e)
	tpl := readTestdata(t, "atak-template.xml")
	const tplUID = "4f6a2c55-1d3e-4b8a-9d61-2a7e0c3b9f10"
	for _, l := range both {
		t.Run(l, func(t *testing.T) {
			if got := e.xmlCall(t, l, "POST", "/Marti/api/excheck/template?clientUid=ANDROID-1", tpl, 200); string(got) != "done" {
				t.Fatalf("template: %q", got)
			}
			if got := e.xmlCall(t, l, "GET", "/Marti/api/excheck/template/"+tplUID, nil, 200); !bytes.Equal(got, tpl) {
				t.Fatalf("the template did not come back as uploaded:\n%s", got)
			}
			// The templates are the contents of exchecktemplates (what ATAK's
			// ExCheck lists), downloadable by hash; the mission is not listed.
			tm := e.mission(t, l, "exchecktemplates")
			if tm.Tool != "ExCheck" || len(tm.Contents) == 0 || tm.Contents[0].Data.Hash != sha(tpl) || tm.Contents[0].Data.Name != "CASEVAC" {
				t.Fatalf("exchecktemplates: %+v", tm)
			}
			if dl := e.do(t, l, "GET", "/Marti/sync/content?hash="+sha(tpl), nil); dl.Status != 200 || !bytes.Equal(dl.Body, tpl) {
				t.Fatalf("template download: %d %s", dl.Status, dl.Body)
			}
			var list []missionOut
			e.call(t, l, "GET", "/Marti/api/missions", nil, 200, &list)
			for _, m := range list {
				if m.Name == "exchecktemplates" {
					t.Fatal("exchecktemplates in the mission list")
				}
			}
			e.call(t, l, "PUT", "/Marti/api/missions/exchecktemplates/subscription?uid=sub-tcp", nil, 201, nil)
			spec := readTestdata(t, "spec-template.xml")
			e.xmlCall(t, l, "POST", "/Marti/api/excheck/template?clientUid=WINTAK-1", spec, 200)
			expect(t, "a new template announced", missionNotice("t-x-m-c", "exchecktemplates", "<hash>"+sha(spec)+"</hash>", "<name>Pre-flight</name>"), c.subTCP)
			started := e.xmlCall(t, l, "POST", "/Marti/api/excheck/"+tplUID+"/start?name=Run+"+l+"&description=drill&clientUid=ANDROID-1&callsign=HOPE", nil, 200)
			d, err := excheck.ParseChecklist(started)
			if err != nil {
				t.Fatalf("started checklist: %v\n%s", err, started)
			}
			uid := d.UID()
			if d.Name() != "Run "+l || d.Description() != "drill" || len(d.Tasks()) != 2 || excheck.TaskStatus(d.Tasks()[0]) != "Pending" {
				t.Fatalf("started checklist:\n%s", started)
			}
			expect(t, "the checklist's mission created", missionNotice("t-x-m-n", uid, `tool="ExCheck"`), c.subTCP, c.subTLS, c.other)
			for _, sub := range []string{"sub-tcp", "sub-tls"} {
				e.call(t, via(l, sub), "PUT", "/Marti/api/missions/"+uid+"/subscription?uid="+sub, nil, 201, nil)
			}
			if m := e.mission(t, l, uid); m.Tool != "ExCheck" || m.CreatorUID != "ANDROID-1" {
				t.Fatalf("checklist mission: %+v", m)
			}
			active := e.xmlCall(t, l, "GET", "/Marti/api/excheck/checklist/active", nil, 200)
			if !strings.Contains(string(active), "<checklists>") || !strings.Contains(string(active), "<uid>"+uid+"</uid>") {
				t.Fatalf("active:\n%s", active)
			}

			task := excheck.TaskUID(d.Tasks()[1])
			taskPath := "/Marti/api/excheck/checklist/" + uid + "/task/" + task
			if got := e.xmlCall(t, l, "GET", taskPath, nil, 200); !strings.Contains(string(got), "<status>Pending</status>") {
				t.Fatalf("task: %s", got)
			}
			update := `<checklistTask><lineBreak>false</lineBreak><bgColor>#FFFFFF</bgColor><number>2</number><uid>` + task +
				`</uid><value>2</value><value>Radio frequency, call sign &amp; suffix</value><status>Complete</status>` +
				`<completeBy>HOPE</completeBy><notes>38.90 MHz</notes><myExtra a="1">keep me</myExtra></checklistTask>`
			got := e.xmlCall(t, l, "PUT", taskPath+"?clientUid=ANDROID-2", []byte(update), 200)
			stored, err := excheck.ParseTask(got)
			if err != nil || excheck.TaskCompletion(stored) == "" || !excheck.IsComplete(stored) {
				t.Fatalf("updated task: %v\n%s", err, got)
			}
			ev := expect(t, "ChecklistUpdateNotification", missionNotice("t-x-m-c", uid, `tool="ExCheck"`, `authorUid="ANDROID-2"`,
				"<uid>"+task+"</uid>", "<filename>"+task+".xml</filename>", "<keywords>Task</keywords>", "&lt;status&gt;Complete&lt;/status&gt;"), c.subTCP, c.subTLS)
			if ev.How != "h-g-i-g-o" || ev.Stale.Sub(ev.Time) != 20e9 {
				t.Fatalf("notification header: how %q stale %v", ev.How, ev.Stale.Sub(ev.Time))
			}
			fence(t, c.sender, func(ev *cot.Event) bool { return ev.Type == "t-x-m-c" }, c.other)

			after, err := excheck.ParseChecklist(e.xmlCall(t, l, "GET", "/Marti/api/excheck/checklist/"+uid, nil, 200))
			if err != nil {
				t.Fatal(err)
			}
			done := after.Task(task)
			if !excheck.IsComplete(done) || excheck.TaskCompletion(done) != excheck.TaskCompletion(stored) ||
				done.Child("myExtra") == nil || done.Child("myExtra").Content() != "keep me" || excheck.IsComplete(after.Tasks()[0]) {
				t.Fatalf("checklist after the update:\n%s", after.Bytes())
			}
			if after.Root.Child("checklistColumns") == nil || after.Root.Child("checklistDetails").Child("missions") == nil {
				t.Fatalf("the checklist lost elements:\n%s", after.Bytes())
			}

			// Linked into a mission as external data.
			board := "board-" + l
			e.call(t, l, "PUT", "/Marti/api/missions/"+board+"?creatorUid=ANDROID-1", nil, 201, nil)
			e.call(t, l, "PUT", "/Marti/api/missions/"+board+"/subscription?uid=sub-tcp", nil, 201, nil)
			var x struct{ UID, Tool, URLData string }
			e.call(t, l, "PUT", "/Marti/api/excheck/checklist/"+uid+"/mission/"+board+"?clientUid=ANDROID-1", nil, 200, &x)
			if x.UID != uid || x.Tool != "ExCheck" || !strings.HasSuffix(x.URLData, "/Marti/api/excheck/checklist/"+uid) {
				t.Fatalf("external data: %+v", x)
			}
			expect(t, "MissionExternalDataCreatedNotification", missionNotice("t-x-m-c-e", board, "<uid>"+uid+"</uid>", "<tool>ExCheck</tool>"), c.subTCP)
			if m := e.mission(t, l, board); len(m.ExternalData) != 1 || m.ExternalData[0].UID != uid {
				t.Fatalf("board: %+v", m)
			}
		})
	}
}

// TestExCheckTemplatesAttributeStyle: the contract's attribute-style
// template and its task routes (GET, POST, PUT, DELETE), a checklist
// started from it, a task completed in that style, and bad input on every
// ExCheck route (nothing stored).
func TestExCheckTemplatesAttributeStyle(t *testing.T) {
	e := start(t, nil)
	tpl := readTestdata(t, "spec-template.xml")
	const base = "/Marti/api/excheck/"
	for _, l := range both {
		e.xmlCall(t, l, "POST", base+"template?creatorUid=WINTAK-1", tpl, 200)
		if got := e.xmlCall(t, l, "GET", base+"template/tpl-preflight/task/t1", nil, 200); !strings.Contains(string(got), `<checklistTask uid="t1"><description>Batteries charged</description>`) {
			t.Fatalf("template task: %s", got)
		}
		e.xmlCall(t, l, "POST", base+"template/tpl-preflight/task/t3", []byte(`<checklistTask><description>Camera</description></checklistTask>`), 200)
		e.xmlCall(t, l, "PUT", base+"template/tpl-preflight/task/t3", []byte(`<checklistTask><description>Camera and gimbal</description></checklistTask>`), 200)
		if got := e.xmlCall(t, l, "GET", base+"template/tpl-preflight", nil, 200); !strings.Contains(string(got), "Camera and gimbal") || strings.Count(string(got), "<checklistTask uid=") != 3 {
			t.Fatalf("template after task changes: %s", got)
		}
		e.xmlCall(t, l, "PUT", base+"template/tpl-preflight/task/t9", []byte(`<checklistTask><description>x</description></checklistTask>`), 404)
		if got := e.xmlCall(t, l, "DELETE", base+"template/tpl-preflight/task/t3", nil, 200); string(got) != "done" {
			t.Fatalf("delete: %q", got)
		}
		e.xmlCall(t, l, "DELETE", base+"template/tpl-preflight/task/t3", nil, 404)
		e.xmlCall(t, l, "GET", base+"template/tpl-preflight/task/t3", nil, 404)

		d, err := excheck.ParseChecklist(e.xmlCall(t, l, "POST", base+"tpl-preflight/start?name=Morning", nil, 200))
		if err != nil || d.TemplateUID() != "tpl-preflight" || !d.AttrStyle() {
			t.Fatalf("started: %v %s", err, d.Bytes())
		}
		task := excheck.TaskUID(d.Tasks()[0])
		got := e.xmlCall(t, l, "PUT", base+"checklist/"+d.UID()+"/task/"+task,
			[]byte(`<checklistTask uid="`+task+`" status="complete"><description>Batteries charged</description></checklistTask>`), 200)
		if !strings.Contains(string(got), `status="complete"`) || !strings.Contains(string(got), "<completionTime>") {
			t.Fatalf("attribute-style update: %s", got)
		}
		if got := e.xmlCall(t, l, "GET", base+"checklist/"+d.UID()+"/task/"+task, nil, 200); !strings.Contains(string(got), "<completionTime>") {
			t.Fatalf("task after update: %s", got)
		}
	}

	before := e.xmlCall(t, both[0], "GET", base+"checklist/active", nil, 200)
	big := append([]byte(`<checklistTemplate uid="big" name="b"><checklistDetails><description>`), bytes.Repeat([]byte("x"), excheck.MaxDocumentBytes)...)
	cases := []struct {
		name, method, path string
		body               []byte
		status             int
		msg                string
	}{
		{"malformed template", "POST", "template", []byte("<checklistTemplate"), 400, "templatedata"},
		{"wrong root", "POST", "template", []byte(`<template uid="a" name="n"/>`), 400, "root element"},
		{"doctype", "POST", "template", []byte(`<!DOCTYPE x [<!ENTITY a "aaaa">]><checklistTemplate uid="a" name="n"/>`), 400, "DOCTYPE"},
		{"empty template", "POST", "template", nil, 400, "templatedata: required"},
		{"oversized template", "POST", "template", big, 413, "templatedata: larger than"},
		{"unknown template", "GET", "template/nope", nil, 404, `no template "nope"`},
		{"bad template uid", "GET", "template/a%20b", nil, 400, "templateUid"},
		{"unknown template task", "GET", "template/tpl-preflight/task/nope", nil, 404, "no task"},
		{"task on unknown template", "POST", "template/nope/task/t1", []byte(`<checklistTask/>`), 404, `no template "nope"`},
		{"malformed task", "POST", "template/tpl-preflight/task/t5", []byte(`<checklistTask>`), 400, "taskdata"},
		{"start unknown template", "POST", "nope/start?name=x", nil, 404, "no template"},
		{"start without name", "POST", "tpl-preflight/start", nil, 400, "name: required"},
		{"unknown checklist", "GET", "checklist/nope", nil, 404, `no checklist "nope"`},
		{"unknown checklist task", "GET", "checklist/nope/task/t1", nil, 404, "no checklist"},
		{"update on unknown checklist", "PUT", "checklist/nope/task/t1", []byte(`<checklistTask uid="t1" status="complete"/>`), 404, `no checklist "nope"`},
		{"update bad status", "PUT", "checklist/nope/task/t1", []byte(`<checklistTask uid="t1" status="finished"/>`), 400, "status"},
		{"update without body", "PUT", "checklist/nope/task/t1", nil, 400, "checklisttaskdata: required"},
		{"checklist to unknown checklist", "PUT", "checklist/nope/mission/m", nil, 404, "no checklist"},
	}
	for _, l := range both {
		for _, c := range cases {
			resp := e.do(t, l, c.method, "/Marti/api/excheck/"+c.path, c.body, "Content-Type", "application/xml")
			var msg struct{ Message string }
			if resp.Status != c.status {
				t.Errorf("%s %s: %d %s, want %d", l, c.name, resp.Status, resp.Body, c.status)
				continue
			}
			resp.JSON(t, &msg)
			if !strings.Contains(msg.Message, c.msg) {
				t.Errorf("%s %s: message %q, want %q", l, c.name, msg.Message, c.msg)
			}
		}
	}
	if after := e.xmlCall(t, both[0], "GET", base+"checklist/active", nil, 200); !bytes.Equal(before, after) {
		t.Fatal("bad input changed the checklists")
	}
	// The checklist's mission roles apply to task updates: read-only
	// members may not tick tasks.
	ro, _ := excheck.ParseChecklist(e.xmlCall(t, both[0], "POST", base+"tpl-preflight/start?name=Noon&clientUid=LEAD", nil, 200))
	e.call(t, both[0], "PUT", "/Marti/api/missions/"+ro.UID()+"?creatorUid=LEAD&defaultRole=MISSION_READONLY_SUBSCRIBER", nil, 200, nil)
	roTask := excheck.TaskUID(ro.Tasks()[0])
	body := []byte(`<checklistTask uid="` + roTask + `" status="complete"><description>Batteries charged</description></checklistTask>`)
	e.xmlCall(t, both[0], "PUT", base+"checklist/"+ro.UID()+"/task/"+roTask+"?clientUid=READER", body, 403)
	e.xmlCall(t, both[0], "PUT", base+"checklist/"+ro.UID()+"/task/"+roTask+"?clientUid=LEAD", body, 200)

	// A checklist linked into an unknown mission: 404.
	d, _ := excheck.ParseChecklist(e.xmlCall(t, both[0], "POST", base+"tpl-preflight/start?name=Evening", nil, 200))
	e.call(t, both[0], "PUT", base+"checklist/"+d.UID()+"/mission/nope", nil, 404, nil)
}
