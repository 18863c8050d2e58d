package excheck

// A validator for the part of XML Schema the ExCheck schemas use
// (testdata/excheck-xsd): named and inline complex types made of one
// xs:sequence of xs:element (minOccurs, maxOccurs, nillable), attributes
// ignored, simple types restricted by xs:enumeration, and the built-in
// types string, int, byte, long, double, boolean and dateTime. It reads the
// real schema files, so a document the tests validate is valid for them.

import (
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"
)

type schema struct {
	complex map[string]*Node
	simple  map[string]map[string]bool
	globals map[string]*Node // global xs:element by name
}

func loadSchema(t testing.TB, file string) *schema {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("..", "..", "testdata", "excheck-xsd", file))
	if err != nil {
		t.Fatal(err)
	}
	root, err := Parse(b)
	if err != nil {
		t.Fatalf("%s: %v", file, err)
	}
	s := &schema{complex: map[string]*Node{}, simple: map[string]map[string]bool{}, globals: map[string]*Node{}}
	for _, c := range root.Children {
		name, _ := c.Attr("name")
		switch {
		case c.Is("complexType"):
			s.complex[name] = c
		case c.Is("simpleType"):
			enum := map[string]bool{}
			for _, e := range c.Child("restriction").Elements("enumeration") {
				v, _ := e.Attr("value")
				enum[v] = true
			}
			s.simple[name] = enum
		case c.Is("element"):
			s.globals[name] = c
		}
	}
	return s
}

// validateAs checks element n against the named complex type.
func (s *schema) validateAs(n *Node, typeName string) error {
	ct, ok := s.complex[typeName]
	if !ok {
		return fmt.Errorf("schema has no complex type %q", typeName)
	}
	return s.validateComplex(n, ct, n.Name)
}

// validateGlobal checks element n against the global element of its name.
func (s *schema) validateGlobal(n *Node) error {
	decl, ok := s.globals[localName(n.Name)]
	if !ok {
		return fmt.Errorf("schema has no global element <%s>", n.Name)
	}
	return s.validateElement(n, decl, n.Name)
}

func (s *schema) validateElement(n, decl *Node, path string) error {
	if ct := decl.Child("complexType"); ct != nil {
		return s.validateComplex(n, ct, path)
	}
	typ, _ := decl.Attr("type")
	if ct, ok := s.complex[typ]; ok {
		return s.validateComplex(n, ct, path)
	}
	for _, c := range n.Children {
		if c.Kind == Element {
			return fmt.Errorf("%s: element <%s> inside a simple value", path, c.Name)
		}
	}
	if nillable, _ := decl.Attr("nillable"); nillable == "true" && n.Content() == "" {
		return nil
	}
	return s.checkSimple(n.Content(), typ, path)
}

func (s *schema) checkSimple(v, typ, path string) error {
	if enum, ok := s.simple[typ]; ok {
		if !enum[v] {
			return fmt.Errorf("%s: %q is not in the enumeration of %s", path, v, typ)
		}
		return nil
	}
	var err error
	switch strings.TrimPrefix(typ, "xs:") {
	case "string", "":
	case "int", "long":
		_, err = strconv.ParseInt(v, 10, 64)
	case "byte":
		_, err = strconv.ParseInt(v, 10, 8)
	case "double":
		_, err = strconv.ParseFloat(v, 64)
	case "boolean":
		if v != "true" && v != "false" && v != "1" && v != "0" {
			err = fmt.Errorf("not a boolean")
		}
	case "dateTime":
		_, err = time.Parse(time.RFC3339Nano, v)
	default:
		return fmt.Errorf("%s: type %s is not supported by this validator", path, typ)
	}
	if err != nil {
		return fmt.Errorf("%s: %q is not a valid %s", path, v, typ)
	}
	return nil
}

func (s *schema) validateComplex(n, ct *Node, path string) error {
	var kids []*Node
	for _, c := range n.Children {
		switch c.Kind {
		case Element:
			kids = append(kids, c)
		case Text:
			if strings.TrimSpace(c.Text) != "" {
				return fmt.Errorf("%s: text in element-only content", path)
			}
		}
	}
	i := 0
	for _, decl := range ct.Child("sequence").Elements("element") {
		name, _ := decl.Attr("name")
		min, max := occurs(decl)
		count := 0
		for i < len(kids) && localName(kids[i].Name) == name && (max < 0 || count < max) {
			if err := s.validateElement(kids[i], decl, path+"/"+name); err != nil {
				return err
			}
			i++
			count++
		}
		if count < min {
			return fmt.Errorf("%s: <%s> appears %d times, at least %d required", path, name, count, min)
		}
	}
	if i < len(kids) {
		return fmt.Errorf("%s: unexpected <%s>", path, kids[i].Name)
	}
	return nil
}

func occurs(decl *Node) (min, max int) {
	min, max = 1, 1
	if v, ok := decl.Attr("minOccurs"); ok {
		min, _ = strconv.Atoi(v)
	}
	if v, ok := decl.Attr("maxOccurs"); ok {
		if v == "unbounded" {
			max = -1
		} else {
			max, _ = strconv.Atoi(v)
		}
	}
	return min, max
}

// TestValidator makes sure the validator can fail: a document missing a
// required element, with an unknown one, or with a status outside the
// enumeration is refused.
func TestValidator(t *testing.T) {
	s := loadSchema(t, "excheck.xsd")
	tpl := readTemplate(t, "atak-template.xml")
	if err := s.validateAs(tpl.Root, "checklist"); err != nil {
		t.Fatalf("the ATAK-style template does not validate: %v", err)
	}
	broken := []func(d *Doc){
		func(d *Doc) { d.Root.Remove(d.Root.Child("checklistColumns")) },
		func(d *Doc) {
			d.Tasks()[0].Children = append(d.Tasks()[0].Children, &Node{Kind: Element, Name: "surprise"})
		},
		func(d *Doc) { setValue(d.Tasks()[0], "status", "Done", false, taskOrder) },
		func(d *Doc) { d.Tasks()[0].Child("number").SetContent("one") },
	}
	for i, breakIt := range broken {
		d := readTemplate(t, "atak-template.xml")
		breakIt(d)
		if err := s.validateAs(d.Root, "checklist"); err == nil {
			t.Errorf("broken document %d validates", i)
		}
	}
}
