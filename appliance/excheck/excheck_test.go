package excheck

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"
)

func readTemplate(t testing.TB, name string) *Doc {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("testdata", name))
	if err != nil {
		t.Fatal(err)
	}
	d, err := ParseTemplate(b)
	if err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	return d
}

func TestParseRefusals(t *testing.T) {
	deep := strings.Repeat("<a>", maxDepth+1) + strings.Repeat("</a>", maxDepth+1)
	cases := []struct {
		name, doc, want string
	}{
		{"empty", "", "no root element"},
		{"not XML", "hello", "text outside the root"},
		{"unclosed", "<checklist><checklistDetails>", "not closed"},
		{"mismatched", "<checklist></checklistx>", "unexpected </checklistx>"},
		{"two roots", "<checklist/><checklist/>", "more than one root"},
		{"doctype", `<!DOCTYPE x [<!ENTITY a "aaaa">]><checklist/>`, "DOCTYPE"},
		{"undefined entity", "<checklist>&a;</checklist>", "malformed XML"},
		{"too deep", deep, "nested deeper"},
		{"latin-1", `<?xml version="1.0" encoding="ISO-8859-1"?><checklist/>`, "malformed XML"},
		{"bad UTF-8", "<checklist>\xff</checklist>", "not valid UTF-8"},
		{"too large", "<checklist>" + strings.Repeat("x", MaxDocumentBytes) + "</checklist>", "larger than"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			_, err := Parse([]byte(c.doc))
			if !errors.Is(err, ErrInvalid) || !strings.Contains(err.Error(), c.want) {
				t.Fatalf("Parse: %v, want ErrInvalid containing %q", err, c.want)
			}
		})
	}
	// Too many nodes, each small.
	if _, err := Parse([]byte("<a>" + strings.Repeat("<b/>", maxNodes) + "</a>")); !errors.Is(err, ErrInvalid) {
		t.Fatalf("node cap: %v", err)
	}
}

func TestTemplateRules(t *testing.T) {
	cases := []struct {
		name, doc, want string
	}{
		{"wrong root", `<template uid="a" name="n"/>`, "root element must be"},
		{"no name", `<checklistTemplate uid="a"/>`, "name: required"},
		{"uid with slash", `<checklistTemplate uid="a/b" name="n"/>`, "uid"},
		{"bad status", `<checklist><checklistDetails><name>n</name><uid>u</uid></checklistDetails><checklistTasks><checklistTask><uid>t</uid><status>Done</status></checklistTask></checklistTasks></checklist>`, "status"},
		{"bad number", `<checklist><checklistDetails><name>n</name><uid>u</uid></checklistDetails><checklistTasks><checklistTask><uid>t</uid><number>x</number></checklistTask></checklistTasks></checklist>`, "number"},
		{"bad lineBreak", `<checklist><checklistDetails><name>n</name><uid>u</uid></checklistDetails><checklistTasks><checklistTask><uid>t</uid><lineBreak>yes</lineBreak></checklistTask></checklistTasks></checklist>`, "lineBreak"},
		{"bad column type", `<checklist><checklistDetails><name>n</name><uid>u</uid></checklistDetails><checklistColumns><checklistColumn><columnType>Text</columnType></checklistColumn></checklistColumns></checklist>`, "columnType"},
		{"duplicate task", `<checklistTemplate uid="a" name="n"><checklistTasks><checklistTask uid="t"/><checklistTask uid="t"/></checklistTasks></checklistTemplate>`, "appears twice"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			_, err := ParseTemplate([]byte(c.doc))
			if !errors.Is(err, ErrInvalid) || !strings.Contains(err.Error(), c.want) {
				t.Fatalf("ParseTemplate: %v, want ErrInvalid containing %q", err, c.want)
			}
		})
	}
	// A template without uids gets them, in its own style.
	d, err := ParseTemplate([]byte(`<checklistTemplate name="n"><checklistTasks><checklistTask><description>x</description></checklistTask></checklistTasks></checklistTemplate>`))
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := d.Root.Attr("uid"); !ok || CheckUID("uid", d.UID()) != nil {
		t.Fatalf("template uid not given as an attribute: %s", d.Bytes())
	}
	if _, ok := d.Tasks()[0].Attr("uid"); !ok {
		t.Fatalf("task uid not given as an attribute: %s", d.Bytes())
	}
}

// strip removes whitespace-only text so two trees can be compared.
func strip(n *Node) *Node {
	c := *n
	c.Children = nil
	for _, k := range n.Children {
		if k.Kind == Text && strings.TrimSpace(k.Text) == "" {
			continue
		}
		c.Children = append(c.Children, strip(k))
	}
	return &c
}

// TestRoundTrip: a document written back reads as the same tree, unknown
// elements, prefixes, attributes, comments and escapes included.
func TestRoundTrip(t *testing.T) {
	src := `<?xml version="1.0"?>
<checklist xmlns:u="urn:unit" extra="1 &lt; 2 &quot;x&quot;">
  <!-- a note -->
  <checklistDetails><name>N &amp; M</name><uid>u1</uid><u:local a="b">text<![CDATA[ <raw> ]]>tail</u:local></checklistDetails>
  <checklistTasks><checklistTask><uid>t1</uid><value>multi
line</value><x-unit-note kind="local">keep me</x-unit-note></checklistTask></checklistTasks>
</checklist>`
	a, err := Parse([]byte(src))
	if err != nil {
		t.Fatal(err)
	}
	out := Document(a)
	b, err := Parse(out)
	if err != nil {
		t.Fatalf("written document does not parse: %v\n%s", err, out)
	}
	if !reflect.DeepEqual(strip(a), strip(b)) {
		t.Fatalf("round trip changed the document:\n%s", out)
	}
	for _, want := range []string{`<u:local a="b">`, "keep me", "<!-- a note -->", `extra="1 &lt; 2 &quot;x&quot;"`, "multi\nline", "&lt;raw&gt;"} {
		if !bytes.Contains(out, []byte(want)) {
			t.Errorf("written document lacks %q:\n%s", want, out)
		}
	}
}

func TestStartElementStyle(t *testing.T) {
	tpl := readTemplate(t, "atak-template.xml")
	start := time.Date(2026, 11, 22, 10, 0, 0, 123e6, time.UTC)
	d := Start(tpl, StartParams{UID: "c-1", Name: "CASEVAC 1", Description: "north LZ", StartTime: start,
		CreatorUID: "ANDROID-2", Callsign: "JAKAL"})
	if d.UID() != "c-1" || d.Name() != "CASEVAC 1" || d.Description() != "north LZ" || d.StartTime() != "2026-11-22T10:00:00.123Z" || d.CreatorUID() != "ANDROID-2" {
		t.Fatalf("details: %s", d.Bytes())
	}
	det := d.Root.Child("checklistDetails")
	if det.Child("templateName").Content() != "CASEVAC" || det.Child("creatorCallsign").Content() != "JAKAL" {
		t.Fatalf("template name or callsign: %s", d.Bytes())
	}
	if _, ok := d.Root.Attr("uid"); ok {
		t.Fatal("element-style checklist got a uid attribute")
	}
	tplTasks := tpl.Tasks()
	for i, task := range d.Tasks() {
		if TaskUID(task) == TaskUID(tplTasks[i]) || CheckUID("task", TaskUID(task)) != nil {
			t.Fatalf("task %d keeps the template's uid or has a bad one: %q", i, TaskUID(task))
		}
		if TaskStatus(task) != "Pending" || task.Child("status") == nil {
			t.Fatalf("task %d status: %s", i, Append(nil, task))
		}
	}
	// The template itself is unchanged.
	if tpl.UID() != "4f6a2c55-1d3e-4b8a-9d61-2a7e0c3b9f10" || TaskStatus(tpl.Tasks()[0]) != "" {
		t.Fatal("Start changed the template")
	}
	if err := loadSchema(t, "excheck.xsd").validateAs(d.Root, "checklist"); err != nil {
		t.Fatalf("started checklist is not valid for excheck.xsd: %v\n%s", err, d.Bytes())
	}
	// It reads back as a checklist.
	if _, err := ParseChecklist(d.Bytes()); err != nil {
		t.Fatal(err)
	}
}

func TestStartAttributeStyle(t *testing.T) {
	tpl := readTemplate(t, "spec-template.xml")
	d := Start(tpl, StartParams{UID: "c-2", Name: "Morning", Description: "day 1", StartTime: time.Unix(0, 0), CreatorUID: "W-1"})
	if !d.Root.Is("checklist") {
		t.Fatalf("root %q", d.Root.Name)
	}
	for attr, want := range map[string]string{"uid": "c-2", "name": "Morning", "templateUid": "tpl-preflight"} {
		if v, _ := d.Root.Attr(attr); v != want {
			t.Fatalf("root %s = %q, want %q: %s", attr, v, want, d.Bytes())
		}
	}
	if d.Description() != "day 1" || d.StartTime() != "1970-01-01T00:00:00.000Z" {
		t.Fatalf("details: %s", d.Bytes())
	}
	for _, task := range d.Tasks() {
		if s, ok := task.Attr("status"); !ok || s != StatusPending {
			t.Fatalf("task status: %s", Append(nil, task))
		}
		if _, ok := task.Attr("uid"); !ok || TaskDescription(task) == "" {
			t.Fatalf("task: %s", Append(nil, task))
		}
	}
}

func TestTaskUpdate(t *testing.T) {
	now := time.Date(2026, 11, 22, 11, 0, 0, 0, time.UTC)
	d := Start(readTemplate(t, "atak-template.xml"), StartParams{UID: "c-1", Name: "n", StartTime: now})
	uid := TaskUID(d.Tasks()[1])

	// ATAK's element style, complete without a completeDTG: the server adds it.
	task, err := ParseTask([]byte(`<checklistTask><lineBreak>false</lineBreak><bgColor>#FFFFFF</bgColor><number>2</number><uid>` + uid +
		`</uid><value>2</value><value>Radio frequency</value><status>Complete</status><completeBy>JAKAL</completeBy><notes>on 38.90</notes></checklistTask>`))
	if err != nil {
		t.Fatal(err)
	}
	if !Completed(task, now) || TaskCompletion(task) != "2026-11-22T11:00:00.000Z" {
		t.Fatalf("completion: %s", Append(nil, task))
	}
	if d.PutTask(task) {
		t.Fatal("an existing task was added")
	}
	got := d.Task(uid)
	if !IsComplete(got) || got.Child("notes").Content() != "on 38.90" {
		t.Fatalf("task after update: %s", Append(nil, got))
	}
	if err := loadSchema(t, "excheck.xsd").validateAs(d.Root, "checklist"); err != nil {
		t.Fatalf("updated checklist is not valid for excheck.xsd: %v\n%s", err, d.Bytes())
	}
	// A completion time the client sent is kept.
	task, _ = ParseTask([]byte(`<checklistTask><uid>x</uid><status>Complete</status><completeDTG>2026-01-01T00:00:00Z</completeDTG></checklistTask>`))
	if Completed(task, now); TaskCompletion(task) != "2026-01-01T00:00:00Z" {
		t.Fatalf("client completion replaced: %s", Append(nil, task))
	}

	// The contract's style: completionTime as a child.
	task, err = ParseTask([]byte(`<checklistTask uid="t1" status="complete"><description>Batteries</description></checklistTask>`))
	if err != nil {
		t.Fatal(err)
	}
	Completed(task, now)
	if task.Child("completionTime").Content() != "2026-11-22T11:00:00.000Z" {
		t.Fatalf("contract-style completion: %s", Append(nil, task))
	}
	// A pending task is not given one.
	task, _ = ParseTask([]byte(`<checklistTask uid="t1" status="pending"/>`))
	if Completed(task, now) || TaskCompletion(task) != "" {
		t.Fatal("pending task completed")
	}
	// Refusals.
	for _, bad := range []string{`<task uid="t"/>`, `<checklistTask uid="t" status="finished"/>`, `<checklistTask uid="a b"/>`} {
		if _, err := ParseTask([]byte(bad)); !errors.Is(err, ErrInvalid) {
			t.Errorf("ParseTask(%s): %v", bad, err)
		}
	}
	// Delete and add.
	if !d.DeleteTask(uid) || d.Task(uid) != nil || d.DeleteTask(uid) {
		t.Fatal("delete")
	}
	task, _ = ParseTask([]byte(`<checklistTask><uid>new-1</uid><value>x</value></checklistTask>`))
	if !d.PutTask(task) || d.Task("new-1") == nil {
		t.Fatal("add")
	}
}

func FuzzParse(f *testing.F) {
	for _, name := range []string{"atak-template.xml", "spec-template.xml"} {
		b, err := os.ReadFile(filepath.Join("testdata", name))
		if err != nil {
			f.Fatal(err)
		}
		f.Add(b)
	}
	f.Add([]byte(`<checklistTask uid="t" status="complete"><description>&amp;</description></checklistTask>`))
	f.Fuzz(func(t *testing.T, b []byte) {
		n, err := Parse(b)
		if err != nil {
			if !errors.Is(err, ErrInvalid) {
				t.Fatalf("error not ErrInvalid: %v", err)
			}
			return
		}
		out := Document(n)
		m, err := Parse(out)
		if err != nil {
			t.Fatalf("written document does not parse: %v\n%q", err, out)
		}
		if !reflect.DeepEqual(strip(n), strip(m)) {
			t.Fatalf("round trip changed the tree:\n%q\n%q", b, out)
		}
		ParseTemplate(b)
		ParseTask(b)
	})
}
