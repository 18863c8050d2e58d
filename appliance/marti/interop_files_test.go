package marti_test

import (
	"fmt"
	"slices"
	"strings"
	"testing"

	"outpost/appliance/netx"
	"outpost/internal/testkit"
)

// TestNodeTakFiles drives the file and subscription routes with
// @tak-ps/node-tak 8.9.0 on both listeners (marti-files.mjs): Files.meta,
// Package.list, the /Marti/api search, the file manager's list, count and
// configuration, Subscription.list and Files.delete, each answer checked
// against node-tak's own schemas.
//
// node-tak's Content and Package schemas ask for PrimaryKey and Size as
// strings, as the official server writes them. Where the interface leaves
// the type open Outpost follows the official server: Files.meta's record
// (a route the interface does not describe) must match both schemas
// exactly, and so must the search's PrimaryKey (api.md §2.9: "integer or
// string"). The search's Size stays the integer that §2.9 fixes
// (docs/api-marti.md "The sync record"): that path, and only in the
// search, may differ.
func TestNodeTakFiles(t *testing.T) {
	testkit.RequireInterop(t, "@tak-ps/node-tak")
	e := start(t, nil)
	storedSA(t, e, "ANDROID-FILES", "FCALL")
	certFile, keyFile := writePEM(t, e, "nodefiles")
	accepted := map[string][]string{"list": {"/Size"}}
	owner := e.certHolder(t, "nodefiles") // on 8443 the files are node-tak's own, which it may delete
	for i, l := range both {
		upload := func(name, content string) record {
			t.Helper()
			resp := e.doAs(t, owner.hc, l, "POST", "/Marti/sync/upload?filename="+name+"&creatorUid=NODE-FILES", content, "Content-Type", "text/plain")
			if resp.Status != 200 {
				t.Fatalf("upload %s: %d %s", name, resp.Status, resp.Body)
			}
			return decodeRecord(t, resp.Body)
		}
		meta := upload(fmt.Sprintf("node-meta-%d.txt", i), "described by node-tak on "+l)
		gone := upload(fmt.Sprintf("node-gone-%d.txt", i), "deleted by node-tak on "+l)
		env := []string{"OUTPOST_URL=" + strings.TrimSuffix(e.URL(t, l, "/"), "/"), "META_HASH=" + meta.Hash, "META_UID=" + meta.UID,
			"DELETE_HASH=" + gone.Hash, "CONTACT_UID=ANDROID-FILES"}
		if l == netx.ListenerHTTPS {
			env = append(env, "CERT="+certFile, "KEY="+keyFile)
		}
		steps := runNode(t, "marti-files.mjs", env...)
		for _, name := range []string{"meta", "list", "apisearch", "files", "count", "config", "subscriptions", "delete", "done"} {
			s, ok := steps[name]
			if !ok || !s.OK {
				t.Errorf("%s step %s: %+v", l, name, s)
				continue
			}
			for _, d := range s.Deviations {
				if !slices.Contains(accepted[name], d) {
					t.Errorf("%s step %s: %s differs from node-tak's schema", l, name, d)
				}
			}
		}
		if _, err := e.Store().Files().DataPackageByHash(t.Context(), gone.Hash); err == nil {
			t.Errorf("%s: node-tak's delete left the file", l)
		}
	}
}
