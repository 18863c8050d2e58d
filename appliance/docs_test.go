package appliance

import (
	"bufio"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"testing"
	"unicode"
)

// The citation check keeps code comments and docs/ honest: every
// `protocol.md §N`, `api.md §X.Y` and `architecture.md "Title"` (or any other
// `name.md §N` / `name.md "Title"`) in a .go, .sql, .proto, .js, .mjs or .md
// file must name a heading (or, for a quoted title, a phrase) that exists in
// that document; so must `README "Title"`, against the repository's
// front page; and no comment may cite the notes outside the repository that
// the docs replaced. TestDocsLinks checks the relative links of the
// Markdown files.

var (
	// A numbered citation: "§2.8", "§4.2–4.4", "§2.8, §2.9", "§2.8/2.9".
	numberedCite = regexp.MustCompile(`\b([A-Za-z][\w-]*)\.md\s*§\s*(\d+(?:\.\d+)*)((?:\s*(?:[–-]|/|,\s*§)\s*\d+(?:\.\d+)*)*)`)
	citeTail     = regexp.MustCompile(`\s*([–-]|/|,\s*§)\s*(\d+(?:\.\d+)*)`)
	// A quoted citation: architecture.md "The relay".
	quotedCite = regexp.MustCompile(`\b([A-Za-z][\w-]*)\.md\s+"([^"]{1,200})"`)
	// A quoted citation of the front page: README "Set up", README's "Set up".
	readmeCite = regexp.MustCompile(`\bREADME(?:'s)?,?\s+"([^"]{1,200})"`)
	// Citations of documents that live outside the repository.
	foreignCites = []*regexp.Regexp{
		regexp.MustCompile(`\bwire\s*§`),
		regexp.MustCompile(`(?i)\bspec(?:ification)?(?:'s)?\s+(?:part\s+)?\d+(?:\.\d+)?`),
		regexp.MustCompile(`\bshapes\.md\b`),
		regexp.MustCompile(`\bARCHITECTURE(?:\.md)?\s*"`),
		regexp.MustCompile(`\bARCHITECTURE\.md\b`),
		regexp.MustCompile(`\bwire-protocol\.md\b`),
		regexp.MustCompile(`\binterface\.md\b`),
		regexp.MustCompile(`(?i)notes on the (?:cot |tak )?wire protocol`),
	}
	headingNumber = regexp.MustCompile(`^(?:§\s*)?(\d+(?:\.\d+)*)\.?(?:\s|$)`)
)

// docIndex is what a citation can point at in one markdown document.
type docIndex struct {
	numbers map[string]bool // "2", "2.8", ...
	titles  map[string]bool // heading titles without their number, lower case
	text    string          // the whole document, markup stripped, white space collapsed
}

// docSet loads documents on demand from docs/ (or the repository root).
type docSet struct {
	root string
	docs map[string]*docIndex // nil entry: the document does not exist
}

func (s *docSet) get(name string) (*docIndex, string) {
	if d, ok := s.docs[name]; ok {
		return d, ""
	}
	var d *docIndex
	paths := []string{filepath.Join(s.root, "docs", name+".md"), filepath.Join(s.root, name+".md")}
	if name == "README" { // the front page, not docs/README.md (the index of docs/)
		paths = paths[1:]
	}
	for _, p := range paths {
		b, err := os.ReadFile(p)
		if err == nil {
			d = indexDoc(string(b))
			break
		}
	}
	s.docs[name] = d
	if d == nil {
		return nil, fmt.Sprintf("docs/%s.md does not exist", name)
	}
	return d, ""
}

var markup = strings.NewReplacer("**", "", "`", "", "__", "")

func indexDoc(src string) *docIndex {
	d := &docIndex{numbers: map[string]bool{}, titles: map[string]bool{}}
	inFence := false
	sc := bufio.NewScanner(strings.NewReader(src))
	sc.Buffer(make([]byte, 0, 64<<10), 1<<20)
	for sc.Scan() {
		line := sc.Text()
		if strings.HasPrefix(strings.TrimSpace(line), "```") {
			inFence = !inFence
			continue
		}
		if inFence || !strings.HasPrefix(line, "#") {
			continue
		}
		title := strings.TrimSpace(strings.TrimLeft(line, "#"))
		if m := headingNumber.FindStringSubmatch(title); m != nil {
			d.numbers[m[1]] = true
			title = strings.TrimSpace(title[len(m[0]):])
		}
		d.titles[strings.ToLower(markup.Replace(title))] = true
	}
	d.text = collapse(markup.Replace(src))
	return d
}

func collapse(s string) string { return strings.Join(strings.Fields(s), " ") }

// flatFile is a source file with each line's comment marker removed and the
// lines joined by one space, so that a citation broken across comment lines
// reads as one.
type flatFile struct {
	text   string
	starts []int // offset in text of each line's start
}

func flatten(src string) flatFile {
	var b strings.Builder
	var starts []int
	for _, line := range strings.Split(src, "\n") {
		t := strings.TrimSpace(line)
		for _, p := range []string{"//", "--", "/*", "*"} {
			if strings.HasPrefix(t, p) {
				t = strings.TrimSpace(t[len(p):])
				break
			}
		}
		starts = append(starts, b.Len())
		b.WriteString(t)
		b.WriteByte(' ')
	}
	return flatFile{text: b.String(), starts: starts}
}

func (f flatFile) line(off int) int {
	return sort.Search(len(f.starts), func(i int) bool { return f.starts[i] > off })
}

// citationProblem is one bad citation at a 1-based line.
type citationProblem struct {
	line int
	msg  string
}

// checkCitations returns the bad citations of one source file and how many
// citations it checked.
func checkCitations(src string, docs *docSet) (problems []citationProblem, checked int) {
	f := flatten(src)
	add := func(off int, format string, args ...any) {
		problems = append(problems, citationProblem{f.line(off), fmt.Sprintf(format, args...)})
	}
	for _, m := range numberedCite.FindAllStringSubmatchIndex(f.text, -1) {
		checked++
		name, cite := f.text[m[2]:m[3]], f.text[m[0]:m[1]]
		d, missing := docs.get(name)
		if d == nil {
			add(m[0], "%s: %s", cite, missing)
			continue
		}
		refs := []string{f.text[m[4]:m[5]]}
		prev := refs[0]
		for _, t := range citeTail.FindAllStringSubmatch(f.text[m[6]:m[7]], -1) {
			sep, n := strings.TrimSpace(t[1]), t[2]
			if sep == "–" || sep == "-" {
				refs = append(refs, rangeBetween(prev, n)...)
			}
			refs = append(refs, n)
			prev = n
		}
		for _, r := range refs {
			if !d.numbers[r] {
				add(m[0], "%s: %s.md has no section %s", cite, name, r)
			}
		}
	}
	for _, m := range quotedCite.FindAllStringSubmatchIndex(f.text, -1) {
		checked++
		name, title, cite := f.text[m[2]:m[3]], f.text[m[4]:m[5]], f.text[m[0]:m[1]]
		d, missing := docs.get(name)
		if d == nil {
			add(m[0], "%s: %s", cite, missing)
			continue
		}
		if !d.titles[strings.ToLower(collapse(title))] && !strings.Contains(d.text, collapse(title)) {
			add(m[0], "%s: %s.md has no heading or phrase %q", cite, name, title)
		}
	}
	for _, m := range readmeCite.FindAllStringSubmatchIndex(f.text, -1) {
		checked++
		title, cite := f.text[m[2]:m[3]], f.text[m[0]:m[1]]
		d, missing := docs.get("README")
		if d == nil {
			add(m[0], "%s: %s", cite, missing)
			continue
		}
		if !d.titles[strings.ToLower(collapse(title))] && !strings.Contains(d.text, collapse(title)) {
			add(m[0], "%s: README.md has no heading or phrase %q (the README is the front page; the guides are in docs/)", cite, title)
		}
	}
	for _, re := range foreignCites {
		for _, m := range re.FindAllStringIndex(f.text, -1) {
			add(m[0], "%q cites a document outside the repository; cite docs/protocol.md, docs/api.md or docs/architecture.md", f.text[m[0]:m[1]])
		}
	}
	return problems, checked
}

// rangeBetween returns the sections strictly between a and b when both are
// siblings ("4.2" and "4.4" give "4.3"); nothing otherwise.
func rangeBetween(a, b string) []string {
	pa, pb := strings.Split(a, "."), strings.Split(b, ".")
	if len(pa) != len(pb) || strings.Join(pa[:len(pa)-1], ".") != strings.Join(pb[:len(pb)-1], ".") {
		return nil
	}
	x, err1 := strconv.Atoi(pa[len(pa)-1])
	y, err2 := strconv.Atoi(pb[len(pb)-1])
	if err1 != nil || err2 != nil || y-x > 50 {
		return nil
	}
	prefix := strings.Join(pa[:len(pa)-1], ".")
	if prefix != "" {
		prefix += "."
	}
	var out []string
	for i := x + 1; i < y; i++ {
		out = append(out, prefix+strconv.Itoa(i))
	}
	return out
}

// citingFile reports whether the walk checks the citations of the file.
func citingFile(name string) bool {
	switch filepath.Ext(name) {
	case ".go", ".sql", ".proto", ".js", ".mjs", ".md":
		return true
	}
	return false
}

// skipDir reports whether the walks of the docs tests skip a directory.
func skipDir(name string) bool {
	switch name {
	case "node_modules", "testdata", "dist", "bin", ".git":
		return true
	}
	return false
}

func TestDocsCitations(t *testing.T) {
	root, err := filepath.Abs("..")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(root, "go.mod")); err != nil {
		t.Fatalf("module root not found: %v", err)
	}
	self, _ := filepath.Abs("docs_test.go")
	docs := &docSet{root: root, docs: map[string]*docIndex{}}
	files, total := 0, 0
	err = filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			if skipDir(d.Name()) {
				return filepath.SkipDir
			}
			return nil
		}
		if !citingFile(path) {
			return nil
		}
		if path == self {
			return nil // its patterns and examples are not citations
		}
		b, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		files++
		problems, n := checkCitations(string(b), docs)
		total += n
		rel, _ := filepath.Rel(root, path)
		for _, p := range problems {
			t.Errorf("%s:%d: %s", filepath.ToSlash(rel), p.line, p.msg)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if files < 50 || total < 50 {
		t.Fatalf("only %d files and %d citations checked; the walk is broken", files, total)
	}
	t.Logf("%d citations in %d files checked", total, files)
}

// TestDocsCitationChecker shows that the check fails on what it must refuse
// and passes what it must accept, against the real docs.
func TestDocsCitationChecker(t *testing.T) {
	root, err := filepath.Abs("..")
	if err != nil {
		t.Fatal(err)
	}
	docs := &docSet{root: root, docs: map[string]*docIndex{}}
	for _, tc := range []struct {
		src  string
		bad  int // problems expected
		line int // line of the first problem
	}{
		{"// ok (protocol.md §1, §6)", 0, 0},
		{"// ok (api.md §2.8, §2.9; api.md §2.8/2.9)", 0, 0},
		{"// ok api.md §4.2–4.4, §5.8 and docs/api.md §5.13", 0, 0},
		{"// ok (architecture.md \"The\n// relay\": after routing)", 0, 0},
		{"-- ok (architecture.md \"encode once per wire format, lazily\")", 0, 0},
		{"// ok docs/api.md \"Conventions\"", 0, 0},
		{"// bad protocol.md §99", 1, 1},
		{"x := 1\n// bad api.md §5.14", 1, 2},
		{"// bad api.md §2.8, §2.99", 1, 1},
		{"// bad api.md §4.1–4.9", 3, 1}, // 4.7, 4.8 (inside the range) and 4.9 do not exist
		{"// bad architecture.md \"The hot loop\"", 1, 1},
		{"// bad docs/nowhere.md \"Logs\"", 1, 1},
		{"// bad (wire\n// §3)", 1, 1},
		{"// bad (spec 4.2)", 1, 1},
		{"// bad Spec part 5 rule 12", 1, 1},
		{"// bad see shapes.md", 1, 1},
		{"// bad ARCHITECTURE \"Storage\"", 1, 1},
		{"// bad the project's notes on the CoT wire protocol", 1, 1},
		{"// ok (README \"Five minutes to a\n// connected team\")", 0, 0},
		{"// ok README's \"Set up\"; docs/operations.md \"Free disk space\"", 0, 0},
		{"// bad (README \"Free disk space\": moved to docs/operations.md)", 1, 1},
		{"x := 1\n// bad operations.md \"Ports\"", 1, 2},
	} {
		problems, _ := checkCitations(tc.src, docs)
		if len(problems) != tc.bad {
			t.Errorf("%q: %d problems %v, want %d", tc.src, len(problems), problems, tc.bad)
			continue
		}
		if tc.bad > 0 && problems[0].line != tc.line {
			t.Errorf("%q: problem reported at line %d, want %d", tc.src, problems[0].line, tc.line)
		}
	}
}

// mdLink is an inline Markdown link or image: [text](target).
var mdLink = regexp.MustCompile(`\]\(([^)\s]+)\)`)

// headingSlugs are the anchors GitHub gives the headings of a Markdown
// document: lower case, punctuation dropped, spaces as hyphens.
func headingSlugs(src string) map[string]bool {
	slugs := map[string]bool{}
	inFence := false
	for _, line := range strings.Split(src, "\n") {
		if strings.HasPrefix(strings.TrimSpace(line), "```") {
			inFence = !inFence
			continue
		}
		if inFence || !strings.HasPrefix(line, "#") {
			continue
		}
		title := strings.ToLower(strings.TrimSpace(strings.TrimLeft(line, "#")))
		var b strings.Builder
		for _, r := range title {
			switch {
			case r == ' ':
				b.WriteByte('-')
			case r == '-' || r == '_' || unicode.IsLetter(r) || unicode.IsDigit(r):
				b.WriteRune(r)
			}
		}
		slugs[b.String()] = true
	}
	return slugs
}

// TestDocsLinks: every relative link and image of the repository's Markdown
// files (outside code blocks) names a file that exists, and an anchor names
// a heading of its document.
func TestDocsLinks(t *testing.T) {
	root, err := filepath.Abs("..")
	if err != nil {
		t.Fatal(err)
	}
	links := 0
	err = filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			if skipDir(d.Name()) {
				return filepath.SkipDir
			}
			return nil
		}
		if filepath.Ext(path) != ".md" {
			return nil
		}
		b, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(root, path)
		inFence := false
		for n, line := range strings.Split(string(b), "\n") {
			if strings.HasPrefix(strings.TrimSpace(line), "```") {
				inFence = !inFence
				continue
			}
			if inFence {
				continue
			}
			for _, m := range mdLink.FindAllStringSubmatch(line, -1) {
				target := m[1]
				if strings.Contains(target, "://") || strings.HasPrefix(target, "mailto:") {
					continue
				}
				links++
				file, anchor, _ := strings.Cut(target, "#")
				dest := path
				if file != "" {
					dest = filepath.Join(filepath.Dir(path), filepath.FromSlash(file))
				}
				src, err := os.ReadFile(dest)
				if err != nil {
					if st, serr := os.Stat(dest); serr == nil && st.IsDir() && anchor == "" {
						continue
					}
					t.Errorf("%s:%d: link %q: %s does not exist", filepath.ToSlash(rel), n+1, target, file)
					continue
				}
				if anchor != "" && !headingSlugs(string(src))[anchor] {
					t.Errorf("%s:%d: link %q: no heading with the anchor #%s", filepath.ToSlash(rel), n+1, target, anchor)
				}
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if links < 50 {
		t.Fatalf("only %d links checked; the walk is broken", links)
	}
	t.Logf("%d links checked", links)
}
