package excheck

// A bounded XML reader and writer. Documents come from clients, so reading
// is capped (size, depth, nodes, attributes) and refuses what could make a
// small input expensive or ambiguous: a DOCTYPE (entity definitions) and any
// entity but XML's five predefined ones and character references. What is
// read is kept whole: elements with their prefixes, attributes in order,
// text, CDATA (as text) and comments; processing instructions and the XML
// declaration are dropped (a document is written back as UTF-8 with its own
// declaration).

import (
	"bytes"
	"encoding/xml"
	"errors"
	"fmt"
	"io"
	"strings"
	"unicode/utf8"
)

// Limits of one document.
const (
	MaxDocumentBytes = 1 << 20 // one template, checklist or task
	maxDepth         = 32
	maxNodes         = 50_000
	maxAttrs         = 64
)

// ErrInvalid marks every refusal of a document: malformed XML, a limit, or
// a rule of the ExCheck schemas. Its text says what is wrong.
var ErrInvalid = errors.New("invalid ExCheck document")

func invalid(format string, args ...any) error {
	return fmt.Errorf("%w: %s", ErrInvalid, fmt.Sprintf(format, args...))
}

// Kind is what a Node is.
type Kind uint8

const (
	Element Kind = iota
	Text
	Comment
)

// Attr is one attribute, its name as written (prefix:local).
type Attr struct {
	Name, Value string
}

// Node is an element, a run of text or a comment.
type Node struct {
	Kind     Kind
	Name     string // element name as written (prefix:local)
	Attrs    []Attr
	Children []*Node
	Text     string // text or comment content
}

// Parse reads one document and returns its root element.
func Parse(b []byte) (*Node, error) {
	if len(b) > MaxDocumentBytes {
		return nil, invalid("larger than %d bytes", MaxDocumentBytes)
	}
	if !utf8.Valid(b) {
		return nil, invalid("not valid UTF-8")
	}
	d := xml.NewDecoder(bytes.NewReader(b))
	d.Strict = true
	d.CharsetReader = func(label string, _ io.Reader) (io.Reader, error) {
		// Only called for a declared encoding other than UTF-8.
		return nil, fmt.Errorf("encoding %q is not supported (UTF-8 only)", label)
	}
	var (
		root  *Node
		stack []*Node
		nodes int
		text  []byte // text of the open element not yet added as a node
	)
	flush := func() {
		if len(text) > 0 && len(stack) > 0 {
			p := stack[len(stack)-1]
			p.Children = append(p.Children, &Node{Kind: Text, Text: string(text)})
		}
		text = text[:0]
	}
	for {
		tok, err := d.RawToken()
		if err == io.EOF {
			break
		}
		if err != nil {
			return nil, invalid("malformed XML: %s", strings.TrimPrefix(err.Error(), "XML syntax error on "))
		}
		if nodes++; nodes > maxNodes {
			return nil, invalid("more than %d nodes", maxNodes)
		}
		if _, ok := tok.(xml.CharData); !ok {
			flush()
		}
		switch t := tok.(type) {
		case xml.StartElement:
			if root != nil && len(stack) == 0 {
				return nil, invalid("more than one root element")
			}
			if len(stack) >= maxDepth {
				return nil, invalid("nested deeper than %d elements", maxDepth)
			}
			if len(t.Attr) > maxAttrs {
				return nil, invalid("element <%s> has more than %d attributes", rawName(t.Name), maxAttrs)
			}
			n := &Node{Kind: Element, Name: rawName(t.Name)}
			for _, a := range t.Attr {
				n.Attrs = append(n.Attrs, Attr{Name: rawName(a.Name), Value: a.Value})
			}
			if len(stack) == 0 {
				root = n
			} else {
				p := stack[len(stack)-1]
				p.Children = append(p.Children, n)
			}
			stack = append(stack, n)
		case xml.EndElement:
			if len(stack) == 0 || stack[len(stack)-1].Name != rawName(t.Name) {
				return nil, invalid("malformed XML: unexpected </%s>", rawName(t.Name))
			}
			stack = stack[:len(stack)-1]
		case xml.CharData:
			if len(stack) == 0 {
				if len(bytes.TrimSpace(t)) > 0 {
					return nil, invalid("text outside the root element")
				}
				continue
			}
			// Adjacent runs (text, CDATA) are joined once the run ends:
			// appending to a string each time would be quadratic.
			text = append(text, t...)
		case xml.Comment:
			if len(stack) > 0 {
				p := stack[len(stack)-1]
				p.Children = append(p.Children, &Node{Kind: Comment, Text: string(t)})
			}
		case xml.Directive:
			return nil, invalid("DOCTYPE and other <!...> declarations are not accepted")
		case xml.ProcInst:
			// The declaration (or another instruction): dropped.
		}
	}
	if root == nil {
		return nil, invalid("empty: no root element")
	}
	if len(stack) > 0 {
		return nil, invalid("malformed XML: <%s> is not closed", stack[len(stack)-1].Name)
	}
	return root, nil
}

func rawName(n xml.Name) string {
	if n.Space == "" {
		return n.Local
	}
	return n.Space + ":" + n.Local
}

// localName is the element name without its prefix.
func localName(name string) string {
	if i := strings.IndexByte(name, ':'); i >= 0 {
		return name[i+1:]
	}
	return name
}

const declaration = `<?xml version="1.0" encoding="UTF-8"?>` + "\n"

// Document writes n as a document: the XML declaration, then n.
func Document(n *Node) []byte {
	return Append([]byte(declaration), n)
}

// Append writes n (without a declaration) to dst.
func Append(dst []byte, n *Node) []byte {
	switch n.Kind {
	case Text:
		return escape(dst, n.Text, false)
	case Comment:
		dst = append(dst, "<!--"...)
		dst = append(dst, strings.ReplaceAll(n.Text, "--", "- -")...)
		return append(dst, "-->"...)
	}
	dst = append(dst, '<')
	dst = append(dst, n.Name...)
	for _, a := range n.Attrs {
		dst = append(dst, ' ')
		dst = append(dst, a.Name...)
		dst = append(dst, `="`...)
		dst = escape(dst, a.Value, true)
		dst = append(dst, '"')
	}
	if len(n.Children) == 0 {
		return append(dst, "/>"...)
	}
	dst = append(dst, '>')
	for _, c := range n.Children {
		dst = Append(dst, c)
	}
	dst = append(dst, "</"...)
	dst = append(dst, n.Name...)
	return append(dst, '>')
}

// escape appends s escaped for XML: in text, & < > and CR; in an
// attribute value (attr), also the quote and the whitespace a parser would
// otherwise normalise (LF, tab), but not >.
func escape(dst []byte, s string, attr bool) []byte {
	for i := 0; i < len(s); i++ {
		switch c := s[i]; {
		case c == '&':
			dst = append(dst, "&amp;"...)
		case c == '<':
			dst = append(dst, "&lt;"...)
		case c == '>' && !attr:
			dst = append(dst, "&gt;"...)
		case c == '\r':
			dst = append(dst, "&#xD;"...)
		case attr && c == '"':
			dst = append(dst, "&quot;"...)
		case attr && c == '\n':
			dst = append(dst, "&#xA;"...)
		case attr && c == '\t':
			dst = append(dst, "&#x9;"...)
		default:
			dst = append(dst, c)
		}
	}
	return dst
}

// Clone returns a deep copy of n.
func (n *Node) Clone() *Node {
	c := *n
	c.Attrs = append([]Attr(nil), n.Attrs...)
	c.Children = make([]*Node, len(n.Children))
	for i, k := range n.Children {
		c.Children[i] = k.Clone()
	}
	return &c
}

// Is reports whether n is an element named local (any prefix).
func (n *Node) Is(local string) bool {
	return n != nil && n.Kind == Element && localName(n.Name) == local
}

// Child returns the first child element named local, or nil.
func (n *Node) Child(local string) *Node {
	if n == nil {
		return nil
	}
	for _, c := range n.Children {
		if c.Is(local) {
			return c
		}
	}
	return nil
}

// Elements returns the child elements named local.
func (n *Node) Elements(local string) []*Node {
	var out []*Node
	if n == nil {
		return nil
	}
	for _, c := range n.Children {
		if c.Is(local) {
			out = append(out, c)
		}
	}
	return out
}

// Attr returns the value of the attribute named local and whether it is
// there.
func (n *Node) Attr(local string) (string, bool) {
	if n == nil {
		return "", false
	}
	for _, a := range n.Attrs {
		if localName(a.Name) == local {
			return a.Value, true
		}
	}
	return "", false
}

// SetAttr sets (or adds) the attribute named local.
func (n *Node) SetAttr(local, v string) {
	for i, a := range n.Attrs {
		if localName(a.Name) == local {
			n.Attrs[i].Value = v
			return
		}
	}
	n.Attrs = append(n.Attrs, Attr{Name: local, Value: v})
}

// Content is the element's text: its text children joined, trimmed.
func (n *Node) Content() string {
	if n == nil {
		return ""
	}
	var b strings.Builder
	for _, c := range n.Children {
		if c.Kind == Text {
			b.WriteString(c.Text)
		}
	}
	return strings.TrimSpace(b.String())
}

// SetContent replaces the element's text children with v (its element
// children, if any, stay).
func (n *Node) SetContent(v string) {
	kept := n.Children[:0]
	for _, c := range n.Children {
		if c.Kind != Text {
			kept = append(kept, c)
		}
	}
	n.Children = kept
	if v != "" {
		n.Children = append([]*Node{{Kind: Text, Text: v}}, n.Children...)
	}
}

// Remove removes child c from n and reports whether it was there.
func (n *Node) Remove(c *Node) bool {
	for i, k := range n.Children {
		if k == c {
			n.Children = append(n.Children[:i], n.Children[i+1:]...)
			return true
		}
	}
	return false
}

// Replace puts c in the place of old among n's children.
func (n *Node) Replace(old, c *Node) bool {
	for i, k := range n.Children {
		if k == old {
			n.Children[i] = c
			return true
		}
	}
	return false
}

// insertOrdered adds element c among n's children before the first child
// element whose name comes after c's in order (the schema's sequence), or
// at the end.
func (n *Node) insertOrdered(c *Node, order []string) {
	rank := func(name string) int {
		for i, o := range order {
			if o == name {
				return i
			}
		}
		return len(order)
	}
	r := rank(localName(c.Name))
	for i, k := range n.Children {
		if k.Kind == Element && rank(localName(k.Name)) > r {
			n.Children = append(n.Children[:i], append([]*Node{c}, n.Children[i:]...)...)
			return
		}
	}
	n.Children = append(n.Children, c)
}
