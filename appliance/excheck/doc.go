// Package excheck reads, checks and edits ExCheck checklist documents
// (api.md §2.14): templates, checklists and their tasks, in both styles a
// server meets — the contract's attribute style (root attributes uid, name,
// templateUid; task attributes uid, status) and the element style ATAK and
// WinTAK send (checklistDetails/uid, checklistTask/uid, status elements).
//
//   - tree.go: a bounded XML reader (size, depth and node caps, no DOCTYPE,
//     no entities beyond XML's five) into a tree that keeps every element,
//     attribute, text and comment, in order, and writes it back;
//   - fields.go: style-agnostic access to the fields the server reads and
//     writes (a value is an attribute or a child element, whichever the
//     document uses), inserted in the schemas' element order;
//   - checklist.go: templates, checklists and tasks: parsing with the rules
//     of the ExCheck schemas (testdata/excheck-xsd), starting a checklist
//     from a template, finding, replacing, adding and removing tasks.
//
// Unknown elements are kept: a document a client uploaded comes back with
// everything it held. The package does no I/O and imports nothing of this
// module; the store keeps the documents and the client API (marti) serves
// them and sends the notifications.
package excheck
