package web_test

import (
	"bytes"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"testing"

	"outpost/internal/testkit"
	"outpost/web"
)

// TestDistUpToDate rebuilds the console from web/src into a temporary
// directory and compares it, file by file, with the committed web/dist that
// the binary embeds: a source change without `make build` (or
// `npm run build` in web/) fails here. It needs node and web/node_modules
// (esbuild); without them it skips, or fails where tools are required
// (testkit.MissingTool).
func TestDistUpToDate(t *testing.T) {
	root := filepath.Join(testkit.ModuleRoot(t), "web")
	node, err := exec.LookPath("node")
	if err == nil {
		_, err = os.Stat(filepath.Join(root, "node_modules", "esbuild"))
	}
	if err != nil {
		testkit.MissingTool(t, "node or web/node_modules is missing ("+err.Error()+")")
	}
	out := t.TempDir()
	cmd := exec.Command(node, "build.mjs", out)
	cmd.Dir = root
	if b, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("build: %v\n%s", err, b)
	}
	built := readTree(t, os.DirFS(out))
	committed := readTree(t, web.FS())
	for name, b := range built {
		c, ok := committed[name]
		switch {
		case !ok:
			t.Errorf("%s: built from the sources but not in web/dist", name)
		case !bytes.Equal(b, c):
			t.Errorf("%s: web/dist differs from a build of the sources", name)
		}
	}
	for name := range committed {
		if _, ok := built[name]; !ok {
			t.Errorf("%s: in web/dist but no longer built from the sources", name)
		}
	}
	if t.Failed() {
		t.Log("rebuild the console: `make build` (or `cd web && npm run build`) and commit web/dist")
	}
}

func readTree(t *testing.T, fsys fs.FS) map[string][]byte {
	t.Helper()
	out := map[string][]byte{}
	err := fs.WalkDir(fsys, ".", func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		b, err := fs.ReadFile(fsys, p)
		out[p] = b
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	names := make([]string, 0, len(out))
	for n := range out {
		names = append(names, n)
	}
	sort.Strings(names)
	if len(names) == 0 {
		t.Fatal("no files")
	}
	return out
}
