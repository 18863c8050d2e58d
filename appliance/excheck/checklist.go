package excheck

// Templates, checklists and tasks (api.md §2.14). A template is a document
// whose root is checklistTemplate (the contract) or checklist (ATAK keeps
// templates as checklists); a checklist is started from a template; a task
// is a checklistTask element. The rules checked are those of the ExCheck
// schemas that matter to the server and hold in both styles: one root of
// the right name, uids that can name a mission and a URL path, task uids
// unique within a document, a status from the schemas' list (any case:
// the contract writes pending and complete, ATAK Pending and Complete),
// whole numbers where the schemas want integers, true or false where they
// want booleans, and a known column type.

import (
	"strconv"
	"strings"
	"time"

	"outpost/appliance/cot"
	"outpost/appliance/logx"

	"github.com/google/uuid"
)

// Root and container element names.
const (
	rootTemplate  = "checklistTemplate"
	rootChecklist = "checklist"
	detailsName   = "checklistDetails"
	tasksName     = "checklistTasks"
	taskName      = "checklistTask"
)

// Task status values: the contract's spelling; ATAK capitalises them.
const (
	StatusPending  = "pending"
	StatusComplete = "complete"
)

// statuses are the schemas' task statuses, lower-cased.
var statuses = map[string]bool{"pending": true, "complete": true, "complete (late)": true, "late": true}

var columnTypes = map[string]bool{"ShortString": true, "LongString": true, "Integer": true, "ActualTime": true, "RelativeTime": true}

// Doc is a template or a checklist.
type Doc struct {
	Root *Node
}

// Bytes writes the document with its XML declaration.
func (d *Doc) Bytes() []byte { return Document(d.Root) }

// AttrStyle reports whether the document is in the contract's attribute
// style (a uid attribute on the root, or a checklistTemplate root).
func (d *Doc) AttrStyle() bool {
	_, ok := d.Root.Attr("uid")
	return ok || d.Root.Is(rootTemplate)
}

func (d *Doc) details() *Node {
	if c := d.Root.Child(detailsName); c != nil {
		return c
	}
	c := &Node{Kind: Element, Name: detailsName}
	d.Root.Children = append([]*Node{c}, d.Root.Children...)
	return c
}

// rootValue reads a value the contract puts on the root and ATAK in
// checklistDetails.
func (d *Doc) rootValue(local string) string {
	if v, ok := d.Root.Attr(local); ok && strings.TrimSpace(v) != "" {
		return strings.TrimSpace(v)
	}
	return value(d.Root.Child(detailsName), local)
}

func (d *Doc) setRootValue(local, v string) {
	if _, ok := d.Root.Attr(local); ok || d.AttrStyle() {
		d.Root.SetAttr(local, v)
		return
	}
	setValue(d.details(), local, v, false, detailsOrder)
}

// UID, Name and TemplateUID are read from the root or checklistDetails.
func (d *Doc) UID() string         { return d.rootValue("uid") }
func (d *Doc) Name() string        { return d.rootValue("name") }
func (d *Doc) TemplateUID() string { return d.rootValue("templateUid") }

// Description, StartTime and CreatorUID are read from checklistDetails.
func (d *Doc) Description() string { return value(d.Root.Child(detailsName), "description") }
func (d *Doc) StartTime() string   { return value(d.Root.Child(detailsName), "startTime") }
func (d *Doc) CreatorUID() string  { return value(d.Root.Child(detailsName), "creatorUid") }

// Tasks returns the checklistTask elements, in order.
func (d *Doc) Tasks() []*Node { return d.Root.Child(tasksName).Elements(taskName) }

// Task returns the task with the uid, or nil.
func (d *Doc) Task(uid string) *Node {
	for _, t := range d.Tasks() {
		if TaskUID(t) == uid {
			return t
		}
	}
	return nil
}

// PutTask replaces the task with t's uid by t, or adds t after the last
// task; it reports whether t was added.
func (d *Doc) PutTask(t *Node) (added bool) {
	if old := d.Task(TaskUID(t)); old != nil {
		d.Root.Child(tasksName).Replace(old, t)
		return false
	}
	tasks := d.Root.Child(tasksName)
	if tasks == nil {
		tasks = &Node{Kind: Element, Name: tasksName}
		d.Root.Children = append(d.Root.Children, tasks)
	}
	tasks.Children = append(tasks.Children, t)
	return true
}

// DeleteTask removes the task with the uid and reports whether it was there.
func (d *Doc) DeleteTask(uid string) bool {
	t := d.Task(uid)
	return t != nil && d.Root.Child(tasksName).Remove(t)
}

// TaskUID, TaskStatus and TaskDescription read a task in either style
// (the description of an ATAK task is its first value).
func TaskUID(t *Node) string    { return value(t, "uid") }
func TaskStatus(t *Node) string { return value(t, "status") }
func TaskDescription(t *Node) string {
	if v := value(t, "description"); v != "" {
		return v
	}
	return t.Child("value").Content()
}

// TaskCompletion is the task's completion time (completionTime, or ATAK's
// completeDTG), "" when it has none.
func TaskCompletion(t *Node) string {
	if v := value(t, "completionTime"); v != "" {
		return v
	}
	return value(t, "completeDTG")
}

// IsComplete reports whether the task's status is complete (or complete
// late).
func IsComplete(t *Node) bool {
	s := strings.ToLower(TaskStatus(t))
	return s == "complete" || s == "complete (late)"
}

// taskAttrStyle reports whether the task is in the contract's style.
func taskAttrStyle(t *Node) bool {
	_, u := t.Attr("uid")
	_, s := t.Attr("status")
	return u || s
}

// Completed gives a complete task its completion time when it has none
// (completionTime in the contract's style, completeDTG in ATAK's) and
// reports whether the task is complete.
func Completed(t *Node, now time.Time) bool {
	if !IsComplete(t) {
		return false
	}
	if TaskCompletion(t) == "" {
		name := "completeDTG"
		if taskAttrStyle(t) || t.Child("description") != nil {
			name = "completionTime"
		}
		setValue(t, name, cot.FormatTime(now), false, taskOrder)
	}
	return true
}

// ParseTemplate reads a template. A template without a uid, or with tasks
// without one, gets random ones.
func ParseTemplate(b []byte) (*Doc, error) {
	root, err := Parse(b)
	if err != nil {
		return nil, err
	}
	if !root.Is(rootTemplate) && !root.Is(rootChecklist) {
		return nil, invalid("the root element must be <%s> or <%s>, not <%s>", rootTemplate, rootChecklist, root.Name)
	}
	d := &Doc{Root: root}
	if d.UID() == "" {
		d.setRootValue("uid", uuid.NewString())
	}
	if err := d.check(); err != nil {
		return nil, err
	}
	if d.Name() == "" {
		return nil, invalid("name: required (the template's name)")
	}
	return d, nil
}

// ParseChecklist reads a stored or uploaded checklist.
func ParseChecklist(b []byte) (*Doc, error) {
	root, err := Parse(b)
	if err != nil {
		return nil, err
	}
	if !root.Is(rootChecklist) {
		return nil, invalid("the root element must be <%s>, not <%s>", rootChecklist, root.Name)
	}
	d := &Doc{Root: root}
	return d, d.check()
}

// ParseTask reads one task (a checklistTask element). A task without a
// uid is refused: the caller names the task in the path.
func ParseTask(b []byte) (*Node, error) {
	root, err := Parse(b)
	if err != nil {
		return nil, err
	}
	if !root.Is(taskName) {
		return nil, invalid("the root element must be <%s>, not <%s>", taskName, root.Name)
	}
	if err := checkTask(root, false, false); err != nil {
		return nil, err
	}
	return root, nil
}

// SetTaskUID writes the uid into a task, where the task keeps it.
func SetTaskUID(t *Node, uid string) {
	setValue(t, "uid", uid, taskAttrStyle(t), taskOrder)
}

// check applies the rules of the file comment to a whole document, giving
// tasks without a uid a random one.
func (d *Doc) check() error {
	if err := CheckUID("uid", d.UID()); err != nil {
		return err
	}
	for _, f := range []struct{ name, v string }{{"name", d.Name()}, {"description", d.Description()}} {
		if len(f.v) > maxText {
			return invalid("%s: longer than %d bytes", f.name, maxText)
		}
	}
	if v := d.TemplateUID(); v != "" {
		if err := CheckUID("templateUid", v); err != nil {
			return err
		}
	}
	if len(d.Root.Elements(detailsName)) > 1 || len(d.Root.Elements(tasksName)) > 1 {
		return invalid("more than one <%s> or <%s>", detailsName, tasksName)
	}
	for _, col := range d.Root.Child("checklistColumns").Elements("checklistColumn") {
		if ct := col.Child("columnType"); ct != nil && !columnTypes[ct.Content()] {
			return invalid("columnType: %q is not one of ShortString, LongString, Integer, ActualTime, RelativeTime", logx.Cut(ct.Content(), 40))
		}
		if w := col.Child("columnWidth"); w != nil {
			if _, err := strconv.Atoi(w.Content()); err != nil {
				return invalid("columnWidth: %q is not a whole number", logx.Cut(w.Content(), 40))
			}
		}
	}
	seen := map[string]bool{}
	for _, t := range d.Tasks() {
		if err := checkTask(t, true, d.AttrStyle()); err != nil {
			return err
		}
		uid := TaskUID(t)
		if seen[uid] {
			return invalid("task uid %q appears twice", uid)
		}
		seen[uid] = true
	}
	return nil
}

// checkTask checks one task; fill gives a task without a uid a random one
// (an attribute when attr), else it is left without, for the caller.
func checkTask(t *Node, fill, attr bool) error {
	uid := TaskUID(t)
	if uid == "" && fill {
		uid = uuid.NewString()
		setValue(t, "uid", uid, attr || taskAttrStyle(t), taskOrder)
	}
	if uid != "" {
		if err := CheckUID("task uid", uid); err != nil {
			return err
		}
	}
	if len(t.Elements("uid")) > 1 || len(t.Elements("status")) > 1 {
		return invalid("task %q: more than one uid or status", logx.Cut(uid, 40))
	}
	if s := TaskStatus(t); s != "" && !statuses[strings.ToLower(s)] {
		return invalid("task %q: status %q is not pending, complete, complete (late) or late", logx.Cut(uid, 40), logx.Cut(s, 40))
	}
	if n := t.Child("number"); n != nil {
		if _, err := strconv.Atoi(n.Content()); err != nil {
			return invalid("task %q: number %q is not a whole number", logx.Cut(uid, 40), logx.Cut(n.Content(), 40))
		}
	}
	if lb := t.Child("lineBreak"); lb != nil {
		if v := lb.Content(); v != "true" && v != "false" {
			return invalid("task %q: lineBreak %q is not true or false", logx.Cut(uid, 40), logx.Cut(v, 40))
		}
	}
	return nil
}

// StartParams describe a checklist started from a template.
type StartParams struct {
	UID         string // the new checklist's uid
	Name        string
	Description string
	StartTime   time.Time
	CreatorUID  string
	Callsign    string
}

// Start makes a checklist from a template: a copy of it (every element the
// template has is kept) with the checklist's uid, name, description, start
// time, creator and template, and every task pending under a new uid. The
// contract's checklistTemplate becomes a contract-style checklist; ATAK's
// element-style template stays element style.
func Start(tpl *Doc, p StartParams) *Doc {
	root := tpl.Root.Clone()
	attr := tpl.AttrStyle()
	if root.Is(rootTemplate) {
		root.Name = rootChecklist
	}
	d := &Doc{Root: root}
	templateName, templateUID := tpl.Name(), tpl.UID()
	d.setRootValue("uid", p.UID)
	d.setRootValue("name", p.Name)
	det := d.details()
	if attr {
		d.Root.SetAttr("templateUid", templateUID)
	} else {
		setValue(det, "templateName", templateName, false, detailsOrder)
	}
	setValue(det, "description", p.Description, false, detailsOrder)
	setValue(det, "startTime", cot.FormatTime(p.StartTime), false, detailsOrder)
	if p.CreatorUID != "" {
		setValue(det, "creatorUid", p.CreatorUID, false, detailsOrder)
	}
	if p.Callsign != "" && !attr {
		setValue(det, "creatorCallsign", p.Callsign, false, detailsOrder)
	}
	for _, t := range d.Tasks() {
		SetTaskUID(t, uuid.NewString())
		pending := StatusPending
		if !taskAttrStyle(t) {
			pending = "Pending"
		}
		setValue(t, "status", pending, attr, taskOrder)
		for _, done := range []string{"completionTime", "completeDTG", "completeBy"} {
			removeValue(t, done)
		}
	}
	return d
}
