package cot

import (
	"bytes"
	"encoding/xml"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"
)

// capturesDir holds the real captures (copied from the shared test data).
const capturesDir = "../../testdata/cot-captures"

type capture struct {
	name string
	data []byte
}

func loadCaptures(tb testing.TB) []capture {
	tb.Helper()
	files, err := filepath.Glob(filepath.Join(capturesDir, "*.cot"))
	if err != nil {
		tb.Fatal(err)
	}
	if len(files) < 70 {
		tb.Fatalf("found %d captures in %s, want the 72 real ones", len(files), capturesDir)
	}
	var out []capture
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			tb.Fatal(err)
		}
		out = append(out, capture{filepath.Base(f), b})
	}
	return out
}

// chunkReader returns its data in reads of the given sizes (cycling), so
// tests can model TCP segmentation.
type chunkReader struct {
	data  []byte
	sizes []int
	i     int
}

func (r *chunkReader) Read(p []byte) (int, error) {
	if len(r.data) == 0 {
		return 0, io.EOF
	}
	n := len(r.data)
	if len(r.sizes) > 0 {
		n = min(n, r.sizes[r.i%len(r.sizes)])
		r.i++
	}
	n = copy(p, r.data[:n])
	r.data = r.data[n:]
	return n, nil
}

// partsReader returns each part in its own read.
type partsReader struct{ parts [][]byte }

func (r *partsReader) Read(p []byte) (int, error) {
	for len(r.parts) > 0 && len(r.parts[0]) == 0 {
		r.parts = r.parts[1:]
	}
	if len(r.parts) == 0 {
		return 0, io.EOF
	}
	n := copy(p, r.parts[0])
	r.parts[0] = r.parts[0][n:]
	return n, nil
}

// outcome is what a stream decoder produced: events (as canonical text)
// and errors, in order, and the final error.
type outcome struct {
	items []string
	sizes int
	final error
}

func decodeStream(r io.Reader, max int, proto Protocol) outcome {
	d := NewStreamDecoder(r, max)
	d.SetProtocol(proto)
	var o outcome
	for i := 0; ; i++ {
		m, err := d.Next()
		o.sizes += m.Size
		var se *SyntaxError
		switch {
		case err == nil && m.Event != nil:
			o.items = append(o.items, "event "+string(m.Event.AppendXML(nil)))
		case err == nil && m.Auth != nil:
			o.items = append(o.items, fmt.Sprintf("auth %+v", *m.Auth))
		case errors.As(err, &se):
			o.items = append(o.items, "error "+se.Error())
		default:
			o.final = err
			return o
		}
		if i > 1e6 {
			o.final = errors.New("decoder does not stop")
			return o
		}
	}
}

func (o outcome) String() string {
	return fmt.Sprintf("%d items, final %v:\n%s", len(o.items), o.final, strings.Join(o.items, "\n"))
}

func sameOutcome(a, b outcome) bool {
	return slices.Equal(a.items, b.items) && a.sizes == b.sizes && errors.Is(a.final, b.final) && errors.Is(b.final, a.final)
}

// xnode is a canonical XML tree built with encoding/xml (the oracle): the
// test's own view of "meaning". Comments are dropped, blank text is
// dropped, attributes are sorted, track numbers are normalized.
type xnode struct {
	name  string
	attrs []string
	text  string
	raw   []byte // text while the element is open
	kids  []*xnode
}

// parseTree parses a whole XML document strictly with encoding/xml.
func parseTree(doc []byte) (*xnode, error) {
	dec := xml.NewDecoder(bytes.NewReader(doc))
	root := &xnode{name: "#document"}
	stack := []*xnode{root}
	for {
		tok, err := dec.Token()
		if err == io.EOF {
			if len(stack) != 1 {
				return nil, errors.New("unclosed element")
			}
			return root, nil
		}
		if err != nil {
			return nil, err
		}
		top := stack[len(stack)-1]
		switch tk := tok.(type) {
		case xml.StartElement:
			n := &xnode{name: qname(tk.Name)}
			for _, a := range tk.Attr {
				v := a.Value
				if n.name == "track" && (a.Name.Local == "speed" || a.Name.Local == "course") {
					if f, err := strconv.ParseFloat(strings.TrimSpace(v), 64); err == nil {
						v = strconv.FormatFloat(f, 'g', -1, 64)
					}
				}
				n.attrs = append(n.attrs, qname(a.Name)+"="+strconv.Quote(v))
			}
			sort.Strings(n.attrs)
			top.kids = append(top.kids, n)
			stack = append(stack, n)
		case xml.EndElement:
			// White space in text is collapsed and trimmed: around mixed
			// content it means nothing in CoT (Detail.XML is trimmed at
			// both ends and protobuf moves typed elements out of text).
			top.text = strings.Join(strings.Fields(string(top.raw)), " ")
			top.raw = nil
			stack = stack[:len(stack)-1]
		case xml.CharData:
			top.raw = append(top.raw, tk...)
		}
	}
}

func qname(n xml.Name) string {
	if n.Space != "" {
		return n.Space + ":" + n.Local
	}
	return n.Local
}

// str renders the tree; with sortKids the children of this node (not
// deeper) are sorted, for comparisons that ignore the order of typed
// elements moved by protobuf.
func (n *xnode) str(sortKids bool) string {
	var sb strings.Builder
	sb.WriteString("<" + n.name + " " + strings.Join(n.attrs, " ") + ">" + strconv.Quote(n.text) + "[")
	if sortKids {
		var kids []string
		for _, k := range n.kids {
			var kb strings.Builder
			k.write(&kb)
			kids = append(kids, kb.String())
		}
		sort.Strings(kids)
		sb.WriteString(strings.Join(kids, ","))
	} else {
		for i, k := range n.kids {
			if i > 0 {
				sb.WriteByte(',')
			}
			k.write(&sb)
		}
	}
	sb.WriteString("]")
	return sb.String()
}

// write renders n (children in order) into sb, in linear time.
func (n *xnode) write(sb *strings.Builder) {
	sb.WriteString("<" + n.name + " " + strings.Join(n.attrs, " ") + ">" + strconv.Quote(n.text) + "[")
	for i, k := range n.kids {
		if i > 0 {
			sb.WriteByte(',')
		}
		k.write(sb)
	}
	sb.WriteString("]")
}

// detailTree parses detail content (Detail.XML) with encoding/xml.
func detailTree(content []byte) (*xnode, error) {
	doc := append(append([]byte("<detail>"), content...), "</detail>"...)
	root, err := parseTree(doc)
	if err != nil {
		return nil, err
	}
	return root.kids[0], nil
}

// sourceDetail returns the <detail> subtree of a capture parsed by
// encoding/xml, or nil if encoding/xml cannot parse the capture.
func sourceDetail(doc []byte) *xnode {
	root, err := parseTree(doc)
	if err != nil {
		return nil
	}
	for _, ev := range root.kids {
		for _, k := range ev.kids {
			if k.name == "detail" {
				return k
			}
		}
		return &xnode{name: "detail"}
	}
	return nil
}

// compareEvents reports how b differs from a in meaning. With proto the
// comparison follows the protobuf trip: times at millisecond precision,
// version defaulted, typed detail children in any order.
func compareEvents(a, b *Event, proto bool) error {
	var diffs []string
	check := func(what string, x, y any) {
		if x != y {
			diffs = append(diffs, fmt.Sprintf("%s: %v != %v", what, x, y))
		}
	}
	check("uid", a.UID, b.UID)
	check("type", a.Type, b.Type)
	check("how", a.How, b.How)
	check("access", a.Access, b.Access)
	check("qos", a.QoS, b.QoS)
	check("opex", a.Opex, b.Opex)
	check("caveat", a.Caveat, b.Caveat)
	check("releasableTo", a.ReleasableTo, b.ReleasableTo)
	if !proto {
		check("version", a.Version, b.Version)
	}
	ms := func(t time.Time) int64 { return t.UnixMilli() }
	check("time", ms(a.Time), ms(b.Time))
	check("start", ms(a.Start), ms(b.Start))
	check("stale", ms(a.Stale), ms(b.Stale))
	for i, pair := range [][2]float64{{a.Point.Lat, b.Point.Lat}, {a.Point.Lon, b.Point.Lon}, {a.Point.Hae, b.Point.Hae}, {a.Point.Ce, b.Point.Ce}, {a.Point.Le, b.Point.Le}} {
		if pair[0] != pair[1] && !(math.IsNaN(pair[0]) && math.IsNaN(pair[1])) {
			diffs = append(diffs, fmt.Sprintf("point[%d]: %v != %v", i, pair[0], pair[1]))
		}
	}
	ta, err := detailTree(a.Detail.XML)
	if err != nil {
		return fmt.Errorf("first detail does not parse with encoding/xml: %w\n%s", err, a.Detail.XML)
	}
	tb, err := detailTree(b.Detail.XML)
	if err != nil {
		return fmt.Errorf("second detail does not parse with encoding/xml: %w\n%s", err, b.Detail.XML)
	}
	if sa, sb := ta.str(proto), tb.str(proto); sa != sb {
		diffs = append(diffs, fmt.Sprintf("detail:\n  %s\n  %s", sa, sb))
	}
	if len(diffs) > 0 {
		return errors.New(strings.Join(diffs, "\n"))
	}
	return nil
}

// compareViews reports differences between the typed detail views.
func compareViews(a, b *Detail) error {
	s := func(d *Detail) string {
		var sb strings.Builder
		if d.Contact != nil {
			fmt.Fprintf(&sb, "contact%+v ", *d.Contact)
		}
		if d.Group != nil {
			fmt.Fprintf(&sb, "group%+v ", *d.Group)
		}
		if d.Takv != nil {
			fmt.Fprintf(&sb, "takv%+v ", *d.Takv)
		}
		if d.Track != nil {
			fmt.Fprintf(&sb, "track%+v ", *d.Track)
		}
		if d.Status != nil {
			fmt.Fprintf(&sb, "status%+v ", *d.Status)
		}
		if d.PrecisionLocation != nil {
			fmt.Fprintf(&sb, "precise%+v ", *d.PrecisionLocation)
		}
		if d.Marti != nil {
			fmt.Fprintf(&sb, "marti%+v ", *d.Marti)
		}
		fmt.Fprintf(&sb, "links%+v ", d.Links)
		if d.Emergency != nil {
			fmt.Fprintf(&sb, "emergency%+v ", *d.Emergency)
		}
		if d.TakControl != nil {
			c := *d.TakControl
			r := "nil"
			if c.Response != nil {
				r = strconv.FormatBool(*c.Response)
			}
			fmt.Fprintf(&sb, "takcontrol{%d %d %s}", c.SupportVersion, c.RequestVersion, r)
		}
		return sb.String()
	}
	if x, y := s(a), s(b); x != y {
		return fmt.Errorf("views differ:\n  %s\n  %s", x, y)
	}
	return nil
}
