package excheck

// Style-agnostic fields. The contract's documents carry a few values as
// attributes (root uid, name, templateUid; task uid, status); ATAK's carry
// them as child elements (checklistDetails/uid, checklistTask/status). A
// value is read from whichever is there; a value the server writes goes
// where the document already has it, else in the document's style, and a
// new child element is inserted at its place in the schema's sequence
// (testdata/excheck-xsd), so an element-style document stays valid.

import (
	"strings"

	"outpost/appliance/logx"
)

// Element order of checklistDetails and checklistTask in the ExCheck
// schemas; description and completionTime (the contract's task children)
// are placed beside their element-style counterparts.
var (
	detailsOrder = []string{"name", "uid", "description", "startTime", "templateName", "templateUid",
		"creatorUid", "creatorCallsign", "missions"}
	taskOrder = []string{"lineBreak", "bgColor", "number", "uid", "value", "description", "status",
		"customStatus", "completeBy", "completeDTG", "completionTime", "notes", "dueRelativeTime", "dueDTG",
		"lineBreakText"}
)

// value reads local from n: its attribute, else its child element's text.
func value(n *Node, local string) string {
	if v, ok := n.Attr(local); ok {
		return strings.TrimSpace(v)
	}
	return n.Child(local).Content()
}

// setValue writes local on n: into the attribute or child element that is
// there, else as an attribute (asAttr) or a new child element in order.
func setValue(n *Node, local, v string, asAttr bool, order []string) {
	if _, ok := n.Attr(local); ok {
		n.SetAttr(local, v)
		return
	}
	if c := n.Child(local); c != nil {
		c.SetContent(v)
		return
	}
	if asAttr {
		n.SetAttr(local, v)
		return
	}
	c := &Node{Kind: Element, Name: local}
	c.SetContent(v)
	n.insertOrdered(c, order)
}

// removeValue removes local from n, as attribute and as child element.
func removeValue(n *Node, local string) {
	kept := n.Attrs[:0]
	for _, a := range n.Attrs {
		if localName(a.Name) != local {
			kept = append(kept, a)
		}
	}
	n.Attrs = kept
	for c := n.Child(local); c != nil; c = n.Child(local) {
		n.Remove(c)
	}
}

// Limits of the values the server reads: uids become URL path segments
// and mission names, so they are plain.
const (
	MaxUID  = 128
	maxText = 4096
)

// CheckUID accepts a uid of 1 to 128 characters from A–Z, a–z, 0–9 and
// "._:-". what names it in the error.
func CheckUID(what, uid string) error {
	if uid == "" {
		return invalid("%s: required", what)
	}
	if len(uid) > MaxUID {
		return invalid("%s: longer than %d characters", what, MaxUID)
	}
	for _, r := range uid {
		switch {
		case r >= 'a' && r <= 'z', r >= 'A' && r <= 'Z', r >= '0' && r <= '9', r == '.', r == '_', r == ':', r == '-':
		default:
			return invalid("%s: %q has a character other than letters, digits and . _ : -", what, logx.Cut(uid, 40))
		}
	}
	return nil
}
