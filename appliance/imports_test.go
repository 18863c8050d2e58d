package appliance

import (
	"go/parser"
	"go/token"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"testing"
)

const module = "outpost/"

// allowedImports is docs/architecture.md's import rules: for each package of
// ours (relative to the module root), the packages of ours it may import
// from non-test files. Packages not listed here fail the test, so a new
// package must take a place in the rules.
var allowedImports = map[string][]string{
	"appliance/cot":                 {"appliance/cot/takproto"},
	"appliance/logx":                {},
	"appliance/atomicfile":          {},
	"appliance/fault":               {},
	"appliance/rate":                {},
	"appliance/httpapi":             {"appliance/cot", "appliance/diskspace", "appliance/netx"},
	"appliance/cot/takproto":        {},
	"appliance/geo":                 {},
	"appliance/config":              {"appliance/diskspace"},
	"appliance/diskspace":           {},
	"appliance/pki":                 {"appliance/logx"},
	"web":                           {},
	"appliance/service":             {},
	"appliance/broker":              {"appliance/cot", "appliance/logx"},
	"appliance/store":               {"appliance/cot", "appliance/logx", "appliance/rate", "appliance/diskspace"},
	"appliance/takclient":           {"appliance/cot"},
	"cmd/outpost-load":              {"appliance/cot", "appliance/takclient", "appliance/sysinfo"},
	"appliance/objects":             {"appliance/broker", "appliance/store", "appliance/cot", "appliance/geo", "appliance/logx"},
	"appliance/excheck":             {"appliance/cot"},
	"appliance/cotsession":          {"appliance/broker", "appliance/cot", "appliance/logx", "appliance/rate"},
	"appliance/mesh":                {"appliance/broker", "appliance/config", "appliance/cot", "appliance/cotsession", "appliance/logx", "appliance/rate"},
	"appliance/federation":          {"appliance/broker", "appliance/cot", "appliance/cotsession", "appliance/logx", "appliance/federation/fedproto"},
	"appliance/federation/fedproto": {},
	"appliance/access":              {"appliance/store", "appliance/httpapi", "appliance/rate"},
	"appliance/users":               {"appliance/store", "appliance/pki", "appliance/qr"},
	"appliance/admin":               {"appliance/config", "appliance/store", "appliance/pki", "appliance/users", "appliance/qr", "appliance/netx"},
	"appliance/identity":            {"appliance/access", "appliance/broker", "appliance/cotsession", "appliance/logx", "appliance/store"},
	"appliance/fedhost": {"appliance/access", "appliance/admin", "appliance/broker", "appliance/config", "appliance/federation", "appliance/logx",
		"appliance/marti", "appliance/mgmt", "appliance/netx", "appliance/pki", "appliance/store"},
	"appliance/metrics": {"appliance/broker", "appliance/diskspace", "appliance/federation", "appliance/httpapi", "appliance/marti", "appliance/mesh",
		"appliance/netx", "appliance/store", "appliance/stream"},
	"appliance/qr":            {},
	"appliance/stream":        append([]string{"appliance/cotsession"}, transportDeps...),
	"appliance/mgmt":          append([]string{"appliance/mgmt/socketio", "appliance/sysinfo", "appliance/objects", "appliance/access", "appliance/users", "appliance/qr"}, transportDeps...),
	"appliance/mgmt/socketio": {"appliance/logx"},
	"appliance/sysinfo":       {},
	"appliance/marti":         append([]string{"appliance/excheck", "appliance/cotsession", "appliance/access", "appliance/users", "appliance/qr"}, transportDeps...),
	"appliance": {"appliance/config", "appliance/broker", "appliance/store", "appliance/cot", "appliance/pki", "appliance/geo", "appliance/stream", "appliance/mgmt", "appliance/marti",
		"appliance/objects", "appliance/logx", "appliance/httpapi", "appliance/netx", "web", "appliance/access", "appliance/users", "appliance/admin",
		"appliance/diskspace", "appliance/mesh", "appliance/federation", "appliance/identity", "appliance/fedhost", "appliance/metrics"},
	"appliance/netx": {"appliance/logx"},
	// Test support: imported by test files only (testOnly below).
	"internal/testkit":  {},
	"appliance/apptest": {"appliance", "appliance/config", "appliance/netx", "appliance/takclient", "internal/testkit"},
	// Test-only packages (no non-test files).
	"appliance/hostile":  {"appliance/cot", "appliance/store"},
	"appliance/diskfull": {"appliance/cot"},
	"appliance/soak":     {},
	"appliance/journey":  {"appliance/cot"},
	// The end-to-end tests of the whole appliance and of several servers
	// (test files only): what they speak to and check.
	"appliance/e2e": {"appliance", "appliance/config", "appliance/admin", "appliance/diskspace", "appliance/cot", "appliance/store", "appliance/netx", "appliance/mesh", "appliance/federation", "appliance/federation/fedproto",
		"appliance/fedhost", "appliance/pki", "appliance/access", "appliance/broker", "appliance/sysinfo", "appliance/httpapi", "appliance/users", "appliance/qr"},
	"cmd/outpost": {"appliance", "appliance/admin", "appliance/config", "appliance/fedhost", "appliance/netx", "appliance/service", "systemd"},
	// The systemd unit, embedded for `outpost service install`.
	"systemd": {},
	// Smoke tests of the cross-compiled binaries (test files only).
	"appliance/smoke": {"appliance/cot"},
	// Build tool (its own module): builds the .deb packages with nfpm.
	"scripts/mkdeb": {},
}

// leaves import nothing of this module, and any package of the server may
// import them (tests, the load tool and the build tool need no exception).
var leaves = []string{"appliance/logx", "appliance/atomicfile", "appliance/fault"}

var transportDeps = []string{"appliance/broker", "appliance/store", "appliance/cot", "appliance/geo", "appliance/pki", "appliance/logx", "appliance/httpapi", "appliance/netx", "appliance/rate", "appliance/diskspace"}

// testOnly are packages any test file may also import.
var testOnly = []string{"appliance/takclient", "internal/testkit", "appliance/apptest"}

// endToEndOnly are packages an external test package (package x_test) may
// also import: its end-to-end tests run the whole appliance through apptest,
// which takes a *config.Config, and name listeners (netx) and files (admin).
var endToEndOnly = []string{"appliance", "appliance/config", "appliance/admin", "appliance/netx"}

func TestImportRules(t *testing.T) {
	root, err := filepath.Abs("..")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(root, "go.mod")); err != nil {
		t.Fatalf("module root not found: %v", err)
	}
	fset := token.NewFileSet()
	checked := 0
	err = filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			switch d.Name() {
			case "node_modules", "testdata", "dist", "bin", ".git":
				return filepath.SkipDir
			}
			return nil
		}
		if !strings.HasSuffix(path, ".go") {
			return nil
		}
		rel, _ := filepath.Rel(root, filepath.Dir(path))
		pkg := filepath.ToSlash(rel)
		f, err := parser.ParseFile(fset, path, nil, parser.ImportsOnly)
		if err != nil {
			return err
		}
		allowed, known := allowedImports[pkg]
		if !known {
			t.Errorf("%s: package %q has no place in the import rules (docs/architecture.md)", path, pkg)
			return nil
		}
		isTest := strings.HasSuffix(path, "_test.go")
		for _, imp := range f.Imports {
			p, _ := strconv.Unquote(imp.Path.Value)
			if !strings.HasPrefix(p, module) {
				continue
			}
			dep := strings.TrimPrefix(p, module)
			if dep == pkg || contains(allowed, dep) || (contains(leaves, dep) && !contains(leaves, pkg)) || (isTest && contains(testOnly, dep)) ||
				(isTest && strings.HasSuffix(f.Name.Name, "_test") && contains(endToEndOnly, dep)) {
				continue
			}
			t.Errorf("%s imports %s: not allowed for %s (allowed: %v)", rel+"/"+filepath.Base(path), dep, pkg, sorted(allowed))
		}
		checked++
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if checked < 20 {
		t.Fatalf("only %d files checked; the walk is broken", checked)
	}
}

func contains(list []string, s string) bool {
	for _, v := range list {
		if v == s {
			return true
		}
	}
	return false
}

func sorted(l []string) []string {
	out := append([]string(nil), l...)
	sort.Strings(out)
	return out
}
