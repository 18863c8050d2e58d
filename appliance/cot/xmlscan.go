package cot

import (
	"bytes"
	"sync"
)

// The hand-written XML tokenizer behind Decode (protocol.md §1, §2). encoding/xml
// is far too slow and allocates for every token; this one works on offsets
// into the input and allocates nothing per token. It checks what makes XML
// well-formed (names, quoting, balanced nesting, legal characters, valid
// UTF-8) and flags, instead of rejecting, the oddities real clients send
// (a comment inside a start tag, a bare '&', a '<' inside an attribute
// value, missing space between attributes): those tokens are marked odd and
// package code rebuilds them canonically where they are relayed.

type tokKind uint8

const (
	tokEOF     tokKind = iota
	tokStart           // <name attr="v"...> or <name .../>
	tokEnd             // </name>
	tokText            // character data, raw (references not resolved)
	tokCDATA           // <![CDATA[...]]>
	tokComment         // <!--...-->
	tokPI              // <?target ...?>, the XML declaration included
)

// span is a half-open byte range [a, b) of the tokenizer's input. The
// tokenizer keeps offsets, not slices, so that a pooled tokenizer holds no
// reference to an old input.
type span struct{ a, b int }

func (s span) len() int { return s.b - s.a }

// attr is one attribute of a start tag.
type attr struct {
	name span
	val  span // raw value between the quotes
	refs bool // val holds character or entity references
	ws   bool // val holds a raw tab, newline or carriage return
	odd  bool // val holds a bare '&', a raw '<' or the other quote character
}

// tokenizer reads XML tokens from src. It is not safe for concurrent use.
type tokenizer struct {
	src   []byte
	pos   int  // next byte to read
	owned bool // src belongs to the event being built: Detail.XML may alias it

	// The current token.
	kind      tokKind
	start     int    // offset of its first byte
	name      span   // element name (start and end tags)
	body      span   // text, CDATA, comment or PI content
	selfClose bool   // start tag ended with "/>"
	refs      bool   // text holds references
	odd       bool   // the token needs a canonical rebuild to be well-formed
	depth     int    // open elements around the token (a start tag's own excluded)
	attrs     []attr // start tag attributes

	stack []span          // names of the open elements
	seen  map[string]bool // duplicate-attribute check for very long tags
	arena []byte          // scratch space for decoded strings (see decode.go)
	fixes []stringFix     // strings to cut from arena (see decode.go)
	text  []byte          // scratch for emergency text
}

var tokenizerPool = sync.Pool{New: func() any { return new(tokenizer) }}

// newTokenizer returns a pooled tokenizer reading src.
func newTokenizer(src []byte) *tokenizer {
	t := tokenizerPool.Get().(*tokenizer)
	t.reset(src)
	return t
}

func (t *tokenizer) reset(src []byte) {
	t.src, t.pos, t.owned = src, 0, false
	t.kind, t.start, t.depth = tokEOF, 0, 0
	t.attrs = t.attrs[:0]
	t.stack = t.stack[:0]
	t.arena = t.arena[:0]
	clear(t.fixes)
	t.fixes = t.fixes[:0]
	t.text = t.text[:0]
}

// release returns t to the pool, dropping every reference to the input and
// any scratch space that grew large.
func (t *tokenizer) release() {
	t.reset(nil)
	const keep = 64 << 10
	if cap(t.arena) > keep {
		t.arena = nil
	}
	if cap(t.text) > keep {
		t.text = nil
	}
	if cap(t.stack) > 1024 {
		t.stack = nil
	}
	if cap(t.attrs) > 1024 {
		t.attrs = nil
	}
	if cap(t.fixes) > 1024 {
		t.fixes = nil
	}
	t.seen = nil
	tokenizerPool.Put(t)
}

func (t *tokenizer) bytes(s span) []byte { return t.src[s.a:s.b] }

// is reports whether span s holds exactly lit.
func (t *tokenizer) is(s span, lit string) bool {
	return s.len() == len(lit) && string(t.src[s.a:s.b]) == lit
}

// next reads the next token. At the end of the input the kind is tokEOF
// (whether elements are still open is for the caller to judge).
func (t *tokenizer) next() error {
	t.attrs = t.attrs[:0]
	t.selfClose, t.refs, t.odd = false, false, false
	t.start = t.pos
	t.depth = len(t.stack)
	src, i := t.src, t.pos
	if i >= len(src) {
		t.kind = tokEOF
		return nil
	}
	if src[i] != '<' {
		return t.readText()
	}
	if i+1 >= len(src) {
		return errAt(i, "input ends after '<'")
	}
	switch src[i+1] {
	case '/':
		return t.readEnd()
	case '?':
		return t.readPI()
	case '!':
		if bytes.HasPrefix(src[i:], []byte("<!--")) {
			return t.readComment()
		}
		if bytes.HasPrefix(src[i:], []byte("<![CDATA[")) {
			return t.readCDATA()
		}
		return errAt(i, "unsupported markup declaration (DOCTYPE and the like are not allowed)")
	}
	return t.readStart()
}

func (t *tokenizer) readText() error {
	src, i := t.src, t.pos
	for i < len(src) {
		c := src[i]
		if textPlain[c] {
			i++
			continue
		}
		switch {
		case c == '<':
			t.kind, t.body, t.pos = tokText, span{t.pos, i}, i
			return nil
		case c == '&':
			if n, _ := refLen(src[i:]); n > 0 {
				t.refs = true
				i += n
			} else {
				t.odd = true // a bare '&': rebuilt as &amp;
				i++
			}
		case c == ']':
			if i+2 < len(src) && src[i+1] == ']' && src[i+2] == '>' {
				t.odd = true // "]]>" is not allowed in text: rebuilt as ]]&gt;
			}
			i++
		case c >= 0x80:
			n := charLen(src[i:])
			if n == 0 {
				return errAt(i, "invalid UTF-8 or illegal character in text")
			}
			i += n
		default:
			return errAt(i, "illegal character %#02x in text", c)
		}
	}
	t.kind, t.body, t.pos = tokText, span{t.pos, i}, i
	return nil
}

func (t *tokenizer) readComment() error {
	start := t.pos + 4
	end := bytes.Index(t.src[start:], []byte("-->"))
	if end < 0 {
		return errAt(t.pos, "unterminated comment")
	}
	body := t.src[start : start+end]
	// "--" inside a comment, or a comment ending in "-", is not
	// well-formed, nor are illegal characters: such comments are dropped
	// by the canonical rebuild.
	if bytes.Contains(body, []byte("--")) || (len(body) > 0 && body[len(body)-1] == '-') || !validChars(body) {
		t.odd = true
	}
	t.kind, t.body, t.pos = tokComment, span{start, start + end}, start+end+3
	return nil
}

func (t *tokenizer) readCDATA() error {
	start := t.pos + len("<![CDATA[")
	end := bytes.Index(t.src[start:], []byte("]]>"))
	if end < 0 {
		return errAt(t.pos, "unterminated CDATA section")
	}
	if !validChars(t.src[start : start+end]) {
		return errAt(start, "invalid UTF-8 or illegal character in CDATA section")
	}
	t.kind, t.body, t.pos = tokCDATA, span{start, start + end}, start+end+3
	return nil
}

func (t *tokenizer) readPI() error {
	i := t.pos + 2
	end, ok := scanName(t.src, i)
	if !ok {
		return errAt(i, "invalid processing instruction")
	}
	t.name = span{i, end}
	close := bytes.Index(t.src[end:], []byte("?>"))
	if close < 0 {
		return errAt(t.pos, "unterminated processing instruction")
	}
	t.kind, t.body, t.pos = tokPI, span{end, end + close}, end+close+2
	return nil
}

func (t *tokenizer) readEnd() error {
	src := t.src
	i := t.pos + 2
	end, ok := scanName(src, i)
	if !ok {
		return errAt(i, "invalid name in end tag")
	}
	name := span{i, end}
	i = end
	for i < len(src) && isSpace(src[i]) {
		i++
	}
	if i >= len(src) {
		return errAt(t.pos, "input ends inside end tag </%s", src[name.a:name.b])
	}
	if src[i] != '>' {
		return errAt(i, "unexpected %q in end tag </%s>", src[i], src[name.a:name.b])
	}
	n := len(t.stack)
	if n == 0 {
		return errAt(t.pos, "end tag </%s> without a start tag", src[name.a:name.b])
	}
	if top := t.stack[n-1]; !bytes.Equal(src[top.a:top.b], src[name.a:name.b]) {
		return errAt(t.pos, "mismatched end tag </%s>, expected </%s>", src[name.a:name.b], src[top.a:top.b])
	}
	t.stack = t.stack[:n-1]
	t.kind, t.name, t.depth, t.pos = tokEnd, name, n-1, i+1
	return nil
}

func (t *tokenizer) readStart() error {
	src := t.src
	i := t.pos + 1
	end, ok := scanName(src, i)
	if !ok {
		return errAt(i, "invalid element name")
	}
	t.name = span{i, end}
	i = end
	for {
		sep := false
		for i < len(src) {
			if isSpace(src[i]) {
				sep = true
				i++
				continue
			}
			if src[i] == '<' && bytes.HasPrefix(src[i:], []byte("<!--")) {
				// A comment inside a start tag (seen in real
				// captures): accepted and dropped by the rebuild.
				c := bytes.Index(src[i+4:], []byte("-->"))
				if c < 0 {
					return errAt(i, "unterminated comment inside <%s>", t.bytes(t.name))
				}
				i += 4 + c + 3
				sep, t.odd = true, true
				continue
			}
			break
		}
		if i >= len(src) {
			return errAt(t.pos, "input ends inside start tag <%s>", t.bytes(t.name))
		}
		c := src[i]
		if c == '>' {
			i++
			break
		}
		if c == '/' {
			if i+1 < len(src) && src[i+1] == '>' {
				t.selfClose = true
				i += 2
				break
			}
			return errAt(i, "expected \"/>\" in <%s>", t.bytes(t.name))
		}
		if !sep {
			if len(t.attrs) == 0 || !nameStart[c] {
				return errAt(i, "unexpected %q in start tag <%s>", c, t.bytes(t.name))
			}
			t.odd = true // no space between attributes: rebuilt with one
		}
		var a attr
		var err error
		if i, err = t.readAttr(i, &a); err != nil {
			return err
		}
		if a.odd {
			t.odd = true
		}
		if t.duplicate(a.name) {
			return errAt(a.name.a, "duplicate attribute %s in <%s>", quoteName(t.bytes(a.name)), t.bytes(t.name))
		}
		t.attrs = append(t.attrs, a)
	}
	t.kind, t.pos = tokStart, i
	if !t.selfClose {
		t.stack = append(t.stack, t.name)
	}
	return nil
}

// readAttr reads name="value" at src[i:].
func (t *tokenizer) readAttr(i int, a *attr) (int, error) {
	src := t.src
	end, ok := scanName(src, i)
	if !ok {
		return i, errAt(i, "invalid attribute name in <%s>", t.bytes(t.name))
	}
	a.name = span{i, end}
	i = end
	for i < len(src) && isSpace(src[i]) {
		i++
	}
	if i >= len(src) || src[i] != '=' {
		return i, errAt(i, "attribute %s of <%s> has no value", quoteName(t.bytes(a.name)), t.bytes(t.name))
	}
	i++
	for i < len(src) && isSpace(src[i]) {
		i++
	}
	if i >= len(src) || (src[i] != '"' && src[i] != '\'') {
		return i, errAt(i, "value of attribute %s in <%s> is not quoted", quoteName(t.bytes(a.name)), t.bytes(t.name))
	}
	q := src[i]
	i++
	start := i
	for {
		for i < len(src) && attrPlain[src[i]] {
			i++
		}
		if i >= len(src) {
			return i, errAt(start, "unterminated value of attribute %s in <%s>", quoteName(t.bytes(a.name)), t.bytes(t.name))
		}
		c := src[i]
		switch {
		case c == q:
			a.val = span{start, i}
			return i + 1, nil
		case c == '"' || c == '\'':
			if c == '"' {
				a.odd = true // rebuilt double-quoted: this '"' becomes &quot;
			}
			i++
		case c == '<':
			a.odd = true // rebuilt as &lt;
			i++
		case c == '&':
			if n, _ := refLen(src[i:]); n > 0 {
				a.refs = true
				i += n
			} else {
				a.odd = true // rebuilt as &amp;
				i++
			}
		case c >= 0x80:
			n := charLen(src[i:])
			if n == 0 {
				return i, errAt(i, "invalid UTF-8 or illegal character in attribute %s", quoteName(t.bytes(a.name)))
			}
			i += n
		case c == '\t' || c == '\n' || c == '\r':
			a.ws = true
			i++
		default:
			return i, errAt(i, "illegal character %#02x in attribute %s", c, quoteName(t.bytes(a.name)))
		}
	}
}

// duplicate reports whether the current start tag already has an attribute
// called like name. Short tags compare pairwise; long ones use a map so
// that hostile input cannot make the check quadratic.
func (t *tokenizer) duplicate(name span) bool {
	n := t.bytes(name)
	if len(t.attrs) < 32 {
		for _, a := range t.attrs {
			if bytes.Equal(t.bytes(a.name), n) {
				return true
			}
		}
		return false
	}
	if len(t.attrs) == 32 || t.seen == nil {
		t.seen = make(map[string]bool, 64)
		for _, a := range t.attrs {
			t.seen[string(t.bytes(a.name))] = true
		}
	}
	if t.seen[string(n)] {
		return true
	}
	t.seen[string(n)] = true
	return false
}

// attrValue returns the raw value of the attribute called name, if any.
func (t *tokenizer) attrValue(name string) (attr, bool) {
	for _, a := range t.attrs {
		if t.is(a.name, name) {
			return a, true
		}
	}
	return attr{}, false
}
